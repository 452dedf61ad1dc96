"""kubeadm's configuration files, in the API version the release takes. Pure.

Every Kubernetes minor kubelab builds (1.34-1.37) reads kubeadm.k8s.io/v1beta4
(cmd/kubeadm/app/apis/kubeadm/v1beta4, the newest API of those releases).
The advertise address and the kubelet's node IP are always explicit: lab
guests have no default route, from which kubeadm and the kubelet would
otherwise pick an address ("unable to select an IP from default routes").

Timeouts: under TCG the API server needs minutes, and kubeadm 1.36 creates the
admin ClusterRoleBinding before it waits for the control plane, within
`kubernetesAPICall` (1m default; cmd/kubeadm/app/phases/kubeconfig/kubeconfig.go
@ v1.36.3): measured in a sid guest, init failed after 65 s with the default and
succeeded with 10m. `controlPlaneComponentHealthCheck` also sets the static
pods' startup probe (ceil(T/10s) failures; cmd/kubeadm/app/util/staticpod/utils.go),
so it is raised with it.

Leader election: kube-controller-manager and kube-scheduler hold a Lease they
must renew within 10 s (--leader-elect-renew-deadline; lease 15 s, retry 2 s).
Measured in a two-node TCG lab, the controller-manager missed the deadline,
logged "stopped leading" and exited, again and again, so flannel's DaemonSet
never got a pod. The lease times are lengthened (not switched off: the
controllers behave as upstream's).

etcd: its raft loop must beat every 100 ms and a missed 1 s election timeout
makes even a single member doubt its leadership ("Failed to check current
member's leadership", "etcdserver: request timed out" to the API server, seen
in a two-node TCG lab); the intervals are those etcd's tuning guide gives
for slow machines, 500 ms and 5 s.

Keys: ECDSA P-256 instead of RSA-2048 (ClusterConfiguration.encryptionAlgorithm):
every TLS handshake signs with the server's key, and under TCG the RSA
signatures of probes and clients were a steady load on the API server.

Static pod probes (kubeadm's `patches`, strategic merge, one file per
component): the API server's readiness probe runs every second (a TLS
handshake each time); under TCG it is every 10 s, and the liveness probes of
the API server, etcd, controller-manager and scheduler allow 30 failures 30 s
apart (their startup probes 15 minutes) before a restart, so a slow spell does
not restart the control plane into a slower one. CoreDNS's Deployment gets the
same liveness allowance and 10 s for a readiness answer (its default is 1 s:
a loaded guest fails it, and a CoreDNS that is never Ready has no endpoints,
so DNS is refused while CoreDNS runs).

What is changed is recorded in each run (`install` in run.json).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from ..model import DEFAULT_POD_CIDR, DEFAULT_SERVICE_CIDR

API = "kubeadm.k8s.io/v1beta4"
KUBELET_API = "kubelet.config.k8s.io/v1beta1"
TCG_TIMEOUTS = {"kubernetesAPICall": "10m0s", "controlPlaneComponentHealthCheck": "10m0s",
                "kubeletHealthCheck": "4m0s", "tlsBootstrap": "10m0s", "discovery": "10m0s"}
TCG_LEADER_ELECTION = {"leader-elect-lease-duration": "60s", "leader-elect-renew-deadline": "45s",
                       "leader-elect-retry-period": "5s"}
TCG_ETCD = {"heartbeat-interval": "500", "election-timeout": "5000", "unsafe-no-fsync": "true"}
TCG_KEYS = "ECDSA-P256"
PATCHES_DIR = "/etc/kubernetes/kubelab-patches"
# 15 minutes of failed checks before a restart: measured, a 200 s allowance (10 s x 20) let the
# kubelet kill a loaded API server whose /livez answered 500 (the etcd check, slow under TCG)
# a few minutes after init, and the restart cost another 2.5 min of startup while the
# controllers lost their leases; a restarted control plane is always slower than a slow one.
TCG_LIVENESS = {"periodSeconds": 30, "timeoutSeconds": 30, "failureThreshold": 30}
TCG_STARTUP = {"periodSeconds": 10, "timeoutSeconds": 30, "failureThreshold": 90}  # 15 min to start
TCG_PROBE_TIMEOUT = 10  # seconds a CoreDNS readiness answer may take
TCG_GO_ENV = {"GOMAXPROCS": "1", "GODEBUG": "asyncpreemptoff=1"}
TCG_KUBELET_ARGS = {"housekeeping-interval": "30s"}


def tcg_patches() -> dict[str, str]:
    """kubeadm patch files (target+strategic.yaml) for the static pods under TCG."""
    def patch(container: str, readiness_period: int | None = None) -> str:
        probes = {"livenessProbe": dict(TCG_LIVENESS), "startupProbe": dict(TCG_STARTUP),
                  "env": [{"name": k, "value": v} for k, v in TCG_GO_ENV.items()]}
        if readiness_period:
            probes["readinessProbe"] = {"periodSeconds": readiness_period}
        return yaml.safe_dump({"spec": {"containers": [{"name": container, **probes}]}}, sort_keys=False)

    coredns = {"name": "coredns", "readinessProbe": {"timeoutSeconds": TCG_PROBE_TIMEOUT},
               "livenessProbe": dict(TCG_LIVENESS),
               "env": [{"name": k, "value": v} for k, v in TCG_GO_ENV.items()]}
    return {
        "kube-apiserver+strategic.yaml": patch("kube-apiserver", readiness_period=10),
        "etcd+strategic.yaml": patch("etcd"),
        "kube-controller-manager+strategic.yaml": patch("kube-controller-manager"),
        "kube-scheduler+strategic.yaml": patch("kube-scheduler"),
        # kubeadm's CoreDNS Deployment (target `corednsdeployment`, cmd/kubeadm/app/util/patches/patches.go
        # @ v1.36.3): its readiness probe has the default 1 s timeout and its liveness probe 5 s x 5.
        "corednsdeployment+strategic.yaml": yaml.safe_dump({"spec": {"template": {"spec": {"containers": [coredns]}}}},
                                                           sort_keys=False),
    }


@dataclass(frozen=True)
class ClusterSpec:
    kubernetes: str  # "v1.36.3", or "" to leave kubernetesVersion unset (the air-gap scenario)
    pod_cidr: str = DEFAULT_POD_CIDR
    service_cidr: str = DEFAULT_SERVICE_CIDR
    cgroup_driver: str = "systemd"  # kubeadm's own default since 1.22
    timeouts: dict = field(default_factory=lambda: dict(TCG_TIMEOUTS))
    extra_kubelet: dict = field(default_factory=dict)  # KubeletConfiguration fields
    leader_election: dict = field(default_factory=lambda: dict(TCG_LEADER_ELECTION))
    etcd_args: dict = field(default_factory=lambda: dict(TCG_ETCD))
    encryption_algorithm: str = TCG_KEYS  # kubeadm's default is RSA-2048
    patches_dir: str = PATCHES_DIR  # "" for none


def _args(values: dict[str, str]) -> list[dict]:
    return [{"name": k, "value": v} for k, v in values.items()]


def init_config(spec: ClusterSpec, node: str, ip: str, token: str) -> str:
    init = {
        "apiVersion": API, "kind": "InitConfiguration",
        "bootstrapTokens": [{"token": token, "ttl": "24h0m0s",
                             "groups": ["system:bootstrappers:kubeadm:default-node-token"],
                             "usages": ["signing", "authentication"]}],
        "localAPIEndpoint": {"advertiseAddress": ip, "bindPort": 6443},
        "nodeRegistration": {"name": node, "criSocket": "unix:///var/run/containerd/containerd.sock",
                             "kubeletExtraArgs": _args({"node-ip": ip, **TCG_KUBELET_ARGS})},
        "timeouts": dict(spec.timeouts),
    }
    if spec.patches_dir:
        init["patches"] = {"directory": spec.patches_dir}
    cluster = {"apiVersion": API, "kind": "ClusterConfiguration",
               "networking": {"podSubnet": spec.pod_cidr, "serviceSubnet": spec.service_cidr}}
    if spec.leader_election:
        cluster["controllerManager"] = {"extraArgs": _args(spec.leader_election)}
        cluster["scheduler"] = {"extraArgs": _args(spec.leader_election)}
    if spec.etcd_args:
        cluster["etcd"] = {"local": {"extraArgs": _args(spec.etcd_args)}}
    if spec.encryption_algorithm:
        cluster["encryptionAlgorithm"] = spec.encryption_algorithm
    if spec.kubernetes:
        cluster["kubernetesVersion"] = spec.kubernetes
    kubelet = {"apiVersion": KUBELET_API, "kind": "KubeletConfiguration", "cgroupDriver": spec.cgroup_driver,
               **spec.extra_kubelet}
    return _docs(init, cluster, kubelet)


def join_config(spec: ClusterSpec, node: str, ip: str, endpoint: str, token: str, ca_hash: str) -> str:
    join = {
        "apiVersion": API, "kind": "JoinConfiguration",
        "discovery": {"bootstrapToken": {"apiServerEndpoint": endpoint, "token": token, "caCertHashes": [ca_hash]}},
        "nodeRegistration": {"name": node, "criSocket": "unix:///var/run/containerd/containerd.sock",
                             "kubeletExtraArgs": _args({"node-ip": ip, **TCG_KUBELET_ARGS})},
        "timeouts": {k: v for k, v in spec.timeouts.items() if k in ("kubernetesAPICall", "tlsBootstrap",
                                                                      "discovery", "kubeletHealthCheck")},
    }
    return _docs(join)


def _docs(*docs: dict) -> str:
    return "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)
