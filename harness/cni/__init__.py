"""The pod networks kubelab installs, each in one place (base.Cni): the tracks that install it,
the kubespray variables that pick it, the pods that show it running and the images it needs.
A scenario names one with `install.cni`; `none` installs none (the scenario brings its own)."""

from ..provisioners.lab_network import node_route_steps
from .base import Cni
from .calico import CALICO
from .flannel import FLANNEL

NONE = Cni(name="none", tracks=("kubeadm", "kubespray"), summary="no pod network: the scenario brings its own",
           kubespray=lambda: {"kube_network_plugin": "cni"})
CNIS: dict[str, Cni] = {c.name: c for c in (FLANNEL, CALICO, NONE)}
DEFAULT = FLANNEL.name


def by_name(name: str) -> Cni:
    return CNIS[name]


def for_track(track: str) -> tuple[str, ...]:
    """The CNI names a track installs, in the registry's order."""
    return tuple(n for n, c in CNIS.items() if track in c.tracks)


def routes_for(install) -> list[tuple[str, str, str]]:
    """The node routes of an install (lab_network.node_route_steps): its Service range and what its CNI names."""
    return node_route_steps(install.service_cidr, by_name(install.cni).node_routes)
