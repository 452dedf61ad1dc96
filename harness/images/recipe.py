"""An image recipe: the files under images/<name>/ plus a Debian suite.

Pure: reading and hashing only. The hash covers every file of the recipe
(path, exec bit, content), the suite and the architecture, so changing any
of them gives a new image id and a rebuild; nothing else does.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..errors import UsageError

# suite -> what it brings to the version matrix (from Debian's package indexes)
SUITES = {
    "bookworm": "Debian 12, containerd 1.6",
    "trixie": "Debian 13, containerd 1.7",
    "sid": "Debian unstable, containerd 2.x",
}
DEFAULT_SUITE = "bookworm"
ARCH = "amd64"


def check_suite(suite: str) -> str:
    if suite not in SUITES:
        choices = ", ".join(f"`{s}` ({d})" for s, d in SUITES.items())
        raise UsageError(f"unknown suite `{suite}`: choose one of {choices}")
    return suite


@dataclass(frozen=True)
class Recipe:
    directory: Path
    suite: str

    @classmethod
    def debian(cls, suite: str, root: Path | None = None) -> "Recipe":
        base = (root or paths.project_root()) / "images" / "debian"
        return cls(base, check_suite(suite))

    @property
    def name(self) -> str:
        return self.directory.name

    def files(self) -> list[Path]:
        return sorted(p for p in self.directory.rglob("*") if p.is_file())

    def packages(self) -> list[str]:
        """packages.txt: one package a line, `#` comments; `name @suite1,suite2`
        limits a package to those suites."""
        out = []
        for line in (self.directory / "packages.txt").read_text().splitlines():
            name, _, suites = line.split("#", 1)[0].strip().partition("@")
            name = name.strip()
            if name and (not suites or self.suite in suites.replace(" ", "").split(",")):
                out.append(name)
        return out

    def digest(self) -> str:
        h = hashlib.sha256()
        h.update(f"suite={self.suite}\0arch={ARCH}\0".encode())
        for path in self.files():
            rel = path.relative_to(self.directory).as_posix()
            executable = "x" if os.access(path, os.X_OK) else "-"
            h.update(f"{rel}\0{executable}\0".encode())
            h.update(hashlib.sha256(path.read_bytes()).digest())
        return h.hexdigest()

    @property
    def image_id(self) -> str:
        return f"{self.name}-{self.suite}-{self.digest()[:12]}"


def host_mirror(sources_dir: Path = Path("/etc/apt")) -> str | None:
    """The Debian archive the host's apt already uses, so guests come from the
    same (possibly local) mirror. KUBELAB_MIRROR wins; None lets debootstrap
    choose its default."""
    if os.environ.get("KUBELAB_MIRROR"):
        return os.environ["KUBELAB_MIRROR"]
    files = [sources_dir / "sources.list"]
    files += sorted((sources_dir / "sources.list.d").glob("*.list"))
    files += sorted((sources_dir / "sources.list.d").glob("*.sources"))
    for path in files:
        try:
            text = path.read_text()
        except OSError:
            continue
        for uri in _uris(text):
            if uri.rstrip("/").endswith("/debian"):
                return uri
    return None


def _uris(text: str):
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("URIs:"):
            yield from line.split()[1:]
        elif line.startswith("deb "):
            parts = re.sub(r"\[[^]]*\]", " ", line[4:]).split()
            if parts:
                yield parts[0]
