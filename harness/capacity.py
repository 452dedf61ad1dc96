"""What a lab's machines cost the host (vCPUs, memory), and the refusal when the host lacks it."""

from __future__ import annotations

import os

from . import host
from .errors import UsageError

# What a TCG guest costs the host beyond its RAM (QEMU, 128 MiB translation cache, THP);
# a Kubernetes node's guest has a 2 GiB translation cache (machines/libvirt_xml.py).
GUEST_OVERHEAD_MIB = 600
KUBERNETES_OVERHEAD_MIB = GUEST_OVERHEAD_MIB + 2048 - 128


def overhead_mib(kubernetes: str | None) -> int:
    return KUBERNETES_OVERHEAD_MIB if kubernetes else GUEST_OVERHEAD_MIB


def memory_shortfall(memories: list[int], available_mib: int | None = None,
                     overhead: int = GUEST_OVERHEAD_MIB) -> tuple[int, int] | None:
    """(needed, available) MiB when the host cannot hold machines of these sizes, else None."""
    need = sum(m + overhead for m in memories)
    have = available_mib if available_mib is not None else host.available_memory() >> 20
    return (need, have) if need > have else None


def check_capacity(machines, available_mib: int | None = None, kubernetes: str | None = None,
                   host_cores: int | None = None) -> None:
    """Admission, before any machine exists: refuse machines this host cannot run, with the
    shortfall. A machine may not have more vCPUs than the host has cores (a scenario file
    may ask for them: whether a file is valid does not depend on the host), and the
    machines together may not need more memory than the host has available."""
    cores = host_cores or os.cpu_count() or 1
    wide = [m for m in machines if m.cpus > cores]
    if wide:
        raise UsageError("this host cannot run the lab: " + "; ".join(
            f"machine {m.name} asks for {m.cpus} vCPUs and the host has {cores} core(s), {m.cpus - cores} short"
            for m in wide))
    overhead = overhead_mib(kubernetes)
    shortfall = memory_shortfall([m.memory_mib for m in machines], available_mib, overhead)
    if shortfall:
        need, have = shortfall
        raise UsageError(f"the lab needs about {need} MiB ({overhead} MiB QEMU overhead per machine) "
                         f"but the host has {have} MiB available")
