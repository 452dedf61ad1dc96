"""Every cluster scenario under scenarios/ on real clusters (the default kit, TCG).

The cluster scenarios are the files whose install track installs Kubernetes; helpers.py finds
them, so a new one runs here without being listed. Each is a whole kubeadm install on one or
two guests: 4 to 11 minutes each here, 15 for cidr-overlap-10-244 (two installs and two power
cycles). CI's default tier runs those whose file says `ci: true` (flannel-no-brnetfilter,
cgroup-driver-mismatch and airgap-unset-version, what issue 9 names when the whole set does not
fit CI's budget). The others, every `--control`, and cgroup-driver-mismatch over two Kubernetes
minors carry the `cluster` marker and run on demand, `pytest -m cluster` (README, "Tests").
A scenario whose checks depend on containerd's version runs as an `invoke matrix` over trixie
(containerd 1.7) and sid (2.x), two cells side by side, instead of once on its own suite.
"""

import json
import os
import re

import pytest

from harness.artifacts.versions import PREVIOUS_KUBERNETES
from harness.facts import NO_FAULT
from harness.lab import Lab
from harness.scenario.checks import in_ranges
from harness.serve import lab as services

from tests.conftest import unavailable
from .helpers import (CLUSTER_SCENARIOS, SCENARIOS, assert_matrix_left_nothing, gates_on, invoke, objects_of,
                      remove_lab_whatever_happened, tier)
from .test_kubeadm import RUN_TIMEOUT, observation, record_dir, tuned
from .test_scenarios import failed_checks, run_scenario

pytestmark = [pytest.mark.vm, pytest.mark.artifacts]

ACROSS_CONTAINERD = [n for n in CLUSTER_SCENARIOS if gates_on(n, "containerd")]
ONE_RUN = [n for n in CLUSTER_SCENARIOS if n not in ACROSS_CONTAINERD]
# Each fault scenario without its fault: the install goes through and the healthy checks hold.
# cidr-overlap-10-244 has none (its fault is the lab network; kubeadm-baseline is its control)
# and refuses `--control` (tests/unit/test_scenario_lint.py).
CONTROLS = [n for n in CLUSTER_SCENARIOS if not SCENARIOS[n].control_problem()]


def met(tmp_path, name, *args):
    code, record, out = run_scenario(tmp_path, name, *args, timeout=RUN_TIMEOUT)
    assert code == 0, f"{record['verdict']}\n{failed_checks(record)}\n{out[-4000:]}"
    assert record["verdict"]["result"] == "met"
    return record


def met_and_kept_for(tmp_path, name, then):
    """The scenario kept (`--keep`), `then(tmp_path, lab)` on its cluster (no install of its
    own), and the lab removed whatever happened."""
    env = dict(os.environ, KUBELAB_RUNS=str(tmp_path / "runs"))
    proc = invoke("scenario", name, "--keep", env=env)
    out, _ = proc.communicate(timeout=RUN_TIMEOUT)
    record = json.loads(sorted((tmp_path / "runs").glob("*/*/run.json"))[-1].read_text())
    lab = record["lab"].get("name")
    try:
        assert proc.returncode == 0, f"{record['verdict']}\n{failed_checks(record)}\n{out[-4000:]}"
        assert record["verdict"]["result"] == "met"
        then(tmp_path, lab)
    finally:
        if lab:
            remove_lab_whatever_happened(lab)
    assert objects_of(lab) == []
    return record


