"""Faults by kind; one module per family."""

from .airgap import ImageMirrorRemoved
from .base import Fault
from .containerd import ContainerdCgroupDriver, ContainerdDropin
from .kernel import ModuleMissing, ModuleUnloaded
from .swap import SwapOn
from .sysctl import SysctlValue

FAULTS: dict[str, type[Fault]] = {f.kind: f for f in (
    ModuleMissing, ModuleUnloaded, SysctlValue, SwapOn, ContainerdDropin, ContainerdCgroupDriver, ImageMirrorRemoved,
)}


def make(kind: str, params: dict, facts: dict) -> Fault:
    return FAULTS[kind](params, facts)


__all__ = ["FAULTS", "Fault", "make"]
