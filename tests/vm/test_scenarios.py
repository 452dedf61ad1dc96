"""Every host-preparation scenario end to end on real guests, each with its negative control."""

import json
import os
import signal

import pytest

from harness.lab import Lab

from .helpers import invoke, objects_of, wait_for

HOST_SCENARIOS = ["br-netfilter-missing", "ip-forward-off", "swap-on", "containerd-dropin-merge", "cgroup-driver-host"]


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


@pytest.mark.parametrize("name", HOST_SCENARIOS)
def test_scenario_meets_its_expectations(name, tmp_path, libvirt_backend, bookworm_image):
    code, record, out = run_scenario(tmp_path, name)
    assert code == 0, f"{record['verdict']}\n{failed_checks(record)}\n{out[-3000:]}"
    assert record["status"] == "complete" and record["verdict"]["result"] == "met"
    asserted = [o for o in record["observations"] if o["met"] is not None]
    assert {o["kind"] for o in asserted} == {"armed", "expect", "verify"}
    assert all(o["met"] for o in asserted)
    assert [p["status"] for p in record["phases"]] == ["ok", "ok", "ok", "skipped", "ok", "ok", "ok", "ok", "ok"]


@pytest.mark.parametrize("name", HOST_SCENARIOS)
def test_negative_control_passes_the_healthy_checks(name, tmp_path, libvirt_backend, bookworm_image):
    code, record, out = run_scenario(tmp_path, name, "--control")
    assert code == 0, f"{record['verdict']}\n{failed_checks(record)}\n{out[-3000:]}"
    assert record["mode"] == "control"
    assert not any(s["phase"] == "arm" for s in record["steps"])
    assert {o["kind"] for o in record["observations"] if o["met"] is not None} == {"verify"}


@pytest.mark.parametrize("suite,containerd_major,merged", [("trixie", "1", False), ("sid", "2", True)])
def test_containerd_dropin_on_other_suites(suite, containerd_major, merged, tmp_path, libvirt_backend):
    code, record, out = run_scenario(tmp_path, "containerd-dropin-merge", "--suite", suite)
    assert code == 0, f"{record['verdict']}\n{failed_checks(record)}\n{out[-3000:]}"
    assert record["machines"]["node1"]["versions"]["containerd"].startswith(containerd_major + ".")
    met = {o["check"] for o in record["observations"] if o["met"]}
    assert ("v2-config-toml-table-kept" in met) is merged
    assert ("v1-config-toml-table-replaced" in met) is not merged


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

    path = wait_for(in_expect, 300, "the expect phase", interval=0.05)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=180)
    record = json.loads(path.read_text())
    assert proc.returncode == 2, out
    assert record["status"] == "incomplete" and record["verdict"]["result"] == "interrupted"
    expect = next(p for p in record["phases"] if p["name"] == "expect")
    assert (expect["status"], expect["reason"]) == ("failed", "interrupted")
    assert "incomplete" in (path.parent / "report.md").read_text().lower()
    assert objects_of(record["lab"]["name"]) == []
    assert not Lab.path_for(record["lab"]["name"]).exists()