def verify_the_kept_cluster(tmp_path, lab):
    """issue 18's proof on a real kubeadm cluster: all seven layers with real values."""
    env = dict(os.environ, KUBELAB_RUNS=str(tmp_path / "verify-runs"))
    proc = invoke("verify", "--lab", lab, env=env)
    out, _ = proc.communicate(timeout=1800)
    [path] = (tmp_path / "verify-runs" / "verify").glob("*/run.json")
    record = json.loads(path.read_text())
    print(out)  # the table, in the test's log
    assert proc.returncode == 0, f"{record['verdict']}\n{out[-6000:]}"
    found = {o["check"]: o for o in record["observations"]}
    layers = {o["layer"] for o in record["observations"]}
    assert layers == {"nodes", "etcd", "certificates", "dns", "records", "kube-system", "workload"}
    # stacked etcd, found as a static pod, answering over TLS with the API server's client certificate
    assert found["etcd: etcd runs as"]["value"] == "static pod (etcd-cp1 on cp1)"
    assert found["etcd: host unit"]["verdict"] == "not applicable"
    assert found["etcd: health https://127.0.0.1:2379"]["met"] is True
    # kubeadm made etcd's certificates too: they are in the table, and in kubeadm's own listing
    assert found["certificates: cp1:/etc/kubernetes/pki/etcd/server.crt"]["value"].endswith("listed by kubeadm")
    assert "signed by /etc/kubernetes/pki/etcd/ca.crt" in found["certificates: cp1:/etc/kubernetes/pki/etcd/server.crt"]["value"]
    assert found["certificates: cp1: first to expire"]["value"]
    # one DNS tier: the kubelet and the pods name CoreDNS's Service, which answers
    assert found["dns: node-local DNS cache"]["verdict"] == "not applicable"
    assert found["dns: pods ask"]["value"].endswith("CoreDNS Service")
    assert found["dns: pods ask what the kubelet's clusterDNS names"]["met"] is True
    assert found["nodes: cp1 (control plane) takes plain pods"]["value"] == \
        "no: taint node-role.kubernetes.io/control-plane:NoSchedule"
    assert found["kube-system: the layout's workloads are all there"]["met"] is True
    assert found["workload: the Service answers from both pods"]["met"] is True
    assert found["records: cp1:/root/kubeadm-config.yaml"]["value"].startswith(tuple("123456789"))
    assert {p["name"]: p["status"] for p in record["phases"]} == {"prepare": "ok", "verify": "ok", "teardown": "ok"}


# A scenario whose cluster is kept for a further test after its own run: name -> then(tmp_path, lab).
# `invoke verify --lab` (5-6 min under TCG) rides on kubeadm-baseline's run, in the cluster tier:
# CI's default tier sees every layer inside flannel-no-brnetfilter's own run (`verify: [{layers: all}]`).
KEPT_FOR = {"kubeadm-baseline": verify_the_kept_cluster}


# -- one run each --------------------------------------------------------------------------
# What a scenario's run shows beyond every check met: name -> check(record, run folder, kit).
SHOWS = {}


def shows(name):
    def register(check):
        SHOWS[name] = check
        return check
    return register


def assert_the_whole_track_ran(record, run_dir, teardown="ok"):
    assert {p["name"]: p["status"] for p in record["phases"]} == {
        "prepare": "ok", "arm": "ok", "armed-check": "ok", "install": "ok", "expect": "ok",
        "recover": "ok", "verify": "ok", "collect": "ok", "teardown": teardown}
    init = next(s for s in record["steps"] if s["name"] == "kubeadm init")
    log = (run_dir / init["log"]).read_text()
    assert "Your Kubernetes control-plane has initialized successfully!" in log
    assert "[REDACTED" in log  # the join token printed by kubeadm is not in the record
    assert record["install"]["timeouts"] == dict(tuned(record).kubeadm_timeouts)  # TCG's 10m0s, or none


@shows("kubeadm-baseline")
def _baseline(record, run_dir, kit):
    assert_the_whole_track_ran(record, run_dir, teardown="skipped")  # kept for `invoke verify --lab` (KEPT_FOR)
    # K1 was seen before the CNI, inside install; Ready, DNS and S9 after it
    assert observation(record, "control-plane-notready-without-cni")["phase"] == "install"
    assert observation(record, "service-reaches-both-pods")["value"] == 2
    assert services.orphans(keep_labs=set(Lab.names())) == []


