"""What of kubespray's download list a built kit can serve to a lab.

kubespray fetches each file from `files_repo` + the upstream URL without its scheme
(Download.path: dl.k8s.io/release/v1.36.3/bin/linux/amd64/kubeadm) and pulls each
image by its upstream repo:tag through the lab registry. The kit serves a file when its
file tree (artifacts/files/<tag>/) holds that path, and an image when the registry storage
it pushed holds that reference (its own images, and those kubelab added for kubespray since).
Whatever is left is named, so a run stops before any machine exists instead of at kubespray's
first 404.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..fsutil import sha256_file
from ..serve import registry
from .downloads import Download

DOCKER_HUB = "docker.io/"


@dataclass(frozen=True)
class Serving:
    files: dict[str, Path]      # download name -> the kit's file at kubespray's path
    missing_files: list[Download]
    missing_images: list[Download]

    @property
    def complete(self) -> bool:
        return not self.missing_files and not self.missing_images

    def problems(self) -> list[str]:
        """One line per download the kit lacks: what kubespray would ask for, and where."""
        return ([f"file {d.name}: {d.path}" for d in self.missing_files]
                + [f"image {d.name}: {d.image}" for d in self.missing_images])


def _same_image(a: str, b: str) -> bool:
    """Docker Hub references with and without their `docker.io/` (and `library/`) prefix are one image."""
    def norm(ref: str) -> str:
        ref = ref.removeprefix(DOCKER_HUB)
        return ref.removeprefix("library/")
    return norm(a) == norm(b)


def serving(downloads: list[Download], kit: dict) -> Serving:
    """Match kubespray's downloads against the kit record (harness/artifacts/kit.py)."""
    tree = Path(kit["files"])
    files, missing_files, missing_images = {}, [], []
    images = list(kit.get("images", {}))
    if kit.get("registry"):
        images += list(registry.served(Path(kit["registry"])))
    for d in downloads:
        if d.kind == "file":
            f = tree / d.path
            if f.is_file():
                files[d.name] = f
            else:
                missing_files.append(d)
        elif not any(_same_image(d.image, ref) for ref in images):
            missing_images.append(d)
    return Serving(files, missing_files, missing_images)


def sha256_of(files: dict[str, Path]) -> dict[str, str]:
    """{download name: hex sha256} of the files the kit serves: the checksums kubelab passes."""
    return {name: sha256_file(f) for name, f in sorted(files.items())}
