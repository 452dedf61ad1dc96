"""What the kit builds from a git tag (git_source.py), by name: the store entry of a release and
the images made from it, under the refs upstream publishes them as. Shared by kubespray's extras
(which pulls them under kubespray's refs) and the kubeadm track's calico."""

from __future__ import annotations

from pathlib import Path

from ..oci import build as oci_build
from ..oci import catalog
from ..progress import Progress
from . import build, components, git_source, gotool, store
from . import kit as kits

COMPONENTS = {"nerdctl": components.nerdctl, "node-cache": components.node_cache,
              "cluster-proportional-autoscaler": components.autoscaler, "calico": components.calico}


def entry(name: str, version: str, progress: Progress, rebuild: bool = False) -> store.Entry:
    """Release `version` of git source `name` (calico 3.31.7), built in its exported tag or found
    in the store. Callers hold the store lock."""
    tree = git_source.prepared(git_source.REPOSITORIES[name], version)
    return build.ensure(COMPONENTS[name](tree), gotool.go_version(), progress, rebuild)


def image(recipe_of, name: str, ref: str, version: str, kit: dict, progress: Progress,
          rebuild: bool = False) -> Path:
    """The OCI layout of an image made from git source `name`'s release (`recipe_of(ref)`, or with
    calico-node's files), in the store. What else the recipe takes (calico's CNI image: the
    kit's plugins) comes from `kit`'s components."""
    with build.store_lock(progress):
        made = entry(name, version, progress, rebuild)
        if recipe_of is catalog.calico_node:
            recipe = recipe_of(ref, [f for f in made.files if f.startswith("filesystem/")])
        else:
            recipe = recipe_of(ref)
        entries = {c: kits.kit_entry(kit, c) for c in {b.component for b in recipe.binaries} - {name}}
        return oci_build.ensure_image(recipe, {name: made, **entries}, progress, rebuild).directory
