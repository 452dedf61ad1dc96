"""The TCG allowances in kubespray's variables (harness/kubespray/tcg.py): the same values the
kubeadm track uses (harness/tuning.py), only under TCG."""

import re

import yaml

from harness import tuning
from harness.kubespray import tcg
from harness.remote.retried import retried
from harness.tuning import decide


def test_under_kvm_kubespray_keeps_its_defaults():
    assert tcg.variables(decide("kvm", "kvm")) == {}
    # a TCG host told to claim KVM keeps TCG's timings, here as in the kubeadm track
    assert tcg.variables(decide("kvm", "qemu")) == tcg.variables(decide("qemu"))


def test_under_tcg_the_kubeadm_tracks_values_in_kubesprays_names():
    got = tcg.variables(decide("qemu"))
    le, etcd = tuning.TCG_LEADER_ELECTION, tuning.TCG_ETCD
    assert got["kube_controller_manager_leader_elect_lease_duration"] == le["leader-elect-lease-duration"] == "60s"
    assert got["kube_scheduler_leader_elect_renew_deadline"] == le["leader-elect-renew-deadline"]
    assert got["kube_kubeadm_controller_extra_args"] == {"leader-elect-retry-period": "5s"}
    assert got["kube_scheduler_leader_elect_extra_opts"] == {"retryPeriod": "5s"}
    assert (got["etcd_heartbeat_interval"], got["etcd_election_timeout"]) == ("500", "5000")
    # etcd runs as a host unit: its Go runtime settings go into the env file its unit reads
    assert got["etcd_extra_vars"] == {"ETCD_UNSAFE_NO_FSYNC": etcd["unsafe-no-fsync"], **tuning.TCG_GO_ENV}
    assert got["etcd_extra_vars"]["GOMAXPROCS"] == "1"
    assert got["kube_asymmetric_encryption_algorithm"] == "ECDSA-P256"
    assert got["kubelet_custom_flags"] == ["--housekeeping-interval=30s"]
    # a worker's join: discovery as the kubeadm track's, the `timeout` around the join twice that
    assert got["discovery_timeout"] == tuning.TCG_TIMEOUTS["discovery"] == "10m0s"
    assert got["kubeadm_join_timeout"] == "1200s"
    patches = {p["target"]: p for p in got["kubeadm_patches"]}
    assert sorted(patches) == ["kube-apiserver", "kube-controller-manager", "kube-scheduler"]
    assert all(p["type"] == "strategic" for p in patches.values())
    assert patches["kube-apiserver"]["patch"] == yaml.safe_load(tuning.tcg_patches()["kube-apiserver+strategic.yaml"])
    container = patches["kube-apiserver"]["patch"]["spec"]["containers"][0]
    assert container["readinessProbe"] == {"periodSeconds": 10} and container["startupProbe"]["failureThreshold"] == 90
    assert patches["kube-scheduler"]["patch"]["spec"]["containers"][0]["readinessProbe"] == {"periodSeconds": 10}


def test_kubesprays_retry_of_kubeadm_init_is_let_past_the_ports_its_first_try_bound():
    # a real run's retry, straight after a first try that lost its 1m wait for the API server:
    # kubeadm names each check Port-<n> (cmd/kubeadm/app/preflight/checks.go PortOpenCheck.Name, v1.36.3)
    retry_stderr = ("[preflight] Some fatal errors occurred:\n\t[ERROR Port-6443]: Port 6443 is in use\n"
                    "\t[ERROR Port-10259]: Port 10259 is in use\n\t[ERROR Port-10257]: Port 10257 is in use\n")
    fatal = set(re.findall(r"\[ERROR (\S+)\]", retry_stderr))
    assert fatal == set(tcg.variables(decide("qemu"))["kubeadm_ignore_preflight_errors"])
    assert "kubeadm_ignore_preflight_errors" not in tcg.variables(decide("kvm", "kvm"))


def test_the_ignored_port_is_the_api_servers_own_when_the_scenario_moves_it():
    # kubespray's kube_apiserver_port is the port kubeadm init binds, and names its preflight check after
    moved = tcg.variables(decide("qemu"), {"kube_apiserver_port": 7443})["kubeadm_ignore_preflight_errors"]
    assert moved == ["Port-7443", "Port-10259", "Port-10257"]
    assert tcg.variables(decide("qemu"), {})["kubeadm_ignore_preflight_errors"][0] == "Port-6443"


def test_the_containerd_kubespray_installs_reads_cpu_stats_as_seldom_as_the_kubelet_under_tcg():
    # kubespray's config.toml.j2 writes each containerd_extra_runtime_args key into
    # [plugins."io.containerd.cri.v1.runtime"]; its pinned containerd (2.3.4 at master 46dbdd39) has the collector
    got = tcg.variables(decide("qemu"), {}, "2.3.4")
    assert got["containerd_extra_runtime_args"] == {"stats_collect_period": tuning.TCG_CONTAINERD_STATS_PERIOD}
    assert tuning.TCG_CONTAINERD_STATS_PERIOD == tuning.TCG_KUBELET_ARGS["housekeeping-interval"]
    for unknown_or_older in ("", "2.2.1"):
        assert "containerd_extra_runtime_args" not in tcg.variables(decide("qemu"), {}, unknown_or_older)
    assert tcg.variables(decide("kvm", "kvm"), {}, "2.3.4") == {}


