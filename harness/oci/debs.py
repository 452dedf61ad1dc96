"""Userland for images from Debian's packages: download a package closure, unpack it.

No maintainer scripts run (nothing is installed on the host): what the
postinst would have done and an image needs (the iptables alternatives,
the loader cache) is done explicitly by the image recipe and here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..errors import ArtifactError
from .layout import Node

# Never wanted in an image: documentation, manuals, translations, lintian overrides.
SKIP = re.compile(r"^/usr/share/(doc|man|info|locale|lintian|bug)(/|$)")


def deb_cache() -> Path:
    d = paths.cache_dir() / "debs" / "oci"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _run(cmd: list[str], what: str, timeout: float = 600, cwd: Path | None = None) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise ArtifactError(f"{what}: `{' '.join(cmd)}` did not end within {timeout:.0f}s") from None
    if out.returncode != 0:
        hint = ""
        if "Unable to locate package" in out.stderr or "No packages found" in out.stderr:
            hint = "\n  fix: `apt-get update` (the host's package lists are missing or stale)"
        raise ArtifactError(f"{what}: `{' '.join(cmd)}` exited {out.returncode}: {out.stderr.strip()[-600:]}{hint}")
    return out.stdout


def closure(packages: list[str]) -> list[str]:
    """The packages plus everything they depend on (Depends and Pre-Depends), as the host's apt sees it."""
    out = _run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
                "--no-breaks", "--no-replaces", "--no-enhances", *packages], "resolving " + " ".join(packages))
    names = set()
    for line in out.splitlines():
        if line and not line.startswith(" ") and not line.startswith("<"):
            names.add(line.strip())
    return sorted(names)


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    deb: Path


def download(packages: list[str]) -> list[Package]:
    """Each package's candidate .deb, in the kubelab deb cache (downloaded once)."""
    versions = {}
    out = _run(["apt-cache", "policy", *packages], "apt-cache policy")
    current = None
    for line in out.splitlines():
        if line and not line.startswith(" "):
            current = line.rstrip(":")
        elif current and line.strip().startswith("Candidate:"):
            versions[current] = line.split(":", 1)[1].strip()
    missing = [p for p in packages if versions.get(p) in (None, "(none)")]
    if missing:
        raise ArtifactError(f"no installable candidate for {', '.join(missing)}: `apt-get update` first")
    found = []
    cache = deb_cache()
    for name in packages:
        version = versions[name]
        pattern = f"{name}_{version.replace(':', '%3a')}_*.deb"
        debs = sorted(cache.glob(pattern))
        if not debs:
            _run(["apt-get", "download", f"{name}={version}"], f"downloading {name}", cwd=cache)
            debs = sorted(cache.glob(pattern))
        if not debs:
            raise ArtifactError(f"apt-get download {name}={version} left no {pattern} in {cache}")
        found.append(Package(name, version, debs[0]))
    return found


def unpack(packages: list[Package], root: Path) -> None:
    for p in packages:
        _run(["dpkg-deb", "-x", str(p.deb), str(root)], f"unpacking {p.name}")


def ldconfig(root: Path) -> None:
    """The loader cache the libc postinst would have made, so multiarch libraries resolve."""
    conf = root / "etc" / "ld.so.conf"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text("include /etc/ld.so.conf.d/*.conf\n")
    _run(["ldconfig", "-r", str(root)], "ldconfig")


def nodes(root: Path) -> list[Node]:
    """Every file, directory and symlink under `root` as layer nodes (owned by root)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames) + sorted(filenames):
            path = Path(dirpath) / name
            rel = "/" + path.relative_to(root).as_posix()
            if SKIP.match(rel):
                continue
            st = path.lstat()
            mode = st.st_mode & 0o7777
            if path.is_symlink():
                out.append(Node(rel, kind="symlink", mode=0o777, target=os.readlink(path)))
            elif path.is_dir():
                out.append(Node(rel, kind="dir", mode=mode))
            else:
                out.append(Node(rel, mode=mode, source=path))
    return out


def check_runs(root: Path, argv: list[str]) -> str:
    """Run a program of the unpacked tree in a chroot: proof that its libraries resolve."""
    return _run(["chroot", str(root), *argv], f"checking {argv[0]} in the image tree", timeout=60)


def clean(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)