@shows("flannel-no-brnetfilter")
def _flannel(record, run_dir, kit):
    assert_the_whole_track_ran(record, run_dir)
    # `verify: [{layers: all}]`: every layer ran inside the scenario, after its own checks, and held
    layered = [o for o in record["observations"] if o.get("layer")]
    assert {o["layer"] for o in layered} == {"nodes", "etcd", "certificates", "dns", "records", "kube-system",
                                             "workload"}
    assert not [o["check"] for o in layered if o["met"] is False]
    # kubeadm's CoreDNS (2 replicas) behind its Service, read from the EndpointSlices
    [endpoints] = [o for o in layered if o["check"] == "dns: CoreDNS Service kube-dns endpoints"]
    assert re.match(r"[12] ready: 10\.244\.\d+\.\d+", endpoints["value"]), endpoints["value"]
    log = observation(record, "flanneld-fails-its-br-netfilter-check")
    assert "Failed to check br_netfilter: stat /proc/sys/net/bridge/bridge-nf-call-iptables" in log["matched"]
    assert observation(record, "dns-fails-while-nodes-are-ready")["met"]  # S1: Ready proved nothing
    # the waits after the fix are the measurement, and the facts the matrix pivots
    assert observation(record, "dns-answers-after-the-fix", "verify")["after"] > 0
    # and the state at the fix that explains the wait: flannel's restarts and the kubelet's back-off then
    assert set(record["facts"]) == {"crashloop_wait_s", "dns_after_fix_s", "restarts_at_fix", "backoff_at_fix"}
    assert "unknown" not in record["facts"].values()
    assert int(record["facts"]["restarts_at_fix"]) >= 2
    assert re.fullmatch(r"\d+(m\d+)?s", record["facts"]["backoff_at_fix"])  # the kubelet's delay: 10s .. 5m0s
    assert observation(record, "service-reaches-both-pods", "verify")["value"] == 2


@shows("ip-forward-preflight")
def _ip_forward(record, run_dir, kit):
    inits = [s for s in record["steps"] if s["name"] == "kubeadm init"]
    assert [s["exit_code"] != 0 for s in inits] == [True, False]
    assert observation(record, "service-reaches-both-pods", "verify")["value"] == 2


@shows("swap-kubelet")
def _swap(record, run_dir, kit):
    inits = [s for s in record["steps"] if s["name"] == "kubeadm init"]
    assert [s["exit_code"] != 0 for s in inits] == [True, False]
    # where init stops follows the release (1.36 creates the admin ClusterRoleBinding first):
    # the expectation the kit's release selects was met, the other gated out
    release = {"kubernetes": kit["kubernetes"].lstrip("v")}
    scenario = SCENARIOS["swap-kubelet"]
    for name in ("admin-bootstrap-finds-no-api-server", "kubelet-never-healthy"):
        check = next(c for c in scenario.expect if c.name == name)
        assert observation(record, name)["met"] is (True if in_ranges(check.versions, release) else None), name
    assert record["install"]["scenario_timeouts"]["kubernetesAPICall of the init the fault stops"] == \
        scenario.install.kubernetes_api_call


@shows("single-node-taint")
def _taint(record, run_dir, kit):
    assert observation(record, "workload-stays-pending")["value"] == 0


@shows("cidr-overlap-10-244")
def _overlap(record, run_dir, kit):
    assert observation(record, "control-plane-gets-the-lab-network-as-its-pod-subnet")["value"] \
        .startswith("cp1=10.244.0.0/24")
    assert "local 10.244.0.1 dev cni0" in observation(record, "cni0-took-the-host-address", "verify")["matched"]
    cycles = [s for s in record["steps"] if s["name"] in ("boot-without-the-kubelet", "boot-normally")]
    assert [s["exit_code"] for s in cycles] == [0, 0]
    assert observation(record, "pods-reach-pods-on-both-nodes", "verify")["value"] == 2


@shows("airgap-unset-version")
def _airgap(record, run_dir, kit):
    inits = [s for s in record["steps"] if s["name"] == "kubeadm init"]
    assert [s["exit_code"] != 0 for s in inits] == [True, False]
    assert f"falling back to the local client version: {kit['kubernetes']}" in \
        observation(record, "falls-back-to-the-client-version")["matched"]


@shows("kubeadm-course")
def _course(record, run_dir, kit):
    assert observation(record, "control-plane-notready-without-cni")["met"]
    assert observation(record, "dns-fails-while-nodes-are-ready")["met"]
    assert observation(record, "plain-workload-answers", "verify")["value"] == 2
    assert set(record["facts"]) == {"ready_s", "crashloop_wait_s", "dns_after_fix_s", "restarts_at_fix",
                                    "backoff_at_fix"}
    assert "unknown" not in record["facts"].values()


