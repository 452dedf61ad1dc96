"""A kit: every artifact one Kubernetes release needs in the lab, built or found.

    check -> kubernetes binaries -> ask the built kubeadm for its image list
          -> etcd, CoreDNS (at the tags kubeadm names), flannel, CNI plugins, crictl, pause

The kit record (<cache>/artifacts/kits/kubernetes-vX.json) names the store
entries of one release, so later steps (images, node images, the lab's file
server) find them without building anything.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..errors import ArtifactError, KitNotBuilt, UsageError
from ..fsutil import write_json
from ..progress import Progress
from ..oci import catalog
from ..serve import files as serve_files
from . import archives, build, components, gotool, store
from .versions import (CNI_PLUGINS, FLANNEL, FLANNEL_CNI_PLUGIN_MODULE, FLANNEL_CNI_PLUGIN_TAG, SUPPORTED_MINORS,
                       KubeVersion)

FLANNEL_IMAGE = f"ghcr.io/flannel-io/flannel:{FLANNEL}"
FLANNEL_CNI_IMAGE = f"ghcr.io/flannel-io/flannel-cni-plugin:{FLANNEL_CNI_PLUGIN_TAG}"
TOOLBOX_IMAGE = catalog.TOOLBOX_IMAGE  # kubelab's own test image

# 2: the file tree also holds kubespray's paths (dl.k8s.io/..., the CNI and crictl archives)
KIT_SCHEMA = 2


def kits_dir() -> Path:
    return paths.artifacts_dir() / "kits"


def check_version(text: str) -> KubeVersion:
    """Refuse a version the kit cannot build or the module proxy does not serve, before building."""
    version = KubeVersion.parse(text)
    version.check_supported()
    ok, served = gotool.is_served("k8s.io/kubernetes", version.tag, _in_range)
    if ok:
        return version
    raise UsageError(
        f"--kubernetes {version}: k8s.io/kubernetes@{version.tag} is not served by the Go module proxy; "
        f"served here: {', '.join(v.lstrip('v') for v in served) or 'none in 1.34-1.37'}")


def _in_range(tag: str) -> bool:
    m = re.match(r"^v1\.(\d+)\.\d+$", tag)
    return bool(m) and int(m.group(1)) in SUPPORTED_MINORS


@dataclass(frozen=True)
class ImageRefs:
    """What `kubeadm config images list` prints, by component."""
    refs: tuple[str, ...]

    def tag_of(self, repo_suffix: str) -> str:
        for ref in self.refs:
            repo, _, tag = ref.rpartition(":")
            if repo.endswith("/" + repo_suffix):
                return tag
        raise ArtifactError(f"kubeadm's image list has no `{repo_suffix}`: {list(self.refs)}")

    @property
    def etcd_module_version(self) -> str:
        """etcd image tag `3.6.8-0` -> module version v3.6.8 (the `-0` is the image revision)."""
        return "v" + self.tag_of("etcd").split("-")[0]


def kubeadm_images(kubeadm: Path, version: KubeVersion) -> ImageRefs:
    cmd = [str(kubeadm), "config", "images", "list", "--kubernetes-version", version.tag, "-o", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise ArtifactError(f"`{' '.join(cmd)}` exited {out.returncode}: {out.stderr.strip()[-800:]}")
    return ImageRefs(tuple(json.loads(out.stdout)["images"]))


def _upstream_go_line(module: str, version: str) -> str:
    info = gotool.download(module, version)
    return gotool.module_go_line(Path(info["GoMod"]).read_text())


def build_kit(version: KubeVersion, progress: Progress, rebuild: bool = False) -> dict:
    """Build (or find) every artifact of `version`; write and return the kit record."""
    started = time.monotonic()
    go_version = gotool.go_version()
    with build.store_lock(progress):
        info = gotool.download("k8s.io/kubernetes", version.tag)
        release_time = json.loads(Path(info["Info"]).read_text())["Time"]
        kube = components.kubernetes(version, Path(info["GoMod"]).read_text(), release_time)
        entries: dict[str, store.Entry] = {}
        for c in kube:
            entries[c.name] = build.ensure(c, go_version, progress, rebuild)
        images = kubeadm_images(entries["kubeadm"].path("kubeadm"), version)
        etcd_v = images.etcd_module_version
        coredns_v = images.tag_of("coredns")
        cni_mod, cni_old = FLANNEL_CNI_PLUGIN_MODULE
        rest = [
            components.etcd(etcd_v, _upstream_go_line("go.etcd.io/etcd/server/v3", etcd_v)),
            components.coredns(coredns_v, _upstream_go_line("github.com/coredns/coredns", coredns_v)),
            components.flannel(_upstream_go_line("github.com/flannel-io/flannel", FLANNEL)),
            components.flannel_cni_plugin(_upstream_go_line(cni_mod, cni_old)),
            components.cni_plugins(_upstream_go_line("github.com/containernetworking/plugins", CNI_PLUGINS)),
            components.crictl(version.crictl, _upstream_go_line("sigs.k8s.io/cri-tools", version.crictl)),
        ]
        for c in rest:
            entries[c.name] = build.ensure(c, go_version, progress, rebuild)
        entries["pause"] = build.ensure_pause(images.tag_of("pause"), progress, rebuild)
        layouts = _images(images, entries, progress, rebuild)
        storage = _registry(layouts, progress)
        files_root = serve_files.write_tree(version.tag, file_links(version, entries))
        record = {
            "schema": KIT_SCHEMA,
            "kubernetes": version.tag,
            "go": go_version,
            "kubeadm_images": list(images.refs),
            "components": {name: {"key": e.key, "module": e.data["module"], "sha256": e.data["sha256"]}
                           for name, e in entries.items()},
            "images": {ref: {"key": e.key, "manifest": e.data["image"]["manifest"], "size": e.data["size"]}
                       for ref, e in layouts.items()},
            "registry": str(storage),
            "files": str(files_root),
            "seconds": round(time.monotonic() - started, 1),
        }
        write_json(kits_dir() / f"kubernetes-{version.tag}.json", record)
    return record


def build_kubeadm(version: KubeVersion, progress: Progress) -> Path:
    """kubeadm alone, for checks that need no kit (its configs validated by each minor's kubeadm)."""
    go_version = gotool.go_version()
    with build.store_lock(progress):
        info = gotool.download("k8s.io/kubernetes", version.tag)
        release_time = json.loads(Path(info["Info"]).read_text())["Time"]
        kubeadm = next(c for c in components.kubernetes(version, Path(info["GoMod"]).read_text(), release_time)
                       if c.name == "kubeadm")
        return build.ensure(kubeadm, go_version, progress).path("kubeadm")


def _images(refs: ImageRefs, entries: dict[str, store.Entry], progress: Progress,
            rebuild: bool) -> dict[str, store.Entry]:
    from ..oci import build as oci_build
    from ..oci import catalog

    out = {}
    for recipe in catalog.recipes(list(refs.refs), FLANNEL_IMAGE, FLANNEL_CNI_IMAGE):
        out[recipe.ref] = oci_build.ensure_image(recipe, entries, progress, rebuild)
    return out


def _registry(layouts: dict[str, store.Entry], progress: Progress) -> Path:
    """The registry storage holding exactly these images, pushed once with skopeo."""
    from ..serve import registry

    digest = store.tree_digest({ref: {"sha256": e.data["image"]["manifest"]} for ref, e in layouts.items()}
                               | {"push format": {"sha256": str(registry.PUSH_FORMAT)}})
    return registry.populate({ref: e.directory for ref, e in layouts.items()}, digest, progress)


def file_links(version: KubeVersion, entries: dict[str, store.Entry]) -> dict[str, Path]:
    """The file server's tree, in the layout of the upstream download sites: the node image's
    paths, and the same binaries below their upstream host (dl.k8s.io/...), where kubespray's
    `files_repo` layout looks for them (harness/kubespray/serving.py)."""
    links = {}
    for c in components.KUBERNETES_COMMANDS:
        release = f"release/{version.tag}/bin/linux/amd64/{c}"
        links[release] = links[f"dl.k8s.io/{release}"] = entries[c].path(c)
    cni = entries["cni-plugins"]
    cni_v = cni.data['module'].rpartition('@')[2]
    links.update({f"cni-plugins/{cni_v}/{name}": cni.path(name) for name in cni.files})
    crictl = entries["crictl"]
    crictl_v = crictl.data['module'].rpartition('@')[2]
    links[f"cri-tools/{crictl_v}/crictl"] = crictl.path("crictl")
    # the release archives, at the GitHub paths kubespray's download.yml builds (cni_download_url,
    # crictl_download_url, kubespray v2.31.0): the CNI plugins the kit builds, and crictl
    github = "github.com"
    links[f"{github}/containernetworking/plugins/releases/download/{cni_v}/cni-plugins-linux-amd64-{cni_v}.tgz"] = \
        archives.tar_gz(f"cni-plugins-linux-amd64-{cni_v}.tgz", {f"./{n}": cni.path(n) for n in cni.files})
    links[f"{github}/kubernetes-sigs/cri-tools/releases/download/{crictl_v}/crictl-{crictl_v}-linux-amd64.tar.gz"] = \
        archives.tar_gz(f"crictl-{crictl_v}-linux-amd64.tar.gz", {"crictl": crictl.path("crictl")})
    return links


def load_kit(version: KubeVersion) -> dict:
    path = kits_dir() / f"kubernetes-{version.tag}.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise KitNotBuilt(f"no kit for Kubernetes {version}: `invoke artifacts.build --kubernetes {version}`") from None


def host_kubectl(kit: dict) -> Path:
    """The kit's kubectl in the file server's tree (`file_links`): it runs on the host too."""
    return Path(kit["files"]) / f"release/{kit['kubernetes']}/bin/linux/amd64/kubectl"


def kit_entry(kit: dict, component: str) -> store.Entry:
    """A component's store entry, verified; a damaged one is an error naming the fix."""
    key = kit["components"][component]["key"]
    entry, problems = store.lookup(key)
    if entry is None:
        why = "; ".join(problems) if problems else "missing from the store"
        raise ArtifactError(f"kit {kit['kubernetes']}: {component} ({key[:store.KEY_LEN]}) is {why}: "
                            f"`invoke artifacts.build --kubernetes {kit['kubernetes'].lstrip('v')}` rebuilds it")
    return entry
