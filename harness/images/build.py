"""Build a guest image offline from Debian's packages.

debootstrap -> recipe files + customize.sh -> kernel/initrd out for direct
kernel boot -> `mkfs.ext4 -d` (no loop device, no mount) -> qcow2. The
work happens in a hidden folder next to the cache entry and is renamed into
place only when complete, so an interrupted build leaves nothing half-made.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import time
from pathlib import Path

from .. import diskspace, paths, streamed
from ..errors import ImageError
from ..fsutil import write_json
from ..progress import Progress
from . import store
from .recipe import ARCH, Recipe, host_mirror

DISK_SIZE = "8G"
CMDLINE = "root=/dev/vda rw console=ttyS0 net.ifnames=0 quiet"
DEBOOTSTRAP_TIMEOUT = 1800
# Versions every manifest reports by name; the full package list is kept too.
KEY_PACKAGES = ("containerd", "runc", "systemd", "openssh-server", "containernetworking-plugins", "iptables")


def ensure(recipe: Recipe, progress: Progress | None = None, rebuild: bool = False) -> store.Image:
    """The image for `recipe`, built if it is not in the cache."""
    progress = progress or Progress()
    if not rebuild:
        image = store.find(recipe)
        if image:
            return image
    root = paths.images_dir()
    root.mkdir(parents=True, exist_ok=True)
    lock_path = root / f".lock-{recipe.image_id}"
    with open(lock_path, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress.note(f"image {recipe.image_id}: another build is running; waiting for it")
            with progress.activity(f"image {recipe.image_id}: waiting for the other build to finish"):
                fcntl.flock(lock, fcntl.LOCK_EX)
        if not rebuild:
            image = store.find(recipe)
            if image:
                return image
        _remove_abandoned_builds(root)
        return _build(recipe, progress)


def _remove_abandoned_builds(root: Path) -> None:
    """Work folders of builds whose process is gone (killed with SIGKILL)."""
    for work in root.glob(".build-*"):
        pid = work.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            remove_tree(work)


def run_tool(cmd: list[str], what: str, timeout: float, env=None, progress: Progress | None = None) -> str:
    """Run a build command, streaming its lines to the progress line; on failure
    the error carries the command and the last lines it printed."""
    progress_line = (lambda line: progress.update(f"{what}: {line[:100]}")) if progress else None
    done = streamed.run(cmd, timeout, env=env, on_line=progress_line)
    if done.exit_code is None:
        raise ImageError(f"{what}: `{' '.join(cmd)}` took longer than {timeout:g}s" + _tail(done.lines))
    if done.exit_code != 0:
        raise ImageError(f"{what}: `{' '.join(cmd)}` exited {done.exit_code}" + _tail(done.lines))
    return done.output


def _tail(lines: list[str], n: int = 20) -> str:
    return "\n  last output:\n" + "\n".join("    " + l for l in lines[-n:]) if lines else ""


def _debootstrap_log_errors(rootfs: Path, n: int = 12) -> str:
    """The lines of debootstrap's own log that say why (it is deleted with the work folder)."""
    log = rootfs / "debootstrap" / "debootstrap.log"
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    keep = [l for l in lines if any(w in l for w in ("error", "conflict", "rror:", "depends on", "not installing"))]
    return ("\n  from debootstrap.log:\n" + "\n".join("    " + l for l in keep[-n:])) if keep else ""


def _unmount_below(path: Path) -> None:
    """debootstrap mounts /proc and /sys in the target; a killed build can leave them."""
    prefix = str(path.resolve()) + "/"
    mounts = []
    for line in Path("/proc/mounts").read_text().splitlines():
        target = line.split()[1].replace("\\040", " ")
        if target.startswith(prefix):
            mounts.append(target)
    for target in sorted(mounts, key=len, reverse=True):
        subprocess.run(["umount", "-l", target], capture_output=True)


def remove_tree(path: Path) -> None:
    if path.exists():
        _unmount_below(path)
        subprocess.run(["rm", "-rf", "--one-file-system", str(path)], check=False)


