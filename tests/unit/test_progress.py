"""Progress output never stops the work it reports on."""

import io
import os
import time

from harness.progress import Progress, one_line
from harness.scenario.engine import observation_line


class GonePipe(io.StringIO):
    """A stream whose reader has gone: what a killed parent leaves a run writing to."""

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


def test_a_broken_pipe_silences_progress_and_the_work_goes_on():
    progress = Progress(stream=GonePipe())
    progress.note("teardown ...")  # would have raised, and ended a teardown halfway
    with progress.step("machine cp1: destroy"):
        pass
    assert progress.quiet


def test_a_closed_stream_silences_progress():
    stream = io.StringIO()
    progress = Progress(stream=stream)
    progress.note("first")
    assert "first" in stream.getvalue()
    stream.close()
    progress.note("second")
    assert progress.quiet


INIT_LOG = "[init] Using Kubernetes version: v1.36.3\n" + "".join(
    f"[preflight] line {i} of what kubeadm init printed\n" for i in range(57))


def test_a_multi_line_reading_is_one_console_line_with_a_count():
    assert one_line(INIT_LOG, "in the record") == \
        "[init] Using Kubernetes version: v1.36.3 (+57 lines in the record)"
    assert one_line("\n\nfirst\nsecond") == "first (+1 more line)"
    assert one_line("x" * 500).endswith("…") and len(one_line("x" * 500)) == 160
    assert one_line("") == ""


def test_an_absent_check_on_a_file_prints_the_first_line_of_the_file_not_the_file():
    obs = {"phase": "expect", "check": "init-has-no-br-netfilter-check", "machine": "cp1", "met": True,
           "matched": "", "value": INIT_LOG}
    assert observation_line(obs) == ("expect: init-has-no-br-netfilter-check on cp1: met: "
                                     "[init] Using Kubernetes version: v1.36.3 (+57 lines in the record)")
    assert observation_line({**obs, "met": False, "matched": "[ERROR FileContent--proc-sys-net-ipv4-ip_forward]: x",
                             "value": INIT_LOG}).endswith("NOT met: [ERROR FileContent--proc-sys-net-ipv4-ip_forward]: x")
    assert observation_line({**obs, "met": None, "value": 3}).endswith("recorded: 3")


def test_every_note_is_one_line():
    stream = io.StringIO()
    Progress(stream=stream).note("phase failed: first\n  traceback line\n  another")
    assert stream.getvalue().count("\n") == 1 and "first (+2 more lines)" in stream.getvalue()


def test_a_long_step_in_a_log_says_it_is_still_running_with_its_latest_detail():
    stream = io.StringIO()
    progress = Progress(stream=stream, heartbeat=0.2, tick=0.05)
    with progress.step("kubelet: go build k8s.io/kubernetes/cmd/kubelet"):
        progress.update("go: downloading k8s.io/api v0.36.3")
        time.sleep(0.5)
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith("kubelet: go build k8s.io/kubernetes/cmd/kubelet ...")
    beats = [line for line in lines if "still running after" in line]
    assert beats and beats[0].endswith("(go: downloading k8s.io/api v0.36.3)")
    assert "kubelet: go build k8s.io/kubernetes/cmd/kubelet: done in" in lines[-1]


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_on_a_terminal_the_live_line_counts_the_seconds_and_never_wraps(monkeypatch):
    monkeypatch.setattr("shutil.get_terminal_size", lambda fallback=None: os.terminal_size((60, 24)))
    stream = Terminal()
    progress = Progress(stream=stream, tick=0.05)
    with progress.activity("expect: waiting for both-nodes-ready on cluster (equals 2, up to 600s)"):
        progress.update("poll 3, last: cp1 Ready=True\nw1 Ready=False KubeletNotReady")
        time.sleep(0.2)
    redraws = [part for part in stream.getvalue().split("\r\033[K") if part]
    assert len(redraws) >= 3  # drawn, updated, redrawn by the tick
    assert all("\n" not in part and len(part) <= 60 for part in redraws)
    assert redraws[0].split("] ", 1)[1].startswith("expect: waiting for both-nodes-ready on cluster")
