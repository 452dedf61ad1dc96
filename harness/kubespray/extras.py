"""What kubespray downloads beyond the kit, made here at the versions the checkout asks for.

Files, built from their Go modules in upstream's release layout and linked into the kit's file tree:

    etcd        etcd-v<V>-linux-amd64.tar.gz       etcd-v<V>-linux-amd64/{etcd,etcdctl,etcdutl}
                (roles/etcd/tasks/install_host.yml copies from that folder)
    runc        runc.amd64                         the static binary (runc's Makefile `static`)
    containerd  containerd-<V>-linux-amd64.tar.gz  bin/{containerd,containerd-shim-runc-v2,ctr}
                (unpacked with --strip-components=1: roles/container-engine/containerd/tasks/main.yml)
    nerdctl     nerdctl-<V>-linux-amd64.tar.gz     nerdctl (upstream's also holds the two rootless
                scripts, which kubespray never copies: roles/container-engine/nerdctl/tasks/main.yml)

The versions are the checkout's (etcd_version, runc_version, containerd_version), not
kubeadm's: kubespray runs etcd as a host unit at its own pin. Each build is a store entry like
any kit component, so a second checkout asking for the same release finds it built; the links
are remembered beside the tree (serve/files.py), so a rebuild of the kit keeps them.

Images, made from Debian's packages (oci/catalog.py) under the ref kubespray pulls, and pushed
into the kit's registry storage beside its images:

    nginx       docker.io/library/nginx:<kubespray's tag>   Debian's nginx and its stream module
"""

from __future__ import annotations

from pathlib import Path

from ..artifacts import archives, build, components, gotool, prerequisites
from ..artifacts import containerd as built_containerd
from ..oci import build as oci_build
from ..progress import Progress
from ..serve import files as serve_files
from ..serve import registry
from .downloads import Download
from .sources import SOURCES, module_version

IMAGE_RECIPES = {name: source.image for name, source in SOURCES.items() if source.image}  # given kubespray's ref
RECIPES = tuple(name for name, source in SOURCES.items() if source.recipe)
# minutes on this 2-core host with Go's cache warm, for the estimate printed before building
# (measured here: etcd 3.6.14 55 s, runc 1.4.3 23 s, containerd 2.3.4 108 s, nerdctl 2.0.5 146 s)
MINUTES = {"etcd": 1, "runc": 0.5, "containerd": 2, "nerdctl": 2.5, "nginx": 0.5}


def buildable(missing: list[Download]) -> list[Download]:
    return [d for d in missing if (d.kind == "file" and d.name in RECIPES)
            or (d.kind == "image" and d.name in IMAGE_RECIPES)]


def estimate(downloads: list[Download]) -> str:
    return f"about {max(1, round(sum(MINUTES.get(d.name, 2) for d in downloads)))} min"


def ensure(missing: list[Download], kit: dict, progress: Progress, rebuild: bool = False) -> dict[str, str]:
    """Build (or find) each buildable download: a file linked at kubespray's path in the kit's
    file tree (the kit record's `files`), an image pushed into its registry storage (`registry`).
    {path or ref: where it is now}."""
    todo = buildable(missing)
    links = {d.path: make(d.name, module_version(d), d.file_name, progress, rebuild)
             for d in todo if d.kind == "file"}
    images = {d.image: make_image(d.name, d.image, progress, rebuild) for d in todo if d.kind == "image"}
    with build.store_lock(progress):  # as the kit build that writes the tree and the storage
        if links:
            serve_files.add_links(Path(kit["files"]), links)
        pushed = registry.add(Path(kit["registry"]), images, progress) if images else {}
    return {**{p: str(f) for p, f in links.items()}, **pushed}


def make_image(name: str, ref: str, progress: Progress, rebuild: bool = False) -> Path:
    """The OCI layout of image `name` under kubespray's `ref`, in the store."""
    with build.store_lock(progress):
        return oci_build.ensure_image(IMAGE_RECIPES[name](ref), {}, progress, rebuild).directory


def make(name: str, version: str, file_name: str, progress: Progress, rebuild: bool = False) -> Path:
    """The file `file_name` (kubespray's name for it) of release `version` (v3.6.14) of `name`.
    `rebuild`: build etcd and runc again (containerd: `invoke artifacts.build --containerd V --rebuild`)."""
    if name == "containerd":
        record = prerequisites.ensure_containerd(version, progress)
        binaries = {Path(p).name: f for p, f in built_containerd.binaries(record).items()}
        return archives.tar_gz(file_name, {f"bin/{program}": f for program, f in binaries.items()})
    [module] = SOURCES[name].modules
    go_version = gotool.go_version()
    with build.store_lock(progress):
        go_line = gotool.module_go_line(Path(gotool.download(module, version)["GoMod"]).read_text())
        if name == "etcd":
            entry = build.ensure(components.etcd(version, go_line), go_version, progress, rebuild)
            folder = file_name.removesuffix(".tar.gz")
            return archives.tar_gz(file_name, {f"{folder}/{p}": entry.path(p) for p in entry.files})
        if name == "nerdctl":
            entry = build.ensure(components.nerdctl(version, go_line), go_version, progress, rebuild)
            return archives.tar_gz(file_name, {"nerdctl": entry.path("nerdctl")})
        entry = build.ensure(components.runc(version, go_line), go_version, progress, rebuild)
        return entry.path("runc")
