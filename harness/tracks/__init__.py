"""Install tracks: how a scenario's Kubernetes gets onto its machines.

One registry, asked by the plan, the engine, dry-run and the loader; no caller outside a
track's own module names a track. A track gives the steps of an install and of a reinstall,
the context those steps need (from a running lab, or placeholders for a dry-run) and what the
run record says about the install.
"""

from __future__ import annotations

from ..errors import HarnessError
from ..model import InstallDef
from .base import Track
from .kubeadm import KubeadmTrack
from .kubespray import KubesprayTrack
from .none import NoTrack

TRACKS: dict[str, Track] = {t.name: t for t in (NoTrack(), KubeadmTrack(), KubesprayTrack())}


def track_of(install: InstallDef) -> Track:
    try:
        return TRACKS[install.track]
    except KeyError:
        raise HarnessError(f"install track `{install.track}` is not implemented; "
                           f"implemented: {', '.join(TRACKS)}") from None
