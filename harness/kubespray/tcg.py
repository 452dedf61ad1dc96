"""The kubeadm track's TCG allowances (harness/tuning.py), said in kubespray's own variables.

Only under TCG: under KVM this gives nothing, and kubespray runs with its defaults. Variable
names and where kubespray reads them, as of kubespray master 46dbdd39 (v2.31.0-96):

    kube_controller_manager_leader_elect_lease_duration / _renew_deadline
        kubernetes/control-plane/templates/kubeadm-config.v1beta4.yaml.j2 (controller-manager extraArgs)
    kube_kubeadm_controller_extra_args            the same template: further controller-manager flags
    kube_scheduler_leader_elect_lease_duration / _renew_deadline, kube_scheduler_leader_elect_extra_opts
        kubernetes/control-plane/templates/kubescheduler-config.yaml.j2 (leaderElection)
    etcd_heartbeat_interval, etcd_election_timeout, etcd_extra_vars
        etcd/templates/etcd.env.j2 (kubespray's default etcd_deployment_type `host`: ETCD_* variables,
        and GOMAXPROCS/GODEBUG: the file is etcd-host.service.j2's EnvironmentFile)
    kube_asymmetric_encryption_algorithm          kubeadm-config.v1beta4.yaml.j2 (encryptionAlgorithm)
    kubeadm_patches                               kubernetes/kubeadm_common/tasks/main.yml: each
                                                  {target, type, patch} written as a kubeadm patch file
    kubelet_custom_flags                          kubernetes/node/templates/kubelet.env.v1beta1.j2
    discovery_timeout                             kubernetes/kubeadm/templates/kubeadm-client.conf.j2 and
                                                  control-plane/templates/kubeadm-controlplane.yaml.j2
                                                  (JoinConfiguration timeouts.discovery; a worker's role
                                                  default is 60s)
    kubeadm_join_timeout                          kubernetes/kubeadm/tasks/main.yml: `timeout` around
                                                  the whole `kubeadm join` (default 120s)
    kubeadm_ignore_preflight_errors               kubernetes/control-plane/tasks/kubeadm-setup.yml:
                                                  added to both tries of `kubeadm init`
    containerd_extra_runtime_args                 container-engine/containerd/templates/config.toml.j2:
                                                  keys of [plugins."io.containerd.cri.v1.runtime"]
                                                  (stats_collect_period, for the containerd kubespray
                                                  installs when it has the collector: 2.3.4 here)

The first `kubeadm init` can lose its wait for the API server here: kubeadm gives creating the
admin ClusterRoleBinding `timeouts.kubernetesAPICall` (1m; phases/kubeconfig/kubeconfig.go,
v1.36.3), which kubespray's template cannot raise (its InitConfiguration has no `timeouts:`),
and a real run failed after 66 s ("could not bootstrap the admin user in file admin.conf:
unable to create ClusterRoleBinding: ... context deadline exceeded"), the API server up but slow.
kubespray's rescue then runs `kubeadm init` again, ignoring the manifests and the kubelet's port
its first try left, but not the ports the control plane it started now holds: the retry stopped
at once on "[ERROR Port-6443]: Port 6443 is in use" (and 10259, 10257). Those three go into the
ignore list, so the retry waits for the running control plane instead; on a fresh machine the
ports are free and the first try is unchanged.

A worker's join is where 60 s of discovery ran out here: under TCG load the controller-manager
had not yet signed the cluster-info ConfigMap for the new token ("could not find a JWS
signature in the cluster-info ConfigMap for token ID", kubeadm cmd/kubeadm/app/discovery/token/
token.go, v1.36.3), after 70 s of a 120 s join. So discovery gets the kubeadm track's allowance,
and the join around it twice that: discovery, then the kubelet's TLS bootstrap at kubeadm's own
5 min (kubespray writes no `timeouts.tlsBootstrap`), then the rest.

Not said, because kubespray has no variable for them: kubeadm's other timeouts (its
kubeadm-config template writes no `timeouts:`, its join configs only `discovery`), the Go
runtime settings of containerd and the kubelet, and CoreDNS's probes (kubespray deploys its
own CoreDNS, not kubeadm's addon).
"""

from __future__ import annotations

import yaml