@pytest.mark.parametrize("name", [pytest.param(n, marks=tier(n)) for n in ONE_RUN])
def test_scenario_meets_its_expectations(name, tmp_path, libvirt_backend, kit):
    if SCENARIOS[name].install.cni == "calico" and not os.environ.get("KUBELAB_SRC_CALICO"):
        unavailable("KUBELAB_SRC_CALICO is not set: calico is built from a clone of "
                    "https://github.com/projectcalico/calico at its tag (docs/kit.md)")
    record = met_and_kept_for(tmp_path, name, KEPT_FOR[name]) if name in KEPT_FOR else met(tmp_path, name)
    if name in SHOWS:
        SHOWS[name](record, record_dir(tmp_path), kit)


# -- across containerd 1.x and 2.x -------------------------------------------------------------
CGROUP = "cgroup-driver-mismatch"
# kubeadm's preflight warning names the release that stops the fallback, per release
# (cmd/kubeadm/app/preflight/checks.go): v1.35.4 line 138 "will be removed in 1.36",
# v1.36.3 line 139 "will be removed in 1.37"
REMOVAL_IN = {"1.35.4": "1.36", "1.36.3": "1.37"}


def suites_matrix(tmp_path, name: str, kubernetes: str):
    """The scenario as `invoke matrix` over trixie (containerd 1.7) and sid (2.1): one-node
    cells, two side by side (4 vCPUs). containerd 1.x with Kubernetes >= 1.36 is off
    upstream's support table, so those cells run on demand (`--unsupported`)."""
    out = tmp_path / "matrix"
    proc = invoke("matrix", "--scenario", name, "--kubernetes", kubernetes, "--suite", "trixie,sid",
                  "--unsupported", "--max-vcpus", "4", "--out", str(out), "--deadline", "80")
    text, _ = proc.communicate(timeout=RUN_TIMEOUT)
    matrix = json.loads((out / "matrix.json").read_text())
    results = {c["id"]: c["scenarios"][name] for c in matrix["cells"]}
    assert_matrix_left_nothing(out)
    assert proc.returncode == 0, f"{ {c: r['status'] for c, r in results.items()} }\n{text[-4000:]}"
    records = {c: json.loads((out / r["run_dir"]).with_name("run.json").read_text()) for c, r in results.items()}
    return out, matrix, results, records


def cell(kubernetes: str, suite: str) -> str:
    return f"k{kubernetes.replace('.', '-')}_{suite}"


def assert_cgroup_cells(results, records, kubernetes: str):
    trixie, sid = cell(kubernetes, "trixie"), cell(kubernetes, "sid")
    # containerd >= 2.0: the CRI's RuntimeConfig decides, the kubelet runs on cgroupfs, stable
    assert results[sid]["facts"]["cgroup_driver_source"] == "cri"
    assert 'cgroupDriver="cgroupfs"' in observation(records[sid], "kubelet-takes-cgroupfs-from-the-cri")["matched"]
    assert results[sid]["facts"]["cgroupfs_fallback_removal_in"] == "unknown"  # no such warning on 2.x
    # containerd 1.7: no RuntimeConfig, the kubelet keeps systemd, the control plane's sandboxes
    # are made again; the track ends at init and the recovery reinstalls
    assert results[trixie]["facts"]["cgroup_driver_source"] == "kubelet-config"
    assert observation(records[trixie], "control-plane-sandboxes-made-again")["met"]
    assert [s["name"] for s in records[trixie]["steps"]].count("kubeadm init") == 2
    for c in (trixie, sid):
        assert observation(records[c], "service-reaches-both-pods", "verify")["value"] == 2
    return trixie, sid


def _cgroup_side_by_side(out, matrix, results, records, kubernetes):
    trixie, sid = assert_cgroup_cells(results, records, kubernetes)
    assert results[trixie]["facts"]["cgroupfs_fallback_removal_in"] == REMOVAL_IN[kubernetes]
    by_id = {c["id"]: c for c in matrix["cells"]}
    assert (by_id[trixie]["supported"], by_id[sid]["supported"]) == (False, True)
    md = (out / "matrix.md").read_text()
    assert f"{by_id[trixie]['column']} -> {by_id[sid]['column']}: kubelet-config -> cri" in md


