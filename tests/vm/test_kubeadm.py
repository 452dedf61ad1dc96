"""The kubeadm track on real guests: kubeadm-baseline end to end on sid with the default
kit (a two-node cluster under TCG) and its control, on demand (`-m cluster`), and an
install interrupted by SIGINT (in CI)."""

import json
import os
import signal

import pytest

from harness import tuning
from harness.lab import Lab
from harness.serve import lab as services

from .helpers import invoke, objects_of, remove_lab_whatever_happened, wait_for
from .test_scenarios import failed_checks, run_scenario

pytestmark = [pytest.mark.vm, pytest.mark.artifacts]
RUN_TIMEOUT = 3600


def tuned(record):
    """The settings the run's measured acceleration called for (harness/tuning.py)."""
    return tuning.for_acceleration(record["lab"]["acceleration"])


def observation(record, check, kind="expect"):
    return next(o for o in record["observations"] if o["check"] == check and o["kind"] == kind)


@pytest.mark.cluster
def test_kubeadm_baseline_end_to_end(tmp_path, libvirt_backend, kit):
    """On demand: flannel-no-brnetfilter, in CI, goes through the same track and its checks."""
    code, record, out = run_scenario(tmp_path, "kubeadm-baseline", timeout=RUN_TIMEOUT)
    assert code == 0, f"{record['verdict']}\n{failed_checks(record)}\n{out[-4000:]}"
    assert record["verdict"]["result"] == "met"
    phases = {p["name"]: p["status"] for p in record["phases"]}
    assert phases == {"prepare": "ok", "arm": "ok", "armed-check": "ok", "install": "ok", "expect": "ok",
                      "recover": "ok", "verify": "ok", "collect": "ok", "teardown": "ok"}
    # K1 was seen before the CNI, inside install; Ready, DNS and S9 after it
    assert observation(record, "control-plane-notready-without-cni")["phase"] == "install"
    assert observation(record, "service-reaches-both-pods")["value"] == 2
    init = next(s for s in record["steps"] if s["name"] == "kubeadm init")
    log = (record_dir(tmp_path) / init["log"]).read_text()
    assert "Your Kubernetes control-plane has initialized successfully!" in log
    assert "[REDACTED" in log  # the join token printed by kubeadm is not in the record
    assert record["install"]["timeouts"] == dict(tuned(record).kubeadm_timeouts)  # TCG's 10m0s, or none
    assert services.orphans(keep_labs=set(Lab.names())) == []


@pytest.mark.cluster
def test_kubeadm_baseline_control(tmp_path, libvirt_backend, kit):
    """The baseline has no fault, so its control differs only in skipping arm: on demand."""
    code, record, out = run_scenario(tmp_path, "kubeadm-baseline", "--control", timeout=RUN_TIMEOUT)
    assert code == 0, f"{record['verdict']}\n{failed_checks(record)}\n{out[-4000:]}"
    assert {p["name"]: p["status"] for p in record["phases"]}["arm"] == "skipped"
    assert observation(record, "service-reaches-both-pods")["value"] == 2


def record_dir(tmp_path):
    return sorted((tmp_path / "runs").glob("*/*/run.json"))[-1].parent


def test_sigint_during_install_leaves_an_incomplete_report_and_nothing_running(tmp_path, libvirt_backend, kit):
    env = dict(os.environ, KUBELAB_RUNS=str(tmp_path / "runs"))
    proc = invoke("scenario", "kubeadm-baseline", env=env)

    def in_install():
        for path in (tmp_path / "runs").glob("*/*/run.json"):
            try:
                record = json.loads(path.read_text())
            except ValueError:
                return None
            if any(s["name"] == "kubeadm init" for s in record["steps"]) or \
                    any(s["name"] == "restart containerd" for s in record["steps"]):
                return path
        return None

    lab_name = None
    try:
        path = wait_for(in_install, 900, "the install phase", interval=0.5)
        lab_name = json.loads(path.read_text())["lab"]["name"]
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=300)
        record = json.loads(path.read_text())
        assert proc.returncode == 2, out
        assert record["status"] == "incomplete" and record["verdict"]["result"] == "interrupted"
        install = next(p for p in record["phases"] if p["name"] == "install")
        assert (install["status"], install["reason"]) == ("failed", "interrupted")
        assert "incomplete" in (path.parent / "report.md").read_text().lower()
        assert objects_of(lab_name) == [] and not Lab.path_for(lab_name).exists()
        assert services.orphans(keep_labs=set(Lab.names())) == []  # the registry stopped with the lab
    finally:
        if proc.poll() is None:
            proc.kill()
        if lab_name:
            remove_lab_whatever_happened(lab_name)
