"""`verify`: a running cluster checked layer by layer, whatever installed it.

Each layer reads its facts from the cluster's API and from a shell on the nodes
(harness/verify/access.py), and says what it read and from where. The layers,
in the order they run:

    nodes         roles, taints, schedulability, kubelet and runtime (S2, K13)
    etcd          static pod or host unit; health and members over TLS (S3)
    certificates  every certificate file, its lineage, kubeadm's listing (S4, S8, K11)
    dns           clusterDNS, a pod's resolv.conf, each tier asked (S5, S7)
    records       what the install left on the nodes (S6)
    kube-system   workloads by owner against the detected layout (S7)
    workload      a Service answering from pods on two nodes (S9)
"""

from __future__ import annotations

import importlib

TIMEOUT = 900.0  # seconds, per layer: its reads each have their own, this bounds the whole
LAYERS = ("nodes", "etcd", "certificates", "dns", "records", "kube-system", "workload")
_MODULES = {"nodes": "nodes", "etcd": "etcd", "certificates": "certs", "dns": "dns", "records": "records",
            "kube-system": "kube_system", "workload": "workload"}


def layer(name: str):
    """The module of layer `name`: LAYER, READS (what it reads, for dry-run), check(access)."""
    return importlib.import_module(f"{__name__}.{_MODULES[name]}")


def chosen(value) -> tuple[str, ...]:
    """`all`, a name, or names (a list or a comma-separated string) -> layer names in run order;
    ValueError naming what is not a layer."""
    if not isinstance(value, (str, list, tuple)):
        raise ValueError(f"found {value!r}; allowed: all, or any of {', '.join(LAYERS)} (a name, a list or "
                         "comma-separated names)")
    names = value.split(",") if isinstance(value, str) else list(value)
    names = [str(n).strip() for n in names if str(n).strip()]
    if names == ["all"]:
        return LAYERS
    unknown = [n for n in names if n not in LAYERS]
    if unknown or not names:
        raise ValueError(f"{', '.join(unknown) or 'nothing'}: not a layer; allowed: all, or any of {', '.join(LAYERS)}")
    return tuple(n for n in LAYERS if n in names)