# What a matrix across the containerd lines shows beyond every cell met, by scenario
SHOWS_ACROSS = {CGROUP: _cgroup_side_by_side}
assert set(SHOWS) | set(SHOWS_ACROSS) | set(KEPT_FOR) <= set(CLUSTER_SCENARIOS), "tests of a scenario that is gone"


@pytest.mark.parametrize("name", [pytest.param(n, marks=tier(n)) for n in ACROSS_CONTAINERD])
def test_on_containerd_1_and_2_side_by_side(name, tmp_path, libvirt_backend, kit):
    kubernetes = kit["kubernetes"].lstrip("v")
    out, matrix, results, records = suites_matrix(tmp_path, name, kubernetes)
    trixie, sid = cell(kubernetes, "trixie"), cell(kubernetes, "sid")
    assert results[trixie]["status"] == results[sid]["status"] == "met"
    assert results[trixie]["containerd_observed"].startswith("1.7.")
    assert results[sid]["containerd_observed"].startswith("2.")
    assert matrix["concurrent_cells"] == 2
    if name in SHOWS_ACROSS:
        SHOWS_ACROSS[name](out, matrix, results, records, kubernetes)


@pytest.fixture(scope="module")
def previous_minor_kit():
    """The kit of the minor before the default one, built from source like the default, and
    its trixie and sid node images (made here, not by two cells at once)."""
    from harness.artifacts import kit as kits
    from harness.images import node
    from harness.progress import Progress

    built = kits.build_kit(kits.check_version(PREVIOUS_KUBERNETES), Progress())
    for suite in ("trixie", "sid"):
        node.ensure(suite, built["kubernetes"], Progress(), preload=True)
    return built


@pytest.mark.cluster
def test_cgroup_driver_mismatch_over_two_minors(tmp_path, libvirt_backend, kit, previous_minor_kit):
    """Two Kubernetes minors x trixie and sid: the pivot of cgroup_driver_source changes with
    containerd, not with Kubernetes; 1.35 still supports containerd 1.x, 1.36 does not."""
    default, previous = kit["kubernetes"].lstrip("v"), PREVIOUS_KUBERNETES
    out, matrix, results, records = suites_matrix(tmp_path, CGROUP, f"{previous},{default}")
    for k in (previous, default):
        assert_cgroup_cells(results, records, k)
    by_id = {c["id"]: c for c in matrix["cells"]}
    assert by_id[cell(previous, "trixie")]["supported"] and not by_id[cell(default, "trixie")]["supported"]
    removal = {k: results[cell(k, "trixie")]["facts"]["cgroupfs_fallback_removal_in"] for k in (previous, default)}
    assert removal == {k: REMOVAL_IN[k] for k in (previous, default)}
    column = by_id[cell(default, "trixie")]["column"]
    md = (out / "matrix.md").read_text()
    assert f"{column}: Kubernetes {previous} -> {default}: {removal[previous]} -> {removal[default]}" in md


# -- controls ----------------------------------------------------------------------------------
@pytest.mark.cluster
@pytest.mark.parametrize("name", CONTROLS)
def test_control(name, tmp_path, libvirt_backend, kit):
    code, record, out = run_scenario(tmp_path, name, "--control", timeout=RUN_TIMEOUT)
    assert code == 0, f"{record['verdict']}\n{failed_checks(record)}\n{out[-4000:]}"
    assert record["mode"] == "control" and record["verdict"]["result"] == "met"
    assert {p["name"]: p["status"] for p in record["phases"]}["arm"] == "skipped"
    assert not any(s["phase"] == "arm" for s in record["steps"])
    assert {o["kind"] for o in record["observations"] if o["met"] is not None} == {"verify"}
    assert [s["exit_code"] for s in record["steps"] if s["name"] == "kubeadm init"] == [0]  # once, and through
    # timed from a fix that never happened (a scenario without faults, kubeadm-baseline, measures them all the same)
    timed = {f.name for f in SCENARIOS[name].facts if f.kind == "seconds"} if SCENARIOS[name].faults else set()
    assert {k: v for k, v in record["facts"].items() if k in timed} == dict.fromkeys(timed, NO_FAULT)