from ..durations import parse_duration
from ..node.containerd_config import has_stats_collector
from ..remote.retried import retried

# kubespray only copies patches for these targets (kubeadm_common's pattern); its etcd runs on the host
PATCH_TARGETS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")


# kubespray's default kube_apiserver_port (roles/kubespray_defaults/defaults/main/main.yml)
API_PORT = 6443


def variables(tuned, scenario_variables=None, containerd: str = "") -> dict:
    """kubespray's variables for the acceleration `tuned` decided; empty under KVM.
    `scenario_variables`: the scenario's own (install.variables), for the API server's port;
    `containerd`: the version kubespray installs ("" when unknown: its collector is left alone)."""
    if not tuned.is_tcg:
        return {}
    le, etcd = tuned.leader_election, tuned.etcd_args
    patches = []
    for name, content in sorted(tuned.static_pod_patches.items()):
        target, _, kind = name.removesuffix(".yaml").partition("+")
        if target in PATCH_TARGETS:
            patches.append({"target": target, "type": kind or "strategic", "patch": yaml.safe_load(content)})
    return {
        "kube_controller_manager_leader_elect_lease_duration": le["leader-elect-lease-duration"],
        "kube_controller_manager_leader_elect_renew_deadline": le["leader-elect-renew-deadline"],
        "kube_kubeadm_controller_extra_args": {"leader-elect-retry-period": le["leader-elect-retry-period"]},
        "kube_scheduler_leader_elect_lease_duration": le["leader-elect-lease-duration"],
        "kube_scheduler_leader_elect_renew_deadline": le["leader-elect-renew-deadline"],
        "kube_scheduler_leader_elect_extra_opts": {"retryPeriod": le["leader-elect-retry-period"]},
        "etcd_heartbeat_interval": etcd["heartbeat-interval"],
        "etcd_election_timeout": etcd["election-timeout"],
        # etcd.env is the host unit's EnvironmentFile: the Go runtime settings the kubeadm track's etcd pod gets
        "etcd_extra_vars": {"ETCD_UNSAFE_NO_FSYNC": etcd["unsafe-no-fsync"], **dict(tuned.go_env)},
        "kube_asymmetric_encryption_algorithm": tuned.encryption_algorithm,
        "kubeadm_patches": patches,
        "kubelet_custom_flags": [f"--{k}={v}" for k, v in sorted(tuned.kubelet_args.items())],
        "discovery_timeout": tuned.kubeadm_timeouts["discovery"],
        "kubeadm_join_timeout": f"{round(2 * parse_duration(tuned.kubeadm_timeouts['discovery']))}s",
        # the API server's port (kubeadm names the check Port-<n>), the scheduler's and the controller-manager's
        # calico-node's probe timeouts, the only probe settings kubespray's template takes
        # (roles/network_plugin/calico/templates/calico-node.yml.j2); its 10 s initial delay stays
        "calico_node_livenessprobe_timeout": tuned.calico_probe_timeout,
        "calico_node_readinessprobe_timeout": tuned.calico_probe_timeout,
        "kubeadm_ignore_preflight_errors": [f"Port-{dict(scenario_variables or {}).get('kube_apiserver_port', API_PORT)}",
                                            "Port-10259", "Port-10257"],
        **({"containerd_extra_runtime_args": {"stats_collect_period": tuned.containerd_stats_period}}
           if containerd and has_stats_collector(containerd) else {}),
    }


