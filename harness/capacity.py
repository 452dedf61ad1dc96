"""What a lab's machines cost the host (vCPUs, memory), and the refusal when the host lacks it."""

from __future__ import annotations

import os

from . import host
from .errors import UsageError

# What a guest costs the host beyond its RAM: QEMU itself and THP (600 MiB measured for a TCG
# guest, less its 128 MiB translation cache), plus the translation cache QEMU is given, which
# only TCG has (tuning.py: 128 MiB, 2 GiB for a Kubernetes node; none under KVM).
QEMU_OVERHEAD_MIB = 472


def overhead_mib(kubernetes: str | None, tuned=None) -> int:
    """Per machine; `tuned`: the profile guests get (default: this host's, TCG until measured)."""
    from . import tuning

    tuned = tuned or tuning.host_profile()
    return QEMU_OVERHEAD_MIB + tuned.tb_cache(bool(kubernetes))


def memory_shortfall(memories: list[int], available_mib: int | None = None,
                     overhead: int | None = None) -> tuple[int, int] | None:
    """(needed, available) MiB when the host cannot hold machines of these sizes, else None."""
    overhead = overhead_mib(None) if overhead is None else overhead
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
