"""Stop signals become a KeyboardInterrupt in a real process, even when SIGINT was inherited
as ignored; a second one does not break the cleanup."""

import signal
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    from harness import signals
    signals.install()
    try:
        os.kill(os.getpid(), signal.{name})
        time.sleep(5)
        print("no interrupt")
    except KeyboardInterrupt as exc:
        os.kill(os.getpid(), signal.{name})  # a second signal during the cleanup
        time.sleep(0.2)
        print("cleaned up after", exc)
        sys.exit(signals.exit_code(exc))
""")


def run(name: str, ignore_sigint: bool = False) -> subprocess.CompletedProcess:
    pre = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    return subprocess.run([sys.executable, "-c", SCRIPT.format(name=name)], capture_output=True, text=True,
                          timeout=60, preexec_fn=pre)


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_each_stop_signal_interrupts_once_and_cleanup_finishes(name):
    out = run(name)
    assert out.stdout.strip() == f"cleaned up after {name}"
    assert out.returncode == 128 + signal.Signals[name]
    assert "still cleaning up" in out.stderr


def test_sigint_inherited_as_ignored_is_handled_again():
    out = run("SIGINT", ignore_sigint=True)
    assert out.stdout.strip() == "cleaned up after SIGINT" and out.returncode == 130


def test_bad_input_to_a_task_exits_2_not_1():
    """1 means "expectation not met"; refused input is 2, with the message."""
    from pathlib import Path

    invoke = Path(sys.executable).with_name("invoke")
    out = subprocess.run([str(invoke), "lab.up", "--machines", "0"], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 2, out.stderr
    assert "--machines 0: must be 1..16" in out.stderr
