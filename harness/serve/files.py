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

import json
import os
import sys
from pathlib import Path

from .. import paths
from ..errors import UsageError
from ..fsutil import write_json
from . import process

PORT = 8080


def tree_dir(kubernetes_tag: str) -> Path:
    return paths.artifacts_dir() / "files" / kubernetes_tag


def write_tree(kubernetes_tag: str, links: dict[str, Path]) -> Path:
    """Symlinks `relative path -> store file`; the old tree is replaced. Links added after the kit
    (add_links: files one installer downloads beyond it) are kept while their targets exist."""
    root = tree_dir(kubernetes_tag)
    links = {**_added(root), **links}
    staging = root.with_name(f".{root.name}.new.{os.getpid()}")
    if staging.exists():
        _remove(staging)
    staging.mkdir(parents=True)
    for rel, target in sorted(links.items()):
        link = staging / _relative(rel)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
    if root.exists():
        _remove(root)
    staging.rename(root)
    return root


def add_links(root: Path, links: dict[str, Path]) -> None:
    """Further symlinks in an existing tree, each replaced atomically, and remembered beside the
    tree so that a rebuild of the kit keeps them. Callers hold the artifact store's lock, as the
    kit build that writes the tree does."""
    for rel, target in sorted(links.items()):
        link = root / _relative(rel)
        link.parent.mkdir(parents=True, exist_ok=True)
        staging = link.with_name(f".{link.name}.new.{os.getpid()}")
        if staging.is_symlink() or staging.exists():
            staging.unlink()
        staging.symlink_to(target)
        staging.rename(link)
    write_json(_added_file(root), {rel: str(t) for rel, t in {**_added(root), **links}.items()})


def _relative(rel: str) -> str:
    """A path below the tree: never absolute, never `..` (a download's URL comes from a checkout
    and a scenario's variables, and must not place a link anywhere else)."""
    parts = Path(rel).parts
    if not rel or Path(rel).is_absolute() or ".." in parts:
        raise UsageError(f"`{rel}` is not a path below the lab's file server (absolute, or with `..`)")
    return rel


def _added_file(root: Path) -> Path:
    return root.with_name(f"{root.name}.added.json")


def added_links(root: Path) -> dict[str, Path]:
    """{relative path: target} of the links add_links made in the tree at `root` (an installer's
    downloads beyond the kit), whose targets still exist."""
    return _added(root)


def _added(root: Path) -> dict[str, Path]:
    """The links add_links made, whose targets still exist."""
    try:
        data = json.loads(_added_file(root).read_text())
    except (FileNotFoundError, ValueError):
        return {}
    return {rel: Path(t) for rel, t in data.items() if Path(t).exists()}


def _remove(root: Path) -> None:
    for p in sorted(root.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        p.unlink() if p.is_symlink() or p.is_file() else p.rmdir()
    root.rmdir()


def start(root: Path, host: str, port: int, workdir: Path) -> process.Daemon:
    argv = [sys.executable, "-m", "http.server", "--bind", host, "--directory", str(root), str(port)]
    return process.start("file server", argv, workdir / "files.log", f"http://{host}:{port}/")