def _copy_files(src: Path, dest: Path) -> None:
    for path in sorted(src.rglob("*")):
        target = dest / path.relative_to(src)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            os.chown(target, 0, 0)


def _package_versions(rootfs: Path) -> dict[str, str]:
    out = subprocess.run(
        ["dpkg-query", f"--admindir={rootfs}/var/lib/dpkg", "-W", "-f", "${Package}\t${Version}\t${Status}\n"],
        capture_output=True, text=True, check=True,
    ).stdout
    versions = {}
    for line in out.splitlines():
        name, version, status = line.split("\t")
        if status.endswith(" installed"):
            versions[name] = version
    return versions


def _os_release(rootfs: Path) -> dict[str, str]:
    info = {}
    for line in (rootfs / "etc/os-release").read_text().splitlines():
        key, _, value = line.partition("=")
        if key:
            info[key] = value.strip('"')
    return info


def _kernel_files(rootfs: Path) -> tuple[Path, Path, str]:
    kernels = sorted((rootfs / "boot").glob("vmlinuz-*"))
    if len(kernels) != 1:
        raise ImageError(f"expected one kernel in {rootfs}/boot, found {[k.name for k in kernels]}")
    release = kernels[0].name[len("vmlinuz-"):]
    initrd = rootfs / "boot" / f"initrd.img-{release}"
    if not initrd.exists():
        raise ImageError(f"no initrd for kernel {release} in {rootfs}/boot (initramfs-tools missing?)")
    return kernels[0], initrd, release


def _build(recipe: Recipe, progress: Progress) -> store.Image:
    digest = recipe.digest()  # once: an edit of the recipe mid-build must not rename the result
    image_id = f"{recipe.name}-{recipe.suite}-{digest[:12]}"
    final = paths.images_dir() / image_id
    work = paths.images_dir() / f".build-{image_id}-{os.getpid()}"
    rootfs = work / "rootfs"
    remove_tree(work)
    work.mkdir(parents=True)
    started = time.time()
    try:
        mirror = host_mirror()
        cmd = ["debootstrap", "--variant=minbase", f"--arch={ARCH}",
               f"--include={','.join(recipe.layer_packages(recipe.layers[0]))}",
               f"--cache-dir={_deb_cache(recipe.suite)}",
               recipe.suite, str(rootfs)]
        if mirror:
            cmd.append(mirror)
        with progress.step(f"image {image_id}: debootstrap {recipe.suite}"):
            try:
                run_tool(cmd, "debootstrap", DEBOOTSTRAP_TIMEOUT, progress=progress)
            except ImageError as exc:
                raise ImageError(f"{exc}{_debootstrap_log_errors(rootfs)}") from None
        for layer in recipe.layers[1:]:
            with progress.step(f"image {image_id}: {layer.name} packages"):
                _apt_install(rootfs, recipe.layer_packages(layer), progress)
        with progress.step(f"image {image_id}: customize"):
            env = dict(os.environ, ROOTFS=str(rootfs))
            for layer in recipe.layers:  # bottom first: a layer's files and script over the one below
                if (layer / "files").is_dir():
                    _copy_files(layer / "files", rootfs)
                if (layer / "customize.sh").exists():
                    run_tool([str(layer / "customize.sh")], f"{layer.name}/customize.sh", 300, env=env,
                             progress=progress)
            versions = _package_versions(rootfs)
            os_release = _os_release(rootfs)
            debian_version = (rootfs / "etc/debian_version").read_text().strip()
            kernel, initrd, release = _kernel_files(rootfs)
            shutil.copy2(kernel, work / "vmlinuz")
            shutil.copy2(initrd, work / "initrd.img")
        with progress.step(f"image {image_id}: filesystem and qcow2"):
            raw = work / "root.raw"
            run_tool(["truncate", "-s", DISK_SIZE, str(raw)], "truncate", 60)
            run_tool(["mkfs.ext4", "-q", "-F", "-L", "root", "-d", str(rootfs), str(raw)], "mkfs.ext4", 600)
            remove_tree(rootfs)
            run_tool(["qemu-img", "convert", "-O", "qcow2", str(raw), str(work / "root.qcow2")], "qemu-img", 600)
            raw.unlink()
        manifest = {
            "schema": store.MANIFEST_SCHEMA,
            "id": image_id,
            "recipe": recipe.name,
            "recipe_digest": digest,
            "suite": recipe.suite,
            "arch": ARCH,
            "mirror": mirror or "(debootstrap default)",
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "build_seconds": round(time.time() - started, 1),
            "cmdline": CMDLINE,
            "disk_size": DISK_SIZE,
            "versions": {
                "os": os_release.get("PRETTY_NAME", "?"),
                "debian_version": debian_version,
                "kernel": release,
                **{p: versions.get(p, "absent") for p in KEY_PACKAGES},
            },
            "packages": versions,
        }
        publish(work, final, manifest)
    except BaseException as exc:
        # asked before the work folder goes: its removal frees what filled the disk
        out_of_space = isinstance(exc, (ImageError, OSError)) and diskspace.ran_out(work.parent, str(exc).splitlines(),
                                                                                     exc)
        remove_tree(work)
        if out_of_space:
            raise diskspace.full(paths.images_dir(), f"image {image_id}", diskspace.IMAGE_NEEDS) from None
        raise
    progress.note(f"image {image_id}: built in {time.time() - started:.0f}s")
    return store.load(final)


