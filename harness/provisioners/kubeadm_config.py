"""kubeadm's configuration files, in the API version the release takes. Pure.

Every Kubernetes minor kubelab builds (1.34-1.37) reads kubeadm.k8s.io/v1beta4
(cmd/kubeadm/app/apis/kubeadm/v1beta4, the newest API of those releases).
The advertise address and the kubelet's node IP are always explicit: lab
guests have no default route, from which kubeadm and the kubelet would
otherwise pick an address ("unable to select an IP from default routes").

Everything the acceleration decides (kubeadm's timeouts, the controllers'
leader election, etcd's flags, the key algorithm, the static pods' patches, the
kubelet's extra flags) comes in a ClusterSpec from harness/tuning.py; a spec's
defaults are upstream's, so an empty field writes nothing.

What is changed is recorded in each run (`install` in run.json).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from ..model import DEFAULT_POD_CIDR, DEFAULT_SERVICE_CIDR

API = "kubeadm.k8s.io/v1beta4"
KUBELET_API = "kubelet.config.k8s.io/v1beta1"
PATCHES_DIR = "/etc/kubernetes/kubelab-patches"
# kubeadm's timeouts the join configuration takes (JoinConfiguration.timeouts, v1beta4)
JOIN_TIMEOUTS = ("kubernetesAPICall", "tlsBootstrap", "discovery", "kubeletHealthCheck")


@dataclass(frozen=True)
class ClusterSpec:
    kubernetes: str  # "v1.36.3", or "" to leave kubernetesVersion unset (the air-gap scenario)
    pod_cidr: str = DEFAULT_POD_CIDR
    service_cidr: str = DEFAULT_SERVICE_CIDR
    cgroup_driver: str = "systemd"  # kubeadm's own default since 1.22
    timeouts: dict = field(default_factory=dict)  # InitConfiguration.timeouts; empty: kubeadm's
    extra_kubelet: dict = field(default_factory=dict)  # KubeletConfiguration fields
    kubelet_args: dict = field(default_factory=dict)  # nodeRegistration.kubeletExtraArgs beside node-ip
    leader_election: dict = field(default_factory=dict)  # controller-manager and scheduler flags
    etcd_args: dict = field(default_factory=dict)
    encryption_algorithm: str = ""  # "": kubeadm's default (RSA-2048)
    patches_dir: str = ""  # "" for none


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
                             "kubeletExtraArgs": _args({"node-ip": ip, **spec.kubelet_args})},
    }
    if spec.timeouts:
        init["timeouts"] = dict(spec.timeouts)
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
                             "kubeletExtraArgs": _args({"node-ip": ip, **spec.kubelet_args})},
    }
    timeouts = {k: v for k, v in spec.timeouts.items() if k in JOIN_TIMEOUTS}
    if timeouts:
        join["timeouts"] = timeouts
    return _docs(join)


def _docs(*docs: dict) -> str:
    return "---\n".join(yaml.safe_dump(d, sort_keys=False) for d in docs)
