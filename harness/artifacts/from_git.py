"""What the kit builds from a git tag (git_source.py), by name: the store entry of a release and
the images made from it, under the refs upstream publishes them as. Shared by kubespray's extras
(which pulls them under kubespray's refs) and the kubeadm track's calico."""

from __future__ import annotations

from pathlib import Path

from ..oci import build as oci_build
from ..oci import catalog
from ..progress import Progress
from . import build, components, git_source, gotool, store

COMPONENTS = {"nerdctl": components.nerdctl, "node-cache": components.node_cache,
              "cluster-proportional-autoscaler": components.autoscaler, "calico": components.calico}


def entry(name: str, version: str, progress: Progress, rebuild: bool = False) -> store.Entry:
    """Release `version` of git source `name` (calico 3.31.7), built in its exported tag or found
    in the store. Callers hold the store lock."""
    tree = git_source.prepared(git_source.REPOSITORIES[name], version)
    return build.ensure(COMPONENTS[name](tree), gotool.go_version(), progress, rebuild)


def image(recipe_of, name: str, ref: str, version: str, progress: Progress, rebuild: bool = False,
          cni_plugins: store.Entry | None = None) -> Path:
    """The OCI layout of an image made from git source `name`'s release (`recipe_of(ref)`, or with
    calico-node's files), in the store. calico's CNI image also carries the kit's `cni_plugins`."""
    with build.store_lock(progress):
        made = entry(name, version, progress, rebuild)
        entries = {made.data["component"]: made}
        if recipe_of is catalog.calico_node:
            recipe = recipe_of(ref, [f for f in made.files if f.startswith("filesystem/")])
        else:
            recipe = recipe_of(ref)
        if recipe_of is catalog.calico_cni:
            entries["cni-plugins"] = cni_plugins
        return oci_build.ensure_image(recipe, entries, progress, rebuild).directory