def _apt_install(rootfs: Path, packages: list[str], progress: Progress) -> None:
    """A layer's packages, with apt's resolver in the new tree: debootstrap's `--include`
    cannot pick a provider of a virtual package (sid: polkitd's `default-logind | logind`,
    python3-cryptography's `python3-cffi-backend-api-min`), apt can. It runs on the build
    host, before customize.sh empties the tree's resolver; no service is started."""
    if not packages:
        return
    policy = rootfs / "usr/sbin/policy-rc.d"
    policy.write_text("#!/bin/sh\nexit 101\n")
    policy.chmod(0o755)
    proc = rootfs / "proc"
    subprocess.run(["mount", "-t", "proc", "proc", str(proc)], check=True)
    try:
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        # the mirror's Release may be past its Valid-Until (a mirror kept as it was; debootstrap
        # does not check, apt does): the packages are those debootstrap's base came from
        run_tool(["chroot", str(rootfs), "apt-get", "-o", "Acquire::Check-Valid-Until=false", "update"],
                 "apt-get update", 600, env=env, progress=progress)
        run_tool(["chroot", str(rootfs), "apt-get", "install", "-y", "--no-install-recommends", *packages],
                 "apt-get install", DEBOOTSTRAP_TIMEOUT, env=env, progress=progress)
        run_tool(["chroot", str(rootfs), "apt-get", "clean"], "apt-get clean", 120, env=env)
    finally:
        subprocess.run(["umount", "-l", str(proc)], capture_output=True)
        policy.unlink(missing_ok=True)


def _deb_cache(suite: str) -> Path:
    d = paths.cache_dir() / "debs" / suite
    d.mkdir(parents=True, exist_ok=True)
    return d


def publish(work: Path, final: Path, manifest: dict) -> None:
    """A finished image folder into its place in the cache: readable by libvirt's QEMU user,
    renamed at once, so a reader never sees half an image."""
    write_json(work / "manifest.json", manifest)
    for f in work.iterdir():
        f.chmod(0o644)
    work.chmod(0o755)
    remove_tree(final)
    os.rename(work, final)


def copy_boot_file(source: Path, dest: Path) -> None:
    """A kernel or initrd into a new image: the bytes only. copy2 would also copy libvirt's
    trusted.libvirt.security.* attributes of a file a running guest boots from, and libvirt
    then refuses the copy ("Setting different DAC user or group ... already in use")."""
    shutil.copyfile(source, dest)


def remove(image: store.Image) -> None:
    remove_tree(image.directory)
