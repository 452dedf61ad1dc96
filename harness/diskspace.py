"""A build that ran out of disk says so: which disk, how much it has, what the build needs there,
and that nothing half made was kept (the next build starts over on its own). Without this the
user reads debootstrap's command line, or Go's, and a `cp: error copying` line."""

from __future__ import annotations

import errno
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

from .errors import HarnessError

NO_SPACE = re.compile(r"no space left on device|ENOSPC|disk quota exceeded", re.IGNORECASE)
NEARLY_FULL = 64 << 20  # bytes: below this a failed build is taken to have failed for want of space

# What each kind of build needs free, measured here (README's host section and the docs' measurements)
IMAGE_NEEDS = "about 2 GiB while it builds (the Debian packages it fetches, the root tree and its raw disk)"
KIT_NEEDS = "about 11 GiB from an empty cache (measured 2026-12-04: Go's caches 8.9 GiB, the kit 2.0)"


class DiskFull(HarnessError):
    """A build stopped because the disk under kubelab's cache is full."""


def _existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def free_bytes(path: Path) -> int:
    return shutil.disk_usage(_existing(path)).free


def ran_out(path: Path, lines: Iterable[str] = (), exc: BaseException | None = None) -> bool:
    """Whether a failure under `path` was the disk's: the tool said so, the OS did, or it is all but full."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if any(NO_SPACE.search(line) for line in lines) or (exc is not None and NO_SPACE.search(str(exc))):
        return True
    return free_bytes(path) < NEARLY_FULL


def full(path: Path, what: str, needs: str) -> DiskFull:
    usage = shutil.disk_usage(_existing(path))
    return DiskFull(f"{what}: the disk under {path} is full ({usage.free / 2**20:.0f} MiB free of "
                    f"{usage.total / 2**20:.0f} MiB); it needs {needs}. Free space there, or set KUBELAB_CACHE "
                    "to a folder on a larger disk, and run it again: what was half made was removed, so the next "
                    "build starts over by itself")
