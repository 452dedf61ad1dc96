"""Commands run on the host (kubespray's ansible-playbook): real processes, their output
streamed, their whole process group stopped at the timeout or on an interrupt."""

import os
import signal
import sys
import threading
import time

import pytest

from harness.host_command import HOST, HostCommand, run
from harness.scenario.plan import Step


def shell(script: str, tmp_path, **env) -> HostCommand:
    return HostCommand(argv=("bash", "-c", script), cwd=tmp_path, env=env)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_output_streams_line_by_line_and_the_exit_code_is_kept(tmp_path):
    seen = []
    result = run(shell('echo "PLAY [k8s]"; pwd; echo "$KUBELAB_X" >&2; exit 3', tmp_path, KUBELAB_X="from kubelab"),
                 timeout=30, on_line=seen.append)
    assert (result.host, result.exit_code) == (HOST, 3)
    assert seen == ["PLAY [k8s]", str(tmp_path), "from kubelab"]  # stderr merged, in order, the folder its cwd
    assert result.stdout == "PLAY [k8s]\n" + str(tmp_path) + "\nfrom kubelab\n"
    assert result.command.startswith(f"cd {tmp_path} && KUBELAB_X='from kubelab' bash -c ")


def test_the_path_prefix_goes_first_and_the_hosts_environment_stays(tmp_path):
    (tmp_path / "bin").mkdir()
    tool = tmp_path / "bin" / "only-in-the-venv"
    tool.write_text("#!/bin/sh\necho found\n")
    tool.chmod(0o755)
    cmd = HostCommand(argv=("bash", "-c", "only-in-the-venv; echo $HOME"), cwd=tmp_path, path_prefix=str(tmp_path / "bin"))
    assert run(cmd, timeout=30).stdout == f"found\n{os.environ['HOME']}\n"
    assert cmd.shown().endswith(f"PATH={tmp_path}/bin:\"$PATH\" bash -c 'only-in-the-venv; echo $HOME'")


def test_at_the_timeout_the_command_and_its_children_are_stopped(tmp_path):
    pidfile = tmp_path / "child"
    script = f'sleep 300 & echo $! > {pidfile}; echo started; wait'
    started = time.monotonic()
    result = run(shell(script, tmp_path), timeout=2)
    assert result.exit_code is None and result.stdout == "started\n"
    assert time.monotonic() - started < 60
    child = int(pidfile.read_text())
    for _ in range(50):
        if not alive(child):
            break
        time.sleep(0.1)
    assert not alive(child), "the command's child outlived its timeout"


def test_an_interrupt_stops_the_command_and_its_children_then_goes_on_up(tmp_path):
    pidfile = tmp_path / "child"
    script = f'sleep 300 & echo $! > {pidfile}; wait'
    # Python's own SIGINT handler: kubelab's (harness/signals.py) would remember the stop for
    # the tests after this one
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run(shell(script, tmp_path), timeout=120)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, before)
    child = int(pidfile.read_text())
    for _ in range(50):
        if not alive(child):
            break
        time.sleep(0.1)
    assert not alive(child)


def test_a_host_step_prints_its_whole_command_and_sends_nothing_to_a_machine(tmp_path):
    cmd = HostCommand(argv=(sys.executable, "-V"), cwd=tmp_path, env={"ANSIBLE_HOST_KEY_CHECKING": "True"})
    step = Step("install", HOST, "host-run", "ansible-playbook cluster.yml", host=cmd, timeout=3600,
                note="kubespray cluster.yml")
    assert step.commands() == []
    assert step.line() == (f"[install] host: cd {tmp_path} && ANSIBLE_HOST_KEY_CHECKING=True {sys.executable} -V"
                           "    # kubespray cluster.yml, up to 3600s")
