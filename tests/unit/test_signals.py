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
    assert out.stderr == "kubelab: --machines '0': out of range; allowed: an integer 1..16\n"


SWALLOWED = textwrap.dedent("""
    import os, signal, sys
    from harness import signals
    from harness.model import Check, ProbeRef
    from harness.probes import Reading
    from harness.scenario.checks import evaluate

    class Swallowing:
        # like kubernetes' ws_client: a KeyboardInterrupt comes back as an ordinary error
        poll_interval = 0.01
        def command(self, ctx):
            return "exec"
        def observe(self, remote, command):
            try:
                os.kill(os.getpid(), signal.SIGTERM)
            except KeyboardInterrupt:
                pass
            return Reading(None, "API not answering: status 0"), None

    signals.install()
    check = Check(name="c", probe=ProbeRef("dns", {}), equals="answered", within=30.0)
    try:
        evaluate(check, None, probe=Swallowing())
        print("kept polling")
    except KeyboardInterrupt as exc:
        signals.handled()
        signals.raise_if_stopped()  # quiet once handled
        print("stopped by", exc)
""")


def test_a_stop_swallowed_by_a_library_still_ends_the_poll_loop():
    out = subprocess.run([sys.executable, "-c", SWALLOWED], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "stopped by SIGTERM", out.stderr


# A benchmark under signals.run: its first run answers SIGTERM by tearing down and returning (as
# Engine.run does); stop_if_signalled() then ends the script with the signal's exit code.
SCRIPT_RUN = textwrap.dedent("""
    import os, signal, time
    from harness import signals

    def one_run(n):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        except KeyboardInterrupt:
            signals.handled()
            print("run", n, "tore down")

    def main():
        for n in (1, 2):
            one_run(n)
            signals.stop_if_signalled()
        print("went on")

    raise SystemExit(signals.run(main))
""")


def test_a_script_under_signals_run_makes_nothing_after_a_stopped_run_and_exits_with_the_signal():
    out = subprocess.run([sys.executable, "-c", SCRIPT_RUN], capture_output=True, text=True, timeout=60)
    assert out.stdout.split("\n")[:2] == ["run 1 tore down", ""], out
    assert out.returncode == 128 + signal.SIGTERM and "interrupted (SIGTERM)" in out.stderr
