"""flannel's manifest, rendered by kubelab: the objects of upstream's
Documentation/kube-flannel.yml at the pinned version (v0.28.4), with the kit's
images and net-conf.json's Network set to the cluster's pod CIDR. One lab
difference, when `iface` is given: flanneld's `--iface`, because lab guests
have no default route and flanneld otherwise picks the default route's
interface and exits (main.go, v0.28.4): "Failed to find any valid interface
to use: failed to get default interface: unable to find default route".
Under TCG also `--iptables-resync` (tuning.py says why); `None` keeps flannel's.

Written here object by object (not copied); tests/kit compares the rendering
with upstream's file, read from the Go module cache, object for object.
"""

from __future__ import annotations

import json

import yaml

NAMESPACE = "kube-flannel"
LABELS = {"tier": "node", "k8s-app": "flannel", "app": "flannel"}


def cni_conf() -> dict:
    return {"name": "cbr0", "cniVersion": "0.3.1", "plugins": [
        {"type": "flannel", "delegate": {"hairpinMode": True, "isDefaultGateway": True}},
        {"type": "portmap", "capabilities": {"portMappings": True}},
    ]}


def net_conf(pod_cidr: str) -> dict:
    return {"Network": pod_cidr, "EnableNFTables": False, "Backend": {"Type": "vxlan"}}


def _json_block(obj: dict) -> str:
    return json.dumps(obj, indent=2) + "\n"


def objects(pod_cidr: str, flannel_image: str, cni_plugin_image: str, iface: str | None = None,
            iptables_resync: int | None = None) -> list[dict]:
    meta = lambda name, **extra: {"name": name, **extra}  # noqa: E731
    daemonset = {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": meta("kube-flannel-ds", namespace=NAMESPACE, labels=dict(LABELS)),
        "spec": {
            "selector": {"matchLabels": {"app": "flannel"}},
            "template": {
                "metadata": {"labels": {"tier": "node", "app": "flannel"}},
                "spec": {
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [
                            {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]}}},
                    "hostNetwork": True,
                    "priorityClassName": "system-node-critical",
                    "tolerations": [{"operator": "Exists", "effect": "NoSchedule"}],
                    "serviceAccountName": "flannel",
                    "initContainers": [
                        {"name": "install-cni-plugin", "image": cni_plugin_image, "command": ["cp"],
                         "args": ["-f", "/flannel", "/opt/cni/bin/flannel"],
                         "volumeMounts": [{"name": "cni-plugin", "mountPath": "/opt/cni/bin"}]},
                        {"name": "install-cni", "image": flannel_image, "command": ["cp"],
                         "args": ["-f", "/etc/kube-flannel/cni-conf.json", "/etc/cni/net.d/10-flannel.conflist"],
                         "volumeMounts": [{"name": "cni", "mountPath": "/etc/cni/net.d"},
                                          {"name": "flannel-cfg", "mountPath": "/etc/kube-flannel/"}]},
                    ],
                    "containers": [{
                        "name": "kube-flannel", "image": flannel_image, "command": ["/opt/bin/flanneld"],
                        "args": ["--ip-masq", "--kube-subnet-mgr"] + ([f"--iface={iface}"] if iface else [])
                                + ([f"--iptables-resync={iptables_resync}"] if iptables_resync else []),
                        "resources": {"requests": {"cpu": "100m", "memory": "50Mi"}},
                        "securityContext": {"privileged": False, "capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}},
                        "env": [
                            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                            {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                            {"name": "EVENT_QUEUE_DEPTH", "value": "5000"},
                            {"name": "CONT_WHEN_CACHE_NOT_READY", "value": "false"},
                        ],
                        "volumeMounts": [{"name": "run", "mountPath": "/run/flannel"},
                                         {"name": "flannel-cfg", "mountPath": "/etc/kube-flannel/"},
                                         {"name": "xtables-lock", "mountPath": "/run/xtables.lock"}],
                    }],
                    "volumes": [
                        {"name": "run", "hostPath": {"path": "/run/flannel"}},
                        {"name": "cni-plugin", "hostPath": {"path": "/opt/cni/bin"}},
                        {"name": "cni", "hostPath": {"path": "/etc/cni/net.d"}},
                        {"name": "flannel-cfg", "configMap": {"name": "kube-flannel-cfg"}},
                        {"name": "xtables-lock", "hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"}},
                    ],
                },
            },
        },
    }
    return [
        {"kind": "Namespace", "apiVersion": "v1",
         "metadata": meta(NAMESPACE, labels={"k8s-app": "flannel", "pod-security.kubernetes.io/enforce": "privileged"})},
        {"kind": "ClusterRole", "apiVersion": "rbac.authorization.k8s.io/v1",
         "metadata": meta("flannel", labels={"k8s-app": "flannel"}),
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
                   {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
                   {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]}]},
        {"kind": "ClusterRoleBinding", "apiVersion": "rbac.authorization.k8s.io/v1",
         "metadata": meta("flannel", labels={"k8s-app": "flannel"}),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "flannel"},
         "subjects": [{"kind": "ServiceAccount", "name": "flannel", "namespace": NAMESPACE}]},
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": meta("flannel", namespace=NAMESPACE, labels={"k8s-app": "flannel"})},
        {"kind": "ConfigMap", "apiVersion": "v1",
         "metadata": meta("kube-flannel-cfg", namespace=NAMESPACE, labels=dict(LABELS)),
         "data": {"cni-conf.json": _json_block(cni_conf()), "net-conf.json": _json_block(net_conf(pod_cidr))}},
        daemonset,
    ]


def manifest(pod_cidr: str, flannel_image: str, cni_plugin_image: str, iface: str | None = None,
             iptables_resync: int | None = None) -> str:
    docs = objects(pod_cidr, flannel_image, cni_plugin_image, iface, iptables_resync)
    return "".join("---\n" + yaml.safe_dump(d, sort_keys=False) for d in docs)
