"""What kubespray downloads beyond the kit, made here at the versions the checkout asks for.

Files, built from their Go modules in upstream's release layout and linked into the kit's file tree:

    etcd        etcd-v<V>-linux-amd64.tar.gz       etcd-v<V>-linux-amd64/{etcd,etcdctl,etcdutl}
                (roles/etcd/tasks/install_host.yml copies from that folder)
    runc        runc.amd64                         the static binary (runc's Makefile `static`)
    containerd  containerd-<V>-linux-amd64.tar.gz  bin/{containerd,containerd-shim-runc-v2,ctr}
                (unpacked with --strip-components=1: roles/container-engine/containerd/tasks/main.yml)
    nerdctl     nerdctl-<V>-linux-amd64.tar.gz     nerdctl (upstream's also holds the two rootless
                scripts, which kubespray never copies: roles/container-engine/nerdctl/tasks/main.yml)
    calicoctl   calicoctl-linux-amd64              the binary
    calico_crds crds.yaml                          calico's manifests/crds.yaml at the tag

The versions are the checkout's (etcd_version, runc_version, containerd_version), not
kubeadm's: kubespray runs etcd as a host unit at its own pin. Each build is a store entry like
any kit component, so a second checkout asking for the same release finds it built; the links
are remembered beside the tree (serve/files.py), so a rebuild of the kit keeps them.

Images, made from Debian's packages (oci/catalog.py) under the ref kubespray pulls, and pushed
into the kit's registry storage beside its images:

    nginx       docker.io/library/nginx:<kubespray's tag>   Debian's nginx and its stream module

and from a clone of their repository at kubespray's tag (artifacts/git_source.py), with what
each upstream image carries at run time:

    nodelocaldns   registry.k8s.io/dns/k8s-dns-node-cache           node-cache on iptables
    dnsautoscaler  registry.k8s.io/cpa/cluster-proportional-autoscaler
    calico_node, calico_cni, calico_policy   quay.io/calico/{node,cni,kube-controllers}
"""

from __future__ import annotations

from pathlib import Path

from ..artifacts import archives, build, components, from_git, gotool, prerequisites
from ..artifacts import containerd as built_containerd
from ..oci import build as oci_build
from ..progress import Progress
from ..serve import files as serve_files
from ..serve import registry
from .downloads import Download
from .sources import SOURCES, module_version, release

IMAGE_RECIPES = {name: source.image for name, source in SOURCES.items() if source.image}  # given kubespray's ref
RECIPES = tuple(name for name, source in SOURCES.items() if source.recipe)
# minutes on this 2-core host with Go's cache warm, for the estimate printed before building
# (measured here: etcd 3.6.14 55 s, runc 1.4.3 23 s, containerd 2.3.4 108 s, nerdctl 2.2.2 38 s,
# node-cache 1.25.0 59 s; calico's programs share one build, counted once)
MINUTES = {"etcd": 1, "runc": 0.5, "containerd": 2, "nerdctl": 1, "nginx": 0.5, "nodelocaldns": 1.5,
           "dnsautoscaler": 1, "calico_node": 12}


def buildable(missing: list[Download]) -> list[Download]:
    return [d for d in missing if (d.kind == "file" and d.name in RECIPES)
            or (d.kind == "image" and d.name in IMAGE_RECIPES)]


def estimate(downloads: list[Download]) -> str:
    return f"about {max(1, round(sum(MINUTES.get(d.name, 0.5) for d in downloads)))} min"


def ensure(missing: list[Download], kit: dict, progress: Progress, rebuild: bool = False) -> dict[str, str]:
    """Build (or find) each buildable download: a file linked at kubespray's path in the kit's
    file tree (the kit record's `files`), an image pushed into its registry storage (`registry`).
    {path or ref: where it is now}."""
    todo = buildable(missing)
    links = {d.path: make(d.name, module_version(d), d.file_name, progress, rebuild)
             for d in todo if d.kind == "file"}
    images = {d.image: make_image(d.name, d.image, progress, rebuild, release(d), kit) for d in todo
              if d.kind == "image"}
    with build.store_lock(progress):  # as the kit build that writes the tree and the storage
        if links:
            serve_files.add_links(Path(kit["files"]), links)
        pushed = registry.add(Path(kit["registry"]), images, progress) if images else {}
    return {**{p: str(f) for p, f in links.items()}, **pushed}


def make_image(name: str, ref: str, progress: Progress, rebuild: bool = False, version: str = "",
               kit: dict | None = None) -> Path:
    """The OCI layout of image `name` under kubespray's `ref`, in the store; an image of a git
    source is made from its release `version` (and calico's CNI image from the kit's plugins)."""
    source = SOURCES[name]
    if source.git:
        return from_git.image(source.image, source.git.component, ref, version, kit, progress, rebuild)
    with build.store_lock(progress):
        return oci_build.ensure_image(IMAGE_RECIPES[name](ref), {}, progress, rebuild).directory


def make(name: str, version: str, file_name: str, progress: Progress, rebuild: bool = False) -> Path:
    """The file `file_name` (kubespray's name for it) of release `version` (v3.6.14) of `name`.
    `rebuild`: build etcd and runc again (containerd: `invoke artifacts.build --containerd V --rebuild`)."""
    if name == "containerd":
        record = prerequisites.ensure_containerd(version, progress)
        binaries = {Path(p).name: f for p, f in built_containerd.binaries(record).items()}
        return archives.tar_gz(file_name, {f"bin/{program}": f for program, f in binaries.items()})
    if SOURCES[name].git:
        with build.store_lock(progress):
            entry = from_git.entry(SOURCES[name].git.component, version.lstrip("v"), progress, rebuild)
        if name == "nerdctl":
            return archives.tar_gz(file_name, {"nerdctl": entry.path("nerdctl")})
        return entry.path("crds.yaml" if name == "calico_crds" else name)
    [module] = SOURCES[name].modules
    go_version = gotool.go_version()
    with build.store_lock(progress):
        go_line = gotool.module_go_line(Path(gotool.download(module, version)["GoMod"]).read_text())
        if name == "etcd":
            entry = build.ensure(components.etcd(version, go_line), go_version, progress, rebuild)
            folder = file_name.removesuffix(".tar.gz")
            return archives.tar_gz(file_name, {f"{folder}/{p}": entry.path(p) for p in entry.files})
        entry = build.ensure(components.runc(version, go_line), go_version, progress, rebuild)
        return entry.path("runc")
