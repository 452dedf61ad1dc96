"""The kubeadm track on real guests: an install interrupted by SIGINT (in CI). Every cluster
scenario end to end, kubeadm-baseline's included, and their controls: test_kubeadm_faults.py."""

import json
import os
import signal

import pytest

from harness import tuning
from harness.lab import Lab
from harness.serve import lab as services

from .helpers import invoke, objects_of, remove_lab_whatever_happened, wait_for

pytestmark = [pytest.mark.vm, pytest.mark.artifacts]
RUN_TIMEOUT = 3600


def tuned(record):
    """The settings the run's measured acceleration called for (harness/tuning.py)."""
    return tuning.for_acceleration(record["lab"]["acceleration"])


def observation(record, check, kind="expect"):
    return next(o for o in record["observations"] if o["check"] == check and o["kind"] == kind)


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
