"""What `images.prune` removes: images whose recipe (or base, or build) changed since they
were made, and the Vagrant boxes and box volumes of images no lab uses any more."""

from __future__ import annotations

from ..lab import Lab
from . import build, store
from .recipe import LAYERS, SUITES, Recipe


def current_suite_images() -> set[str]:
    """The ids the guest recipes make today, for every suite."""
    return {Recipe.named(r, s).image_id for r in LAYERS for s in SUITES}


def keeps_image(image: store.Image, current: set[str]) -> bool:
    """A node image is kept while it matches its suite image and kit; a containerd image while
    it matches its suite image and containerd build; a suite image while its recipe is today's."""
    from . import containerd_image, node

    if image.manifest.get("kubernetes"):
        return node.is_current(image)
    return image.id in current or containerd_image.is_current(image)


def boxes_to_keep(current: set[str], labs_boxes: set[str]) -> set[str]:
    """The boxes of today's suite images, and every box a lab was made from."""
    from .box import BOX_PREFIX

    return {f"{BOX_PREFIX}{i}" for i in current} | {b for b in labs_boxes if b}


def prune() -> list[str]:
    """Remove what is no longer kept; return what was removed, one line each."""
    current = current_suite_images()
    removed = []
    for image in store.all_images():
        if not keeps_image(image, current):
            build.remove(image)
            removed.append(image.id)
    from .box import prune as prune_boxes
    from .box import vagrant_home

    if not vagrant_home().exists():
        return removed
    from ..machines.libvirt import LibvirtBackend
    from ..machines.vagrant_cli import VagrantCli

    pool = LibvirtBackend().storage_pool(create=False)
    in_use = {Lab.load(n).state.get("box") for n in Lab.names()}
    return removed + prune_boxes(VagrantCli(vagrant_home()), pool, boxes_to_keep(current, in_use))
