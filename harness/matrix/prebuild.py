"""Before any cell starts: each containerd of the matrix built from source, its sid layer,
and the node images on it. Cells running side by side would otherwise each make them."""

from __future__ import annotations

from ..progress import Progress
from .cells import HOST


def build_containerd(cells, scenarios: dict, progress: Progress) -> None:
    from ..artifacts import containerd as built
    from ..artifacts import kit
    from ..images import containerd_image, node

    for version in dict.fromkeys(cl.built for cl in cells if cl.built):
        built.build_containerd(built.check_version(version), progress)
        containerd_image.ensure(containerd_image.SUITE, version, progress)
    for cl in cells:
        if cl.built and cl.kubernetes != HOST and cl.supported:
            tag = kit.check_version(cl.kubernetes)
            kit.build_kit(tag, progress)
            preload = any(scenarios[n].install.preload for n in cl.scenarios)
            node.ensure(containerd_image.SUITE, tag.tag, progress, preload=preload, containerd=cl.built)