# calico-kube-controllers' probes in kubespray's template are literal (periodSeconds 10, and the
# readiness probe kubelet's default 1 s timeout: roles/kubernetes-apps/policy_controller/calico/
# templates/calico-kube-controllers.yml.j2, v2.31.0-96-g46dbdd399), with no variable. Its probes
# exec check-status, measured 35 s under TCG (tuning.py), so it is never Ready, and in a 1+1 play
# here its liveness probe restarted it 3 times before the play ended, each start listing the
# cluster again from an API server that was already the bottleneck.
#
# calico-node's are literal too but for their timeouts (roles/network_plugin/calico/templates/
# calico-node.yml.j2: liveness initialDelaySeconds 10, periodSeconds 10, failureThreshold 6), and
# they matter during the play: on a 1+1 lab here felix was not yet listening after 70 s ("Felix is
# not live: ... connection refused"), the kubelet killed calico-node, and both nodes crash-looped
# (restarts 7 and 5 after 18 min, the API server loaded to a TLS handshake timeout).
#
# So before the play a transient unit on the control plane waits for kubespray to create each of
# the two and gives it the kubeadm track's probes at once (calico-node in the network plugin's
# role, kube-controllers in kubernetes-apps, minutes later); after the play the same patches (a
# no-op when they took) make sure, and the unit is stopped if it still waits.
WATCH_UNIT = "kubelab-tcg-calico-probes"
WATCH_MAX_S = 4 * 3600  # the longest play under TCG here: about 60 min
# what the unit patches, in the order kubespray creates them: (kind, name, container)
WATCHED = (("daemonset", "calico-node", "calico-node"),
           ("deployment", "calico-kube-controllers", "calico-kube-controllers"))


def _patch(kind: str, name: str, probes: dict, kubeconfig: str) -> str:
    import json

    patch = {"spec": {"template": {"spec": {"containers": [{"name": name, **{p: dict(v) for p, v in probes.items()}}]}}}}
    return (f"kubectl --kubeconfig {kubeconfig} -n kube-system patch {kind} {name} "
            f"--type strategic -p '{json.dumps(patch, separators=(',', ':'))}'")


def _calico(tuned, cni: str, container: str) -> dict | None:
    return tuned.calico_probes.get(container) if tuned.is_tcg and cni == "calico" else None


def _watched(tuned, cni: str) -> list[tuple[str, str, dict]]:
    """(kind, name, probes) of what the unit patches; empty under KVM or without calico."""
    return [(kind, name, probes) for kind, name, container in WATCHED if (probes := _calico(tuned, cni, container))]


def before_play(tuned, cni: str, kubeconfig: str) -> tuple[tuple[str, str, str], ...]:
    """(step name, command on the control plane, note): nothing under KVM or without calico."""
    import shlex

    watched = _watched(tuned, cni)
    if not watched:
        return ()
    # kubespray installs kubectl (/usr/local/bin) and writes admin.conf during the play: until both
    # and the object exist, the first command fails and the loop waits. Each kubectl is a Go
    # program under TCG: polled every 5 s, the unit used 99 s of CPU over a 32 min wait here
    script = "; ".join(
        f"until kubectl --kubeconfig {kubeconfig} -n kube-system get {kind} {name} >/dev/null 2>&1; "
        f"do sleep 15; done; until {_patch(kind, name, probes, kubeconfig)}; do sleep 10; done"
        for kind, name, probes in watched)
    command = (f"systemctl stop {WATCH_UNIT} 2>/dev/null; systemctl reset-failed {WATCH_UNIT} 2>/dev/null; "
               f"systemd-run --unit {WATCH_UNIT} --property RuntimeMaxSec={WATCH_MAX_S} "
               f"--setenv PATH=/usr/local/bin:/usr/bin:/bin sh -c {shlex.quote(script)}")
    return (("calico's probes under TCG, as kubespray creates them", command,
             "kubespray's templates fix their delays (calico-node: felix took over 70 s to listen under TCG, "
             "and the kubelet killed it in a loop) and kube-controllers' timeouts (check-status took 35 s)"),)


# The steps before and after the play: the retries after it (remote/retried.py, 5 minutes), each
# kubectl waiting up to a minute on a slow API server
AROUND_PLAY_TIMEOUT_S = 900.0


def after_play(tuned, cni: str, kubeconfig: str) -> tuple[tuple[str, str, str], ...]:
    """(step name, command on the control plane, note): nothing under KVM or without calico. The
    unit is stopped, and each of its patches made sure of (a no-op when it took), retried: right
    after the play the API server timed one out once here ("Timeout: request did not complete
    within requested timeout" after 45 s)."""
    return tuple((f"{name} probes under TCG, after the play",
                  ("" if i else f"systemctl stop {WATCH_UNIT} 2>/dev/null; ") + retried(_patch(kind, name, probes, kubeconfig)),
                  "the patch the unit started before the play made, made sure of (a no-op when it took)")
                 for i, (kind, name, probes) in enumerate(_watched(tuned, cni)))
