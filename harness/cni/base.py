"""What kubelab knows of one pod network (CNI), for every track that installs it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Cni:
    name: str
    tracks: tuple[str, ...]  # the install tracks that can install it
    summary: str
    # kubespray: the inventory variables that pick it (kube_network_plugin and what kubelab sets beside)
    kubespray: Callable[[], dict] = field(default=lambda: {})
    # the pods whose images say what runs: (what, namespace, label selector), per track's manifests
    pods: tuple[tuple[str, str, str], ...] = ()
    # addresses a node must have a route to for this network to work on a guest with no default
    # route (provisioners/lab_network.py writes them beside the Service range's)
    node_routes: tuple[str, ...] = ()