def test_under_tcg_a_calico_cluster_gets_kube_controllers_probes_after_the_play():
    """kubespray's calico-kube-controllers template has literal probes (readiness: the kubelet's
    1 s timeout), which check-status cannot meet under TCG; the patch after the play gives them the
    kubeadm track's values, and only there."""
    import json
    import shlex

    [_, (name, command, _)] = tcg.after_play(decide("qemu"), "calico", "/etc/kubernetes/admin.conf")
    # retried: right after the play the API server timed a patch out once (a real run)
    assert command.startswith("n=0; until kubectl ") and command.endswith(
        "; do n=$((n+1)); [ $n -ge 30 ] && break; sleep 10; done; [ $n -lt 30 ]")
    argv = shlex.split(command.removeprefix("n=0; until ").split("; do n=")[0])
    assert argv[:8] == ["kubectl", "--kubeconfig", "/etc/kubernetes/admin.conf", "-n", "kube-system", "patch",
                        "deployment", "calico-kube-controllers"]
    [container] = json.loads(argv[-1])["spec"]["template"]["spec"]["containers"]
    assert container["name"] == "calico-kube-controllers"  # a strategic merge keys containers by name
    assert container["readinessProbe"] == {"periodSeconds": 30, "timeoutSeconds": 30}
    assert container["livenessProbe"]["timeoutSeconds"] == 30
    assert "exec" not in container["readinessProbe"]  # upstream's check-status command stays
    assert tcg.after_play(decide("kvm", "kvm"), "calico", "/etc/kubernetes/admin.conf") == ()
    assert tcg.after_play(decide("qemu"), "flannel", "/etc/kubernetes/admin.conf") == ()


def test_under_tcg_calicos_probes_are_patched_as_soon_as_kubespray_creates_each_object():
    """kubespray's calico-node template fixes the liveness probe's delays (10 s, then 6 failures 10 s
    apart): under TCG felix listened later than that and the kubelet killed calico-node in a loop;
    kube-controllers' check-status took 35 s, its readiness timeout 1 s, and its liveness probe
    restarted it during the play. A transient unit started before the play patches the DaemonSet,
    then the Deployment, once each exists; after the play the same patches are made sure of and
    the unit stopped."""
    import json
    import shlex

    [(name, command, _)] = tcg.before_play(decide("qemu"), "calico", "/etc/kubernetes/admin.conf")
    assert "as kubespray creates them" in name
    words = shlex.split(command)
    run = words.index("systemd-run")
    assert words[run:run + 7] == ["systemd-run", "--unit", tcg.WATCH_UNIT, "--property",
                                  f"RuntimeMaxSec={tcg.WATCH_MAX_S}", "--setenv", "PATH=/usr/local/bin:/usr/bin:/bin"]
    assert words[run + 7:run + 9] == ["sh", "-c"]
    script = words[run + 9]
    waits = script.split("; do sleep 15; done; ")
    assert [w.rsplit("; ", 1)[-1] for w in waits[:-1]] == [
        f"until kubectl --kubeconfig /etc/kubernetes/admin.conf -n kube-system get {kind} {obj} >/dev/null 2>&1"
        for kind, obj in (("daemonset", "calico-node"), ("deployment", "calico-kube-controllers"))]
    patches = [shlex.split(w.split("; ")[0].removeprefix("until ")) for w in waits[1:]]
    assert [argv[5:8] for argv in patches] == [["patch", "daemonset", "calico-node"],
                                               ["patch", "deployment", "calico-kube-controllers"]]
    [node] = json.loads(patches[0][-1])["spec"]["template"]["spec"]["containers"]
    assert node["name"] == "calico-node"
    assert node["livenessProbe"] == {"periodSeconds": 30, "timeoutSeconds": 30, "failureThreshold": 30,
                                     # null deletes upstream's exec in a strategic merge
                                     "exec": None, "httpGet": {"host": "localhost", "port": 9099, "path": "/liveness"}}
    assert node["readinessProbe"]["exec"] is None and node["readinessProbe"]["httpGet"]["path"] == "/readiness"
    [controllers] = json.loads(patches[1][-1])["spec"]["template"]["spec"]["containers"]
    assert controllers["readinessProbe"] == {"periodSeconds": 30, "timeoutSeconds": 30}
    after = tcg.after_play(decide("qemu"), "calico", "/etc/kubernetes/admin.conf")
    assert [a[0] for a in after] == ["calico-node probes under TCG, after the play",
                                     "calico-kube-controllers probes under TCG, after the play"]
    assert after[0][1] == f"systemctl stop {tcg.WATCH_UNIT} 2>/dev/null; " + retried(shlex.join(patches[0]).replace(
        shlex.quote(patches[0][-1]), f"'{patches[0][-1]}'"))
    assert after[1][1] == retried(shlex.join(patches[1]).replace(shlex.quote(patches[1][-1]), f"'{patches[1][-1]}'"))
    assert tcg.before_play(decide("kvm", "kvm"), "calico", "/etc/kubernetes/admin.conf") == ()
    assert tcg.before_play(decide("qemu"), "flannel", "/etc/kubernetes/admin.conf") == ()
