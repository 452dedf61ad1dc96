"""Probes: what kubelab can observe on a machine, by kind."""

from .base import Context, Probe, Reading
from .cluster import CLUSTER_PROBES
from .command import Command
from .containerd import ContainerdConfig
from .files import FileContent, FileExists
from .host import AnsibleFailure, AnsibleTask
from .kernel import ModuleLoaded, Swaps, Sysctl
from .pki import CaCertHash
from .systemd import Journal, UnitState

PROBES: dict[str, type[Probe]] = {p.kind: p for p in (
    Command, FileExists, FileContent, Sysctl, ModuleLoaded, Swaps, UnitState, Journal, ContainerdConfig, CaCertHash,
    *CLUSTER_PROBES, AnsibleFailure, AnsibleTask,
)}


def make(kind: str, args: dict) -> Probe:
    return PROBES[kind](**args)


__all__ = ["PROBES", "Context", "Probe", "Reading", "make"]
