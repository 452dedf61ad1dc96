"""Every host-preparation scenario end to end on real guests, each with its negative control.

The host scenarios are every file under scenarios/ with `install: none` (helpers.py finds
them). Their run is the session's evidence book of the host claims (conftest.py); a new host
scenario that no host claim cites fails here, by name, instead of going unrun.
"""

import json
import os
import signal

import pytest

from harness.artifacts.containerd import CI_CONTAINERD
from harness.lab import Lab

from .conftest import matrix_of
from .helpers import (HOST_SCENARIOS, SCENARIOS, assert_matrix_left_nothing, invoke, objects_of,
                      remove_lab_whatever_happened, wait_for)


def run_scenario(tmp_path, *args, timeout=900):
    env = dict(os.environ, KUBELAB_RUNS=str(tmp_path / "runs"))
    proc = invoke("scenario", *args, env=env)
    out, _ = proc.communicate(timeout=timeout)
    run_dirs = sorted((tmp_path / "runs").glob("*/*/run.json"))
    assert run_dirs, f"no run record was written:\n{out}"
    record = json.loads(run_dirs[-1].read_text())
    lab = record["lab"].get("name")
    assert lab and objects_of(lab) == [], f"lab {lab} left objects behind"
    return proc.returncode, record, out


def failed_checks(record):
    return [(o["check"], o["machine"], o["value"]) for o in record["observations"] if o["met"] is False]


@pytest.fixture(scope="module")
def host_matrix(host_book):
    """Every host scenario in one `invoke matrix` cell on bookworm: one pooled lab, booted once
    and snapshotted; each scenario restores the snapshot (fan-out). That matrix is the first
    repeat of the session's evidence book of the host claims (conftest.py), whose claims cite
    every host scenario: one run on guests for both."""
    book, code, text, _ = host_book
    out, matrix = matrix_of(book)
    [cell] = matrix["cells"]
    assert sorted(cell["scenarios"]) == sorted(HOST_SCENARIOS), \
        "a host scenario no claim of claims/course.yaml's host chapter cites is not run: cite it there"
    return out, matrix, code, text


@pytest.mark.parametrize("name", HOST_SCENARIOS)
def test_scenario_meets_its_expectations(name, host_matrix):
    out, matrix, code, text = host_matrix
    [cell] = matrix["cells"]
    result = cell["scenarios"][name]
    record = json.loads((out / result["run_dir"]).with_name("run.json").read_text())
    assert result["status"] == "met", f"{result}\n{failed_checks(record)}\n{text[-3000:]}"
    assert record["status"] == "complete" and record["verdict"]["result"] == "met"
    asserted = [o for o in record["observations"] if o["met"] is not None]
    assert {o["kind"] for o in asserted} == {"armed", "expect", "verify"}
    assert all(o["met"] for o in asserted)
    assert [p["status"] for p in record["phases"]] == ["ok", "ok", "ok", "skipped", "ok", "ok", "ok", "ok", "ok"]
    # libvirt's count of each emulator's CPU time, per phase: the expect phase's, for every machine
    expect = next(p for p in record["phases"] if p["name"] == "expect")
    assert sorted(expect["guest_cpu_s"]) == sorted(record["machines"]), expect
    assert sum(sum(p.get("guest_cpu_s", {}).values()) for p in record["phases"]) > 0


def test_host_scenarios_shared_one_pooled_lab_and_left_nothing(host_matrix):
    out, matrix, code, text = host_matrix
    assert code == 0, text[-3000:]
    [cell] = matrix["cells"]
    labs = {r["pooled_lab"] for r in cell["scenarios"].values()}
    assert len(labs) == 1 and "" not in labs, labs
    [lab] = labs
    assert f"booting pooled lab {lab}" in text
    logs = {n: (out / r["log"]).read_text() for n, r in cell["scenarios"].items()}
    fresh = [n for n in HOST_SCENARIOS if "restore kubelab-fanout-base: done" not in logs[n]]
    assert len(fresh) == 1, fresh  # the first run found the lab as its snapshot left it; the others restored it
    # between runs the pool's machines are paused, and the next run's restore takes them from there
    assert all("its machines paused until then" in logs[n] for n in HOST_SCENARIOS), \
        {n: logs[n][-500:] for n in HOST_SCENARIOS}
    assert objects_of(lab) == [] and not Lab.path_for(lab).exists()


@pytest.mark.parametrize("name", [n for n in HOST_SCENARIOS if not SCENARIOS[n].control_problem()])
def test_negative_control_passes_the_healthy_checks(name, tmp_path, libvirt_backend, bookworm_image):
    code, record, out = run_scenario(tmp_path, name, "--control")
    assert code == 0, f"{record['verdict']}\n{failed_checks(record)}\n{out[-3000:]}"
    assert record["mode"] == "control"
    assert not any(s["phase"] == "arm" for s in record["steps"])
    assert {o["kind"] for o in record["observations"] if o["met"] is not None} == {"verify"}


