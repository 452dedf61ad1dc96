"""Node images: a suite image plus a kit, made into a Kubernetes node.

Built by provisioning, like any node: a one-machine lab boots the suite
image with the kit's registry and file server on its network; the guest
downloads the kit's binaries from the file server, kubelab writes the files
the upstream packages install (node/packages.py), containerd's config for
the containerd version in that guest, and the mirror configuration; with
`preload`, `crictl pull` fetches every kit image through the mirror. The
guest is then cleaned of everything that must differ per machine
(machine-id, host keys, DHCP leases, logs), powered off, and its disk is
flattened into a standalone qcow2 next to the suite images.

    <cache>/images/node-sid-v1.36.3-<hash>/
        root.qcow2  vmlinuz  initrd.img  manifest.json   (same shape as a suite image)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import time

from .. import bringup, paths
from ..capacity import check_capacity
from ..errors import ImageError
from ..lab import LabSpec, MachineSpec
from ..progress import Progress
from . import build as image_build
from . import store
from .recipe import Recipe

PROVISION_CPUS = 2
PROVISION_MEMORY = 2048
POWER_OFF_TIMEOUT = 120.0
NODE_FORMAT = 1  # bump when the provisioning steps change


def _digest(base: store.Image, kit: dict, preload: bool, files: dict[str, str]) -> str:
    blob = {"format": NODE_FORMAT, "base": base.id, "components": {k: v["sha256"] for k, v in kit["components"].items()},
            "images": {r: v["manifest"] for r, v in kit["images"].items()} if preload else {},
            "files": files, "preload": preload}
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()


def image_id(suite: str, kubernetes: str, digest: str, containerd: str | None = None) -> str:
    built = f"-containerd-v{containerd.lstrip('v')}" if containerd else ""
    return f"node-{suite}{built}-{kubernetes}-{digest[:12]}"


def _node_files(containerd_version: str, sandbox: str) -> dict[str, str]:
    from ..node import containerd_config, packages
    from ..serve import mirror

    out = {f.path: f.content for f in packages.files()}
    out.update(mirror.hosts_files())
    out["/etc/containerd/config.toml"] = containerd_config.config_toml(containerd_version, sandbox_image=sandbox)
    return out


def plan(base: store.Image, kit: dict, preload: bool) -> tuple[dict[str, str], str]:
    """(files kubelab writes into the node, the node image's digest)."""
    pause = next(r for r in kit["kubeadm_images"] if "/pause:" in r)
    files = _node_files(base.versions["containerd"], pause)
    return files, _digest(base, kit, preload, files)


def is_current(image: store.Image) -> bool:
    """A node image whose suite image, kit and provisioning are all still the current ones."""
    from ..artifacts import kit as kits
    from ..artifacts.versions import KubeVersion
    from ..errors import HarnessError

    from .containerd_image import current_layer

    m = image.manifest
    try:
        built = m.get("containerd_build")
        base = current_layer(m["suite"], built["version"]) if built else store.find(Recipe.debian(m["suite"]))
        kit = kits.load_kit(KubeVersion.parse(m["kubernetes"]["version"]))
    except (HarnessError, KeyError):
        return False
    return base is not None and base.id == m["base_image"] and \
        plan(base, kit, bool(m["preloaded"]))[1] == m["node_digest"]


def ensure(suite: str, kubernetes: str, progress: Progress | None = None, preload: bool = False,
           rebuild: bool = False, containerd: str | None = None) -> store.Image:
    """The node image of (suite, kit), built if it is not in the cache; with `containerd`,
    on the suite image whose containerd was built from source (containerd_image.py)."""
    from ..artifacts import kit as kits
    from ..artifacts.versions import KubeVersion
    from .containerd_image import base_image

    progress = progress or Progress()
    version = KubeVersion.parse(kubernetes)
    kit = kits.load_kit(version)
    base = base_image(suite, containerd, progress)
    files, digest = plan(base, kit, preload)
    final = paths.images_dir() / image_id(suite, version.tag, digest, containerd)
    if (final / "manifest.json").exists() and not rebuild:
        return store.load(final)
    return _build(base, kit, version.tag, files, preload, final, digest, progress)


def _build(base, kit, tag, files, preload, final, digest, progress) -> store.Image:
    """Provision a one-machine lab booted from `base`, then flatten its disk into `final`."""
    from ..remote.ssh import SshRemote

    started = time.time()
    built = base.manifest.get("containerd_build", {}).get("version")
    cpus = min(PROVISION_CPUS, os.cpu_count() or 1)
    spec = LabSpec(f"nodeimg-{digest[:6]}", base.suite, "libvirt", (MachineSpec("node1", "node", cpus, PROVISION_MEMORY),),
                   kubernetes=tag, node_image=False, containerd=built)
    check_capacity(spec.machines, kubernetes=tag)
    backend = bringup.ready(spec.backend, progress)
    lab = bringup.start(spec, base, backend, progress)
    work = paths.images_dir() / f".build-{final.name}-{os.getpid()}"
    try:
        machine = lab.state["machines"][0]["name"]
        with SshRemote(lab.ssh_target(machine)) as remote:
            versions = _provision(remote, kit, files, preload, progress)
            _seal(remote, progress)
        with progress.step("node image: power off"):
            backend.power_off(lab, machine, POWER_OFF_TIMEOUT)
        with progress.step("node image: flatten the disk into a standalone qcow2"):
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            subprocess.run(["qemu-img", "convert", "-O", "qcow2", str(backend.disk_file(lab, machine)),
                            str(work / "root.qcow2")], check=True, timeout=1200, capture_output=True)
            image_build.copy_boot_file(base.kernel, work / "vmlinuz")
            image_build.copy_boot_file(base.initrd, work / "initrd.img")
        manifest = {
            **{k: v for k, v in base.manifest.items() if k not in ("id", "built_at", "build_seconds")},
            "id": final.name, "base_image": base.id, "node_digest": digest,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "build_seconds": round(time.time() - started, 1),
            "kubernetes": {"version": tag, "go": kit["go"], **versions,
                           "components": {k: v["module"] for k, v in kit["components"].items()}},
            "preloaded": sorted(kit["images"]) if preload else [],
        }
        image_build.publish(work, final, manifest)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        bringup.down(lab.name, progress)
    progress.note(f"node image {final.name}: built in {time.time() - started:.0f}s")
    return store.load(final)


def _provision(remote, kit: dict, files: dict[str, str], preload: bool, progress: Progress) -> dict:
    from ..node import packages
    from ..serve import files as serve_files
    from ..serve.mirror import REGISTRY_HOST

    base_url = f"http://{REGISTRY_HOST}:{serve_files.PORT}"
    tag = kit["kubernetes"]
    cni = kit["components"]["cni-plugins"]["module"].rpartition("@")[2]
    crictl = kit["components"]["crictl"]["module"].rpartition("@")[2]
    fetch = []
    for component, _name, dest in packages.BINARIES:
        rel = f"cri-tools/{crictl}/crictl" if component == "crictl" else f"release/{tag}/bin/linux/amd64/{component}"
        fetch.append(f"curl -fsS --max-time 300 -o {dest} {base_url}/{rel} && chmod 755 {dest}")
    with progress.step("node image: binaries from the lab file server"):
        remote.run("mkdir -p " + " ".join(packages.DIRECTORIES), timeout=30, check=True)
        remote.run(" && ".join(fetch), timeout=900, check=True)
        listing = remote.run(f"curl -fsS --max-time 30 {base_url}/cni-plugins/{cni}/", timeout=60, check=True).stdout
        plugins = sorted(set(_links(listing)))
        if not plugins:
            raise ImageError(f"the file server listed no CNI plugins under cni-plugins/{cni}/")
        remote.run(" && ".join(f"curl -fsS --max-time 120 -o {packages.CNI_DIR}/{p} {base_url}/cni-plugins/{cni}/{p}"
                               f" && chmod 755 {packages.CNI_DIR}/{p}" for p in plugins), timeout=900, check=True)
    with progress.step("node image: kubelet unit, kubeadm drop-in, containerd and mirror configuration"):
        for path, content in sorted(files.items()):
            remote.run(f"mkdir -p {shlex.quote(os.path.dirname(path))}", timeout=30, check=True)
            remote.put(content.encode(), path)
        remote.run("systemctl daemon-reload && systemctl enable kubelet && systemctl restart containerd",
                   timeout=120, check=True)
    versions = {
        "kubeadm": remote.run("kubeadm version -o short", timeout=120, check=True).stdout.strip(),
        "kubelet": remote.run("kubelet --version", timeout=120, check=True).stdout.strip(),
        "kubectl": remote.run("kubectl version --client -o json", timeout=120, check=True).stdout,
        "crictl": remote.run("crictl --version", timeout=120, check=True).stdout.strip(),
        "containerd": remote.run("containerd --version", timeout=60, check=True).stdout.strip(),
        "cni_plugins": cni,
    }
    versions["kubectl"] = json.loads(versions["kubectl"])["clientVersion"]["gitVersion"]
    if preload:
        for ref in sorted(kit["images"]):
            with progress.step(f"node image: preload {ref}"):
                remote.run(f"crictl pull {shlex.quote(ref)}", timeout=900, check=True)
    return versions


def _links(html: str) -> list[str]:
    """File names in http.server's directory listing."""
    return re.findall(r'href="([^"/?]+)"', html)


def _seal(remote, progress: Progress) -> None:
    """Leave nothing that must differ per machine or that a later boot would trip on."""
    with progress.step("node image: clean per-machine state"):
        remote.run(" ; ".join([
            "systemctl stop kubelet",
            "systemctl stop containerd",
            ": > /etc/machine-id",
            "rm -f /var/lib/dbus/machine-id && ln -s /etc/machine-id /var/lib/dbus/machine-id",
            "rm -f /etc/ssh/ssh_host_* /root/.ssh/authorized_keys",
            "rm -rf /var/lib/systemd/network/* /run/systemd/netif/leases/*",
            "journalctl --rotate --vacuum-time=1s >/dev/null 2>&1 || true",
            "rm -rf /var/log/journal/* /tmp/* /var/tmp/*",
            "sync",
        ]), timeout=180)
