"""The image cache: one folder per built image, each with a manifest.

    <cache>/images/debian-bookworm-0123456789ab/
        root.qcow2  vmlinuz  initrd.img  manifest.json
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..errors import ImageError
from .recipe import Recipe

MANIFEST_SCHEMA = 1


@dataclass(frozen=True)
class Image:
    directory: Path
    manifest: dict

    @property
    def id(self) -> str:
        return self.directory.name

    @property
    def suite(self) -> str:
        return self.manifest["suite"]

    @property
    def disk(self) -> Path:
        return self.directory / "root.qcow2"

    @property
    def kernel(self) -> Path:
        return self.directory / "vmlinuz"

    @property
    def initrd(self) -> Path:
        return self.directory / "initrd.img"

    @property
    def cmdline(self) -> str:
        return self.manifest["cmdline"]

    @property
    def versions(self) -> dict:
        return self.manifest["versions"]


def load(directory: Path) -> Image:
    try:
        manifest = json.loads((directory / "manifest.json").read_text())
    except (OSError, ValueError) as exc:
        raise ImageError(f"{directory}: unreadable manifest.json ({exc}); delete the folder to rebuild") from exc
    if manifest.get("schema") != MANIFEST_SCHEMA:
        raise ImageError(f"{directory}: manifest schema {manifest.get('schema')!r}, expected {MANIFEST_SCHEMA}")
    image = Image(directory, manifest)
    for part in (image.disk, image.kernel, image.initrd):
        if not part.is_file():
            raise ImageError(f"{directory}: {part.name} is missing; delete the folder to rebuild")
    return image


def all_images() -> list[Image]:
    root = paths.images_dir()
    if not root.is_dir():
        return []
    found = []
    for d in sorted(root.iterdir()):
        if d.is_dir() and not d.name.startswith(".") and (d / "manifest.json").exists():
            try:
                found.append(load(d))
            except ImageError:
                continue
    return found


def find(recipe: Recipe) -> Image | None:
    """The image of exactly this recipe, if it was built."""
    d = paths.images_dir() / recipe.image_id
    return load(d) if (d / "manifest.json").exists() else None
