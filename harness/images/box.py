"""kubelab's images as vagrant-libvirt boxes (the public box catalogue is closing).

A box is an uncompressed tar of box.img (the image's qcow2), vmlinuz,
initrd.img, metadata.json and a box Vagrantfile for direct kernel boot.
Its name carries the image id (recipe hash), so a rebuilt image is a new box
and re-adding the same image does nothing. When vagrant-libvirt first uses a
box it uploads box.img into the storage pool as `<box>_vagrant_box_image_*`;
`prune()` removes stale boxes together with those volumes.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

from .. import paths
from ..progress import Progress
from . import store

BOX_PREFIX = "kubelab-"
BOX_VAGRANTFILE = """\
# Direct kernel boot of a kubelab image: the kernel and initrd travel in the box.
box_dir = File.expand_path(File.dirname(__FILE__))
Vagrant.configure("2") do |config|
  config.vm.synced_folder ".", "/vagrant", disabled: true
  config.vm.provider :libvirt do |lv|
    lv.driver = "qemu"
    lv.kernel = File.join(box_dir, "vmlinuz")
    lv.initrd = File.join(box_dir, "initrd.img")
    lv.cmd_line = "{cmdline}"
    lv.disk_bus = "virtio"
    lv.nic_model_type = "virtio"
  end
end
"""


def box_name(image: store.Image) -> str:
    return f"{BOX_PREFIX}{image.id}"


def vagrant_home() -> Path:
    return paths.cache_dir() / "vagrant.d"


def box_file(image: store.Image) -> Path:
    return paths.cache_dir() / "boxes" / f"{box_name(image)}.box"


def package(image: store.Image) -> Path:
    """The .box file of `image`, written once (atomically) and reused."""
    target = box_file(image)
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    size_gib = int(image.manifest["disk_size"].rstrip("G"))  # the recipe's DISK_SIZE, e.g. "8G"
    metadata = json.dumps({"provider": "libvirt", "format": "qcow2", "virtual_size": size_gib}).encode()
    vagrantfile = BOX_VAGRANTFILE.format(cmdline=image.cmdline).encode()
    tmp = target.with_name(f".{target.name}.tmp")
    with tarfile.open(tmp, "w", format=tarfile.GNU_FORMAT) as tar:
        for name, data in (("metadata.json", metadata), ("Vagrantfile", vagrantfile)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        tar.add(image.disk, arcname="box.img")
        tar.add(image.kernel, arcname="vmlinuz")
        tar.add(image.initrd, arcname="initrd.img")
    tmp.rename(target)
    return target


def installed(cli) -> dict[str, list[str]]:
    """Boxes vagrant knows: name -> versions, from `vagrant box list --machine-readable`:
    `1796072400,,box-name,kubelab-debian-bookworm-49d212a2d7da` `...,box-version,0`."""
    out = cli.run(["box", "list", "--machine-readable"]).stdout
    boxes: dict[str, list[str]] = {}
    name = None
    for line in out.splitlines():
        parts = line.split(",", 3)
        if len(parts) < 4:
            continue
        if parts[2] == "box-name":
            name = parts[3]
            boxes.setdefault(name, [])
        elif parts[2] == "box-version" and name:
            boxes[name].append(parts[3])
    return boxes


def ensure(image: store.Image, cli, progress: Progress | None = None) -> str:
    """Add the box of `image` to vagrant unless it is there; returns its name."""
    progress = progress or Progress()
    name = box_name(image)
    if name in installed(cli):
        return name
    with progress.step(f"box {name}: package and add"):
        path = package(image)
        cli.run(["box", "add", "--name", name, str(path)], timeout=600)
    return name


def volume_prefix(name: str) -> str:
    """How vagrant-libvirt names the pool volume it uploads a box into."""
    return f"{name.replace('/', '-VAGRANTSLASH-')}_vagrant_box_image_"


def prune(cli, pool, keep: set[str]) -> list[str]:
    """Remove kubelab boxes not in `keep`, their .box files and uploaded volumes."""
    removed = []
    for name, versions in installed(cli).items():
        if name.startswith(BOX_PREFIX) and name not in keep:
            for version in versions:
                cli.run(["box", "remove", "--force", "--box-version", version, name])
            removed.append(f"box {name}")
    if pool is not None:
        pool.refresh(0)
        for vol in pool.listAllVolumes(0):
            if "_vagrant_box_image_" in vol.name() and not any(vol.name().startswith(volume_prefix(k)) for k in keep):
                vol.delete(0)
                removed.append(f"volume {vol.name()}")
    for f in (paths.cache_dir() / "boxes").glob(f"{BOX_PREFIX}*.box"):
        if f.stem not in keep:
            f.unlink()
            removed.append(f"file {f}")
    return removed
