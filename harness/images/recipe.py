"""An image recipe: the files under images/<name>/ (over those of the layers it
builds on) plus a Debian suite.

Pure: reading and hashing only. The hash covers every file of every layer
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
# guest recipe -> the recipes under it, bottom first: `kubespray` is `debian` plus what
# kubespray's Ansible finds installed instead of fetching (images/kubespray/packages.txt)
LAYERS = {"debian": (), "kubespray": ("debian",)}


def check_suite(suite: str) -> str:
    if suite not in SUITES:
        choices = ", ".join(f"`{s}` ({d})" for s, d in SUITES.items())
        raise UsageError(f"unknown suite `{suite}`: choose one of {choices}")
    return suite


@dataclass(frozen=True)
class Recipe:
    directory: Path
    suite: str
    under: tuple[Path, ...] = ()  # the layers this one builds on, bottom first

    @classmethod
    def debian(cls, suite: str, root: Path | None = None) -> "Recipe":
        return cls.named("debian", suite, root)

    @classmethod
    def named(cls, name: str, suite: str, root: Path | None = None) -> "Recipe":
        if name not in LAYERS:
            raise UsageError(f"unknown guest recipe `{name}`: choose one of {', '.join(LAYERS)}")
        images = (root or paths.project_root()) / "images"
        return cls(images / name, check_suite(suite), tuple(images / n for n in LAYERS[name]))

    @property
    def name(self) -> str:
        return self.directory.name

    @property
    def layers(self) -> tuple[Path, ...]:
        return (*self.under, self.directory)

    def packages(self) -> list[str]:
        """Every layer's packages, bottom first, each once."""
        out: list[str] = []
        for layer in self.layers:
            out += [p for p in self.layer_packages(layer) if p not in out]
        return out

    def layer_packages(self, layer: Path) -> list[str]:
        """A layer's packages.txt: one package a line, `#` comments; `name @suite1,suite2`
        limits a package to those suites."""
        listed = layer / "packages.txt"
        out = []
        for line in (listed.read_text().splitlines() if listed.exists() else ()):
            name, _, suites = line.split("#", 1)[0].strip().partition("@")
            name = name.strip()
            if name and (not suites or self.suite in suites.replace(" ", "").split(",")):
                out.append(name)
        return out

    def digest(self) -> str:
        h = hashlib.sha256()
        h.update(f"suite={self.suite}\0arch={ARCH}\0".encode())
        for layer in self.layers:
            if layer != self.directory:  # a one-layer recipe hashes as it always has
                h.update(f"layer={layer.name}\0".encode())
            for path in sorted(p for p in layer.rglob("*") if p.is_file()):
                rel = path.relative_to(layer).as_posix()
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
