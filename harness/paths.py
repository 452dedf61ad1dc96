"""Where kubelab keeps things on the host. All outside the checkout.

Root uses /var paths so that libvirt's QEMU user (libvirt-qemu) can read
images and disks; /root is not traversable for it. Environment variables
override each location.
"""

import os
from pathlib import Path


def _default(var: str, root_path: str, user_path: str) -> Path:
    if os.environ.get(var):
        return Path(os.environ[var])
    if os.geteuid() == 0:
        return Path(root_path)
    return Path(os.path.expanduser(user_path))


def cache_dir() -> Path:
    """Built images, content-addressed; safe to delete, rebuilt when missing."""
    return _default("KUBELAB_CACHE", "/var/cache/kubelab", "~/.cache/kubelab")


def images_dir() -> Path:
    return cache_dir() / "images"


def artifacts_dir() -> Path:
    """Built Kubernetes components and images, content-addressed; rebuilt when missing."""
    return cache_dir() / "artifacts"


def go_dir() -> Path:
    """Go's module cache, build cache and kubelab's wrapper modules."""
    return cache_dir() / "go"


def home_dir() -> Path:
    """Lab state folders and the libvirt storage pool of lab disks."""
    return _default("KUBELAB_HOME", "/var/lib/kubelab", "~/.local/share/kubelab")


def labs_dir() -> Path:
    return home_dir() / "labs"


def volumes_dir() -> Path:
    return home_dir() / "volumes"


def disks_dir() -> Path | None:
    """KUBELAB_DISKS: where the labs' disks go instead of kubelab's pool in volumes_dir() (a bigger
    or a faster disk, or a small one a test fills): in a `kubelab` folder kubelab makes there and
    owns, so nothing else in the named folder is ever taken for a lab's. None: not set."""
    value = os.environ.get("KUBELAB_DISKS")
    return Path(value).expanduser().resolve() / "kubelab" if value else None


def run_dir() -> Path:
    """Per-boot facts (the acceleration probe result)."""
    return _default("KUBELAB_RUN", "/run/kubelab", "~/.cache/kubelab/run")


def project_root() -> Path:
    return Path(__file__).resolve().parent.parent
