"""Option kinds and `checked`: conversion, one-line refusals that name the option and what
is allowed, and the task edge's exit codes for every way a task can end."""

import sys
from pathlib import Path

import pytest
from invoke import Exit

from harness.cli_options import (Choice, CommaList, Glob, Integer, Positive, Several, WritableFile, WritableFolder,
                                 ExistingFile, checked, flag, writable_folder_problem)
from harness.cli_values import CONTAINERD, KUBERNETES, SCENARIO
from harness.errors import BuildFailed, UsageError
from harness.paths import project_root


def refusal(kind, option, raw) -> str:
    with pytest.raises(UsageError) as info:
        kind.check(option, raw)
    return str(info.value)


def test_flags_are_what_invoke_makes_of_parameters():
    assert [flag(p) for p in ("dry_run", "json_", "all_", "max_vcpus")] == ["--dry-run", "--json", "--all",
                                                                         "--max-vcpus"]


def test_numbers_are_converted_or_refused_with_the_range():
    assert Integer(1, 16).check("machines", "3") == 3
    assert refusal(Integer(1, 16), "machines", "17") == "--machines '17': out of range; allowed: an integer 1..16"
    assert refusal(Integer(1), "max_vcpus", "abc") == "--max-vcpus 'abc': not an integer; allowed: an integer at least 1"
    assert Positive("minutes").check("deadline", "2.5") == 2.5
    for bad in ("0", "-1", "nan", "inf", "x"):
        assert refusal(Positive("minutes"), "deadline", bad).endswith("allowed: a number greater than 0 (minutes)")


def test_an_option_not_given_stays_none():
    assert Integer(1).check("max_vcpus", None) is None


def test_lists_take_extras_and_check_each_item():
    rows = CommaList(KUBERNETES, extra=("host",))
    assert rows.check("kubernetes", "1.35.4, host,1.35.4") == ("1.35.4", "host")
    text = refusal(rows, "kubernetes", "1.36.3,1.20.0")
    assert text.startswith("--kubernetes 1.20.0: kubelab builds Kubernetes 1.34, 1.35, 1.36, 1.37")
    assert "\n" not in text and "allowed: " in text
    assert refusal(CommaList(Choice("a", "b")), "suite", " , ") == \
        "--suite ' , ': give at least one value; allowed: comma-separated, each a, b"
    assert CommaList(Choice("a"), empty_ok=True).check("suite", "") == ()
    assert CONTAINERD.check("containerd", "v2.3.1") == "2.3.1"


def test_a_harness_check_message_becomes_one_line_with_what_is_allowed():
    text = refusal(SCENARIO, "name", "no-such-scenario")
    assert text.startswith("--name 'no-such-scenario': no scenario `no-such-scenario`") and "\n" not in text
    assert text.endswith("allowed: a scenario name (scenarios/NAME.yaml) or a path to one")


def test_paths_are_tried_not_read_from_mode_bits(tmp_path):
    assert writable_folder_problem(tmp_path / "a" / "b") == ""
    assert not (tmp_path / "a").exists()  # trying left nothing behind
    assert writable_folder_problem(tmp_path) == ""
    assert "cannot be made in /proc" in writable_folder_problem(Path("/proc/kubelab"))
    assert writable_folder_problem(Path("/dev/null/x")) == "/dev/null is not a folder"
    assert WritableFolder().check("out", str(tmp_path / "new")) == tmp_path / "new"
    assert WritableFile().check("output", str(tmp_path / "x.yml")) == tmp_path / "x.yml"
    assert refusal(WritableFile(), "output", str(tmp_path)).startswith(f"--output '{tmp_path}': a folder")
    (tmp_path / "m.json").write_text("{}")
    assert Glob().check("parts", str(tmp_path / "*.json")) == [tmp_path / "m.json"]
    assert Several(ExistingFile()).check("files", [str(tmp_path / "m.json")]) == [tmp_path / "m.json"]
    assert "no such file" in refusal(Several(ExistingFile()), "files", [str(tmp_path / "none.yaml")])


def test_checked_converts_defaults_and_given_values_before_the_body():
    seen = []

    @checked(machines=Integer(1, 16), suite=Choice("sid", "trixie"))
    def task(c, machines="1", suite="sid"):
        seen.append((machines, suite))

    task(None)
    task(None, machines="4", suite="trixie")
    assert seen == [(1, "sid"), (4, "trixie")]
    with pytest.raises(UsageError, match="--suite 'bookworm': unknown"):
        task(None, suite="bookworm")
    assert len(seen) == 2  # the body never ran


def test_checked_refuses_a_task_with_an_option_nobody_checks():
    with pytest.raises(TypeError, match=r"options without a kind \['memory'\]"):
        @checked(machines=Integer(1))
        def task(c, machines="1", memory="1024"):
            pass


def _tasks():
    sys.path.insert(0, str(project_root()))
    try:
        import tasks
    finally:
        sys.path.remove(str(project_root()))
    return tasks


def edge():
    return _tasks().harness_errors


@pytest.mark.parametrize("raised", [
    UsageError("--x: bad"),
    BuildFailed("kube-apiserver", "go build", 1, ["undefined: x"]),
    BuildFailed("etcd", "go build", None, []),
    PermissionError(13, "Permission denied", "/srv/runs"),
    AttributeError("'NoneType' object has no attribute 'get'"),
])
def test_the_edge_ends_every_failure_with_exit_2(raised, capsys):
    @edge()
    def task(c):
        raise raised

    with pytest.raises(Exit) as info:
        task(None)
    assert info.value.code == 2
    assert info.value.message.startswith("kubelab: ")
    internal = not isinstance(raised, (UsageError, BuildFailed, OSError))
    assert ("internal error (a bug in kubelab)" in info.value.message) == internal
    assert ("Traceback" in capsys.readouterr().err) == internal  # a bug keeps its traceback


def test_the_edge_passes_a_tasks_own_exit_through():
    @edge()
    def task(c):
        raise Exit("kubelab: not-met: 1 check(s) not met", code=1)

    with pytest.raises(Exit) as info:
        task(None)
    assert info.value.code == 1


def test_rerun_is_refused_outside_a_resumed_run_and_for_a_scenario_the_run_does_not_hold():
    tasks = _tasks()
    held = {"swap-kubelet": object(), "kubeadm-baseline": object()}
    tasks._check_rerun(None, False, held)  # not given: nothing to check
    tasks._check_rerun(("swap-kubelet",), True, held)
    with pytest.raises(UsageError, match="--rerun: needs --resume --out FOLDER"):
        tasks._check_rerun(("swap-kubelet",), False, held)
    with pytest.raises(UsageError, match="--rerun: single-node-taint not among the scenarios of this run; "
                                         "allowed: kubeadm-baseline, swap-kubelet"):
        tasks._check_rerun(("single-node-taint", "swap-kubelet"), True, held)