def matrix_statuses(out):
    try:
        matrix = json.loads((out / "matrix.json").read_text())
    except (FileNotFoundError, ValueError):
        return {}
    return {c["id"]: c["scenarios"]["containerd-dropin-merge"]["status"] for c in matrix["cells"]}


def test_matrix_across_the_suites_interrupted_then_resumed_shows_where_containerd_changes(tmp_path, libvirt_backend):
    """`invoke matrix` of the drop-in scenario on trixie (containerd 1.7) and on sid with a
    containerd built from source (2.x), side by side; stopped by SIGTERM once one cell is done;
    `--resume` then runs only the cell that did not finish. The pivot shows each observed
    `cri_table`: 1.7 replaces the CRI table from a drop-in, 2.x merges it, with the border
    between them. (bookworm's 1.6 and sid's own 2.1 are the same two sides: H4's book runs
    bookworm, and `invoke matrix --suite bookworm,trixie,sid` shows all four.)"""
    out = tmp_path / "matrix"
    args = ("matrix", "--scenario", "containerd-dropin-merge", "--suite", "trixie",
            "--containerd", CI_CONTAINERD, "--out", str(out), "--deadline", "40")
    built = f"host_containerd-{CI_CONTAINERD.replace('.', '-')}"
    first = invoke(*args)
    try:
        done = wait_for(lambda: [c for c, st in matrix_statuses(out).items() if st == "met"], 1800,
                        "a first matrix cell to finish", interval=1)
        first.send_signal(signal.SIGTERM)
        text, _ = first.communicate(timeout=600)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode != 0, text[-3000:]
    before = json.loads((out / "matrix.json").read_text())
    kept = {c["id"]: c["scenarios"]["containerd-dropin-merge"] for c in before["cells"]}
    missing = [c for c, r in kept.items() if r["status"] != "met"]
    assert missing, f"every cell finished before the stop: {matrix_statuses(out)}"

    second = invoke(*args, "--resume")
    text, _ = second.communicate(timeout=3000)
    assert second.returncode == 0, text[-4000:]
    for cell in done:
        assert f"{cell} containerd-dropin-merge: kept from the previous run (met)" in text
    matrix = json.loads((out / "matrix.json").read_text())
    results = {c["id"]: c["scenarios"]["containerd-dropin-merge"] for c in matrix["cells"]}
    for cell in done:
        assert results[cell] == kept[cell]  # not run again
    for cell in missing:
        assert results[cell]["status"] == "met" and results[cell]["run_dir"] != kept[cell].get("run_dir")
    assert {c: r["facts"]["cri_table"] for c, r in results.items()} == {"host_trixie": "replaced", built: "merged"}
    observed = {c: r["containerd_observed"] for c, r in results.items()}
    assert {c: v.split(".")[0] for c, v in observed.items()} == {"host_trixie": "1", built: "2"}
    assert observed[built] == CI_CONTAINERD  # what the guest runs is the build, not Debian's 2.1
    md = (out / "matrix.md").read_text()
    column = {c["id"]: c["column"] for c in matrix["cells"]}
    assert f"{column['host_trixie']} -> {column[built]}: replaced -> merged" in md
    for r in results.values():
        assert (out / r["run_dir"]).exists()
    assert_matrix_left_nothing(out)


def test_interrupted_run_leaves_an_incomplete_report_and_no_machines(tmp_path, libvirt_backend, bookworm_image):
    env = dict(os.environ, KUBELAB_RUNS=str(tmp_path / "runs"))
    proc = invoke("scenario", "br-netfilter-missing", env=env)

    def in_expect():
        for path in (tmp_path / "runs").glob("*/*/run.json"):
            try:
                record = json.loads(path.read_text())
            except ValueError:
                return None
            if any(p["name"] == "expect" and p["status"] == "running" for p in record["phases"]):
                return path
        return None

    try:
        path = wait_for(in_expect, 300, "the expect phase", interval=0.05)
        proc.send_signal(signal.SIGTERM)  # what a CI runner's cancel sends
        out, _ = proc.communicate(timeout=180)
        record = json.loads(path.read_text())
    finally:
        if proc.poll() is None:
            proc.kill()
        for run_json in (tmp_path / "runs").glob("*/*/run.json"):
            lab_name = json.loads(run_json.read_text()).get("lab", {}).get("name")
            if lab_name:
                remove_lab_whatever_happened(lab_name)
    assert proc.returncode == 2, out
    assert record["status"] == "incomplete" and record["verdict"]["result"] == "interrupted"
    expect = next(p for p in record["phases"] if p["name"] == "expect")
    assert (expect["status"], expect["reason"]) == ("failed", "interrupted")
    assert "incomplete" in (path.parent / "report.md").read_text().lower()
    assert objects_of(record["lab"]["name"]) == []
    assert not Lab.path_for(record["lab"]["name"]).exists()
