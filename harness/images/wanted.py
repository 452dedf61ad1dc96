"""The image `images.build` asks for, with what it needs built first: a suite image; or sid
with a containerd built from source; or a node image (a suite image plus a Kubernetes kit).
Every input is checked, and every version looked up, before anything is built."""

from __future__ import annotations

from .. import host
from ..errors import UsageError
from ..progress import Progress
from . import build, store
from .recipe import Recipe, check_suite


def check(suite: str, kubernetes: str | None, containerd: str | None, preload: bool,
          recipe: str = "debian") -> None:
    """Refuse option combinations that cannot make an image (no lookups)."""
    check_suite(suite)
    if recipe != "debian" and (kubernetes or containerd):
        raise UsageError(f"--recipe {recipe}: node images and built-containerd images are made on the debian "
                         "recipe; give --recipe alone with --suite")
    if preload and not kubernetes:
        raise UsageError("--preload needs --kubernetes VERSION (it preloads that kit's images)")
    if containerd:
        from .containerd_image import SUITE

        if suite != SUITE:
            raise UsageError(f"--containerd {containerd}: a containerd built from source goes into --suite {SUITE}")


def ensure(suite: str, kubernetes: str | None = None, containerd: str | None = None, preload: bool = False,
           rebuild: bool = False, progress: Progress | None = None, recipe: str = "debian") -> store.Image:
    progress = progress or Progress()
    check(suite, kubernetes, containerd, preload, recipe)
    from ..artifacts import containerd as built
    from ..artifacts import kit

    tag = built.check_version(containerd) if containerd else None
    version = kit.check_version(kubernetes) if kubernetes else None
    if tag:
        built.build_containerd(tag, progress)
    host.prepare()
    if version:
        from . import node

        kit.build_kit(version, progress)
        return node.ensure(suite, version.tag, progress, preload=preload, rebuild=rebuild, containerd=tag)
    if tag:
        from . import containerd_image

        return containerd_image.ensure(suite, tag, progress, rebuild=rebuild)
    return build.ensure(Recipe.named(recipe, suite), progress, rebuild=rebuild)
