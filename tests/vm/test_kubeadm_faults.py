"""The Kubernetes fault scenarios on real clusters (sid, the default kit, TCG).

Each is a whole kubeadm install on two guests. Measured here: 7 to 9 minutes
each (kubeadm-baseline 453 s, flannel-no-brnetfilter 504 s). CI runs
flannel-no-brnetfilter, the headline scenario; the others carry the `cluster`
marker and run on demand, `pytest -m cluster` (README, "Tests"), so that CI
stays well inside its time limit.
"""

import pytest

from .test_kubeadm import RUN_TIMEOUT, observation
from .test_scenarios import failed_checks, run_scenario

pytestmark = [pytest.mark.vm, pytest.mark.artifacts]


def met(tmp_path, name, *args):
    code, record, out = run_scenario(tmp_path, name, *args, timeout=RUN_TIMEOUT)
    assert code == 0, f"{record['verdict']}\n{failed_checks(record)}\n{out[-4000:]}"
    assert record["verdict"]["result"] == "met"
    return record


def test_flannel_no_brnetfilter(tmp_path, libvirt_backend, kit):
    record = met(tmp_path, "flannel-no-brnetfilter")
    log = observation(record, "flanneld-fails-its-br-netfilter-check")
    assert "Failed to check br_netfilter: stat /proc/sys/net/bridge/bridge-nf-call-iptables" in log["matched"]
    assert observation(record, "dns-fails-while-nodes-are-ready")["met"]  # S1: Ready proved nothing
    # the waits after the fix are the measurement, and the facts the matrix pivots
    assert observation(record, "dns-answers-after-the-fix", "verify")["after"] > 0
    assert set(record["facts"]) == {"crashloop_wait_s", "dns_after_fix_s"}
    assert "unknown" not in record["facts"].values()
    assert observation(record, "service-reaches-both-pods", "verify")["value"] == 2


@pytest.mark.cluster
def test_ip_forward_preflight(tmp_path, libvirt_backend, kit):
    record = met(tmp_path, "ip-forward-preflight")
    inits = [s for s in record["steps"] if s["name"] == "kubeadm init"]
    assert [s["exit_code"] != 0 for s in inits] == [True, False]
    assert observation(record, "service-reaches-both-pods", "verify")["value"] == 2


@pytest.mark.cluster
def test_swap_kubelet(tmp_path, libvirt_backend, kit):
    record = met(tmp_path, "swap-kubelet")
    inits = [s for s in record["steps"] if s["name"] == "kubeadm init"]
    assert [s["exit_code"] != 0 for s in inits] == [True, False]


@pytest.mark.cluster
def test_single_node_taint(tmp_path, libvirt_backend, kit):
    record = met(tmp_path, "single-node-taint")
    assert observation(record, "workload-stays-pending")["value"] == 0


@pytest.mark.cluster
def test_cgroup_driver_mismatch_on_containerd_2(tmp_path, libvirt_backend, kit):
    record = met(tmp_path, "cgroup-driver-mismatch")
    seen = observation(record, "kubelet-takes-cgroupfs-from-the-cri")
    assert 'cgroupDriver="cgroupfs"' in seen["matched"]
    assert record["facts"]["cgroup_driver_source"] == "cri"


@pytest.mark.cluster
def test_airgap_unset_version(tmp_path, libvirt_backend, kit):
    record = met(tmp_path, "airgap-unset-version")
    inits = [s for s in record["steps"] if s["name"] == "kubeadm init"]
    assert [s["exit_code"] != 0 for s in inits] == [True, False]
    assert "falling back to the local client version: v1.36.3" in \
        observation(record, "falls-back-to-the-client-version")["matched"]


@pytest.mark.cluster
def test_kubeadm_course(tmp_path, libvirt_backend, kit):
    record = met(tmp_path, "kubeadm-course")
    assert observation(record, "control-plane-notready-without-cni")["met"]
    assert observation(record, "dns-fails-while-nodes-are-ready")["met"]
    assert observation(record, "plain-workload-answers", "verify")["value"] == 2
    assert set(record["facts"]) == {"ready_s", "crashloop_wait_s", "dns_after_fix_s"}
    assert "unknown" not in record["facts"].values()
