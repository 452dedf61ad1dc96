"""Machine backends: create, list, snapshot and destroy lab machines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:
    from .base import MachineBackend

BACKENDS = ("libvirt", "vagrant")


def backend_for(name: str) -> "MachineBackend":
    """The backend called `name` (imported on demand: each pulls in its own libraries)."""
    if name == "libvirt":
        from .libvirt import LibvirtBackend

        return LibvirtBackend()
    if name == "vagrant":
        from .vagrant import VagrantBackend

        return VagrantBackend()
    raise UsageError(f"unknown backend `{name}`: choose one of {', '.join(BACKENDS)}")
