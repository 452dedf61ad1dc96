"""The lab's file server: the kit's binaries over plain HTTP, for installers that
download them (the kubespray track). Python's own http.server, read-only, on the
lab network's host address only.

The tree mimics the upstream download layout, so an installer needs only a
different base URL:

    release/v1.36.3/bin/linux/amd64/{kubeadm,kubelet,kubectl}
    dl.k8s.io/release/v1.36.3/bin/linux/amd64/...   (the same, below the host kubespray names)
    cni-plugins/v1.9.1/{bridge,host-local,...}
    cri-tools/v1.36.0/crictl
    github.com/containernetworking/plugins/releases/download/v1.9.1/cni-plugins-linux-amd64-v1.9.1.tgz
    github.com/kubernetes-sigs/cri-tools/releases/download/v1.36.0/crictl-v1.36.0-linux-amd64.tar.gz
"""

from __future__ import annotations

import sys
from pathlib import Path

from .. import paths
from . import process

PORT = 8080


def tree_dir(kubernetes_tag: str) -> Path:
    return paths.artifacts_dir() / "files" / kubernetes_tag


def write_tree(kubernetes_tag: str, links: dict[str, Path]) -> Path:
    """Symlinks `relative path -> store file`; the old tree is replaced."""
    root = tree_dir(kubernetes_tag)
    staging = root.with_name(f".{root.name}.new")
    if staging.exists():
        _remove(staging)
    for rel, target in sorted(links.items()):
        link = staging / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
    if root.exists():
        _remove(root)
    staging.rename(root)
    return root


def add_links(kubernetes_tag: str, links: dict[str, Path]) -> None:
    """Further symlinks in an existing tree (files made after the kit, for one installer's paths);
    a link already there is replaced, atomically."""
    root = tree_dir(kubernetes_tag)
    for rel, target in sorted(links.items()):
        link = root / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        staging = link.with_name(f".{link.name}.new")
        if staging.is_symlink() or staging.exists():
            staging.unlink()
        staging.symlink_to(target)
        staging.rename(link)


def _remove(root: Path) -> None:
    for p in sorted(root.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        p.unlink() if p.is_symlink() or p.is_file() else p.rmdir()
    root.rmdir()


def start(root: Path, host: str, port: int, workdir: Path) -> process.Daemon:
    argv = [sys.executable, "-m", "http.server", "--bind", host, "--directory", str(root), str(port)]
    return process.start("file server", argv, workdir / "files.log", f"http://{host}:{port}/")
