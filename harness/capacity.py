"""What a lab's machines cost the host in memory, and the refusal when the host lacks it."""

from __future__ import annotations

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


def check_capacity(machines, available_mib: int | None = None, kubernetes: str | None = None) -> None:
    """Refuse machines whose memory the host does not have (before creating any)."""
    overhead = overhead_mib(kubernetes)
    shortfall = memory_shortfall([m.memory_mib for m in machines], available_mib, overhead)
    if shortfall:
        need, have = shortfall
        raise UsageError(f"the lab needs about {need} MiB ({overhead} MiB QEMU overhead per machine) "
                         f"but the host has {have} MiB available")
