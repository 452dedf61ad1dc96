"""A suite image whose containerd is built from source, made without booting it.

The suite images are one ext4 file system per disk (build.py: `mkfs.ext4 -d`),
so the built containerd, ctr and runc shim are written straight into a copy of
it with debugfs, over Debian's binaries of the same paths; Debian's unit,
runc and everything else stay. Offline, in seconds, and nothing runs in the
guest that a scenario did not ask for.

    <cache>/images/debian-sid-containerd-v2.2.9-<hash>/   (same shape as a suite image)
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from pathlib import Path

from .. import paths
from ..errors import ImageError
from ..progress import Progress
from . import build as image_build
from . import store
from .recipe import Recipe

FORMAT = 1  # bump when the way the layer is made changes
# The suite a built containerd goes into: sid's userland (runc, systemd, kernel) is the
# newest, and its Debian containerd (2.1) is the series these follow.
SUITE = "sid"


def image_id(base: store.Image, record: dict) -> str:
    blob = {"format": FORMAT, "base": base.id, "files": {f: v["key"] for f, v in sorted(record["files"].items())}}
    digest = hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()
    return f"{base.manifest['recipe']}-{base.suite}-containerd-{record['containerd']}-{digest[:12]}"


def debugfs_script(binaries: dict[str, Path]) -> str:
    """Replace each guest path with the host file, root-owned and 0755."""
    lines = []
    for guest, source in sorted(binaries.items()):
        lines += [f"rm {guest}", f"write {source} {guest}", f"sif {guest} mode 0100755",
                  f"sif {guest} uid 0", f"sif {guest} gid 0"]
    return "\n".join(lines) + "\n"


def base_image(suite: str, containerd: str | None, progress: Progress | None = None,
               recipe: str = "debian") -> store.Image:
    """The image a lab boots before any kit: the suite's (of `recipe`), or with `containerd`
    its built-containerd layer."""
    if containerd:
        return ensure(suite, containerd, progress)
    return image_build.ensure(Recipe.named(recipe, suite), progress)


def current_layer(suite: str, containerd: str) -> store.Image | None:
    """The layer of the current suite image and containerd build, if made (never builds)."""
    from ..artifacts import containerd as built

    base = store.find(Recipe.debian(suite))
    if base is None:
        return None
    final = paths.images_dir() / image_id(base, built.load_record(built.parse(containerd)))
    return store.load(final) if (final / "manifest.json").exists() else None


def is_current(image: store.Image) -> bool:
    """A layer (or a node image on one) whose suite image and containerd build are the current ones."""
    from ..errors import HarnessError

    built = image.manifest.get("containerd_build")
    if not built:
        return False
    try:
        layer = current_layer(image.suite, built["version"])
    except HarnessError:
        return False
    return layer is not None and layer.id in (image.id, image.manifest.get("base_image"))


def ensure(suite: str, containerd: str, progress: Progress | None = None, rebuild: bool = False) -> store.Image:
    from ..artifacts import containerd as built

    progress = progress or Progress()
    if suite != SUITE:
        raise ImageError(f"--containerd {containerd}: a containerd built from source goes into the {SUITE} image "
                         f"(asked for {suite}); bookworm, trixie and sid bring 1.6, 1.7 and 2.1 themselves")
    record = built.load_record(built.parse(containerd))
    base = image_build.ensure(Recipe.debian(suite), progress)
    final = paths.images_dir() / image_id(base, record)
    if (final / "manifest.json").exists() and not rebuild:
        return store.load(final)
    with open(paths.images_dir() / f".lock-{final.name}", "w") as lock:  # matrix cells may ask at once
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            with progress.activity(f"image {final.name}: waiting for the other build to finish"):
                fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / "manifest.json").exists() and not rebuild:
            return store.load(final)
        return _build(base, record, built.binaries(record), final, progress)


def _build(base: store.Image, record: dict, binaries: dict[str, Path], final: Path,
           progress: Progress) -> store.Image:
    started = time.time()
    work = paths.images_dir() / f".build-{final.name}-{os.getpid()}"
    image_build.remove_tree(work)
    work.mkdir(parents=True)
    try:
        with progress.step(f"image {final.name}: containerd {record['containerd']} into {base.id}"):
            raw = work / "root.raw"
            image_build.run_tool(["qemu-img", "convert", "-O", "raw", str(base.disk), str(raw)], "qemu-img", 600)
            write_files(raw, binaries)
            image_build.run_tool(["qemu-img", "convert", "-O", "qcow2", str(raw), str(work / "root.qcow2")],
                                 "qemu-img", 600)
            raw.unlink()
            image_build.copy_boot_file(base.kernel, work / "vmlinuz")
            image_build.copy_boot_file(base.initrd, work / "initrd.img")
        version = record["containerd"].lstrip("v")
        manifest = {
            **{k: v for k, v in base.manifest.items() if k not in ("id", "built_at", "build_seconds")},
            "id": final.name, "base_image": base.id,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "build_seconds": round(time.time() - started, 1),
            "versions": {**base.versions, "containerd": version},
            "containerd_build": {"version": version, "module": record["module"], "go": record["go"],
                                 "replaced": {g: record["files"][Path(g).name]["key"] for g in sorted(binaries)},
                                 "debian_package": base.versions.get("containerd", "")},
        }
        image_build.publish(work, final, manifest)
    except BaseException:
        image_build.remove_tree(work)
        raise
    progress.note(f"image {final.name}: made in {time.time() - started:.0f}s")
    return store.load(final)


def write_files(raw: Path, binaries: dict[str, Path]) -> None:
    """Write host files into the ext4 file system `raw` at their guest paths (unmounted, offline).
    debugfs reports errors on its output and exits 0, so every file's size is read back."""
    script = raw.with_name(raw.name + ".debugfs")
    script.write_text(debugfs_script(binaries))
    try:
        debugfs_output = image_build.run_tool(["debugfs", "-w", "-f", str(script), str(raw)], "debugfs", 300)
    finally:
        script.unlink(missing_ok=True)
    check = raw.with_name(raw.name + ".readback")
    try:
        for guest, source in binaries.items():
            check.unlink(missing_ok=True)
            image_build.run_tool(["debugfs", "-R", f"dump {guest} {check}", str(raw)], "debugfs", 120)
            if not check.exists() or _sha256(check) != _sha256(source):
                raise ImageError(f"debugfs did not write {guest} into the image (read back differs from {source}):\n"
                                 f"{debugfs_output.strip()[-1500:]}")
    finally:
        check.unlink(missing_ok=True)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
