"""The cache's disk filling during a build, for real: KUBELAB_CACHE on a small ext4 filesystem made
for the test (a loop-mounted image file). The build must end with exit 2 naming the disk, its free
space and what the build needs, keep nothing half made, and, once the disk has room, build again
without anyone cleaning up."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import paths
from tests.conftest import require_tool

from .helpers import invoke

pytestmark = pytest.mark.vm  # root, a loop device and debootstrap: the tier that makes real things

SMALL = "300M"  # less than a bookworm image's build needs, more than its packages (112 MiB, copied in)


def _run(*cmd: str) -> str:
    return subprocess.run(list(cmd), check=True, capture_output=True, text=True, timeout=300).stdout.strip()


@pytest.fixture
def small_cache(tmp_path):
    """A filesystem of SMALL mounted at tmp_path/cache, its loop device and image file."""
    for tool, how in (("losetup", "util-linux"), ("mkfs.ext4", "e2fsprogs"), ("resize2fs", "e2fsprogs")):
        require_tool(tool, f"apt-get install {how}")
    image, mnt = tmp_path / "cache.img", tmp_path / "cache"
    _run("truncate", "-s", SMALL, str(image))
    _run("mkfs.ext4", "-q", "-F", str(image))
    device = _run("losetup", "--find", "--show", str(image))
    mnt.mkdir()
    try:
        _run("mount", device, str(mnt))
        yield mnt, device, image
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False, timeout=120)
        subprocess.run(["losetup", "-d", device], check=False, timeout=60)


def test_an_image_build_on_a_full_cache_disk_says_so_and_the_next_one_builds(small_cache):
    mnt, device, image = small_cache
    # Debian's packages already fetched (as a user's cache would have them): the disk fills unpacking
    shutil.copytree(paths.cache_dir() / "debs" / "bookworm", mnt / "debs" / "bookworm")
    env = dict(os.environ, KUBELAB_CACHE=str(mnt))
    first = invoke("images.build", "--suite", "bookworm", env=env)
    said = first.communicate(timeout=1200)[0]
    assert first.returncode == 2, said
    assert f"the disk under {mnt}/images is full (" in said and "MiB free of " in said, said
    assert "it needs about 2 GiB while it builds" in said and "set KUBELAB_CACHE to a folder on a larger disk" in said
    assert "Traceback" not in said
    images = mnt / "images"
    assert sorted(p.name for p in images.iterdir() if not p.name.startswith(".lock-")) == []  # nothing half made
    # room again: the same disk, grown (unmounted for it: this kernel's ext4 refused to grow it online)
    _run("umount", str(mnt))
    _run("truncate", "-s", "3G", str(image))
    _run("losetup", "-c", device)
    _run("e2fsck", "-f", "-y", device)
    _run("resize2fs", device)
    _run("mount", device, str(mnt))
    second = invoke("images.build", "--suite", "bookworm", env=env)
    said = second.communicate(timeout=1800)[0]
    assert second.returncode == 0, said
    [built] = [p for p in images.iterdir() if p.name.startswith("debian-bookworm-")]
    assert (built / "manifest.json").is_file() and (built / "root.qcow2").is_file()


@pytest.mark.artifacts
def test_a_kit_build_on_a_full_cache_disk_says_so_and_commits_nothing(small_cache):
    """An empty cache on SMALL: Go's module downloads fill it (the kit needs about 11 GiB)."""
    mnt, _, _ = small_cache
    env = dict(os.environ, KUBELAB_CACHE=str(mnt))
    build = invoke("artifacts.build", env=env)
    said = build.communicate(timeout=1800)[0]
    assert build.returncode == 2, said
    assert f"the disk under {mnt}/go is full (" in said and "it needs about 11 GiB from an empty cache" in said, said
    assert "Traceback" not in said
    store = mnt / "artifacts" / "store"
    assert not store.exists() or [p.name for p in store.iterdir() if not p.name.startswith(".")] == []
    assert not list((mnt / "artifacts").glob("kits/*.json"))  # no kit record for a kit not made


def test_an_image_build_killed_half_way_is_redone_never_used(tmp_path):
    """SIGKILL mid-debootstrap: no image is published; the next build removes the dead one's work
    folder and builds the image whole."""
    import signal
    import time

    from .helpers import wait_for

    cache = tmp_path / "cache"
    shutil.copytree(paths.cache_dir() / "debs" / "bookworm", cache / "debs" / "bookworm")
    env = dict(os.environ, KUBELAB_CACHE=str(cache))
    first = invoke("images.build", "--suite", "bookworm", env=env)
    images = cache / "images"
    work = wait_for(lambda: [p for p in images.glob(".build-*/rootfs/usr")] if images.exists() else [], 600,
                    "debootstrap to be unpacking")
    time.sleep(5)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=60)
    # debootstrap itself, orphaned, goes on a while: wait for the tree to stop changing hands
    subprocess.run(["pkill", "-KILL", "-f", f"debootstrap .*{cache}"], check=False, timeout=30)
    assert [p.name for p in images.iterdir() if p.name.startswith("debian-")] == []  # nothing published
    assert [p for p in images.glob(".build-*")], "the killed build's work folder is what the next one must handle"
    second = invoke("images.build", "--suite", "bookworm", env=env)
    said = second.communicate(timeout=1800)[0]
    assert second.returncode == 0, said
    assert [p.name for p in images.glob(".build-*")] == []
    [built] = [p for p in images.iterdir() if p.name.startswith("debian-bookworm-")]
    assert (built / "manifest.json").is_file()
    assert work  # (the kill landed mid-unpack)


def test_a_kit_build_killed_half_way_is_never_taken_for_a_built_component():
    """SIGKILL while `go build` writes a component's programs into its work folder (CI's containerd,
    built again with --rebuild, so the Go cache makes it quick): no store entry is made from the
    partial folder; the next build removes the dead one's folder and ends with a whole entry whose
    every file verifies, and the programs run."""
    import signal

    from harness.artifacts import containerd as built
    from harness.artifacts import store

    from .helpers import wait_for

    version = built.CI_CONTAINERD
    first = invoke("artifacts.build", "--containerd", version, "--rebuild")
    work = wait_for(lambda: [p for p in store.store_dir().glob(f".work-*-{first.pid}") if any(p.iterdir())]
                    if store.store_dir().exists() else [], 900, "the rebuild to write into its work folder")
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=60)
    # the orphaned `go build` would still copy its program into the folder: gone too, as after a reboot
    subprocess.run(["pkill", "-KILL", "-f", str(work[0])], check=False, timeout=30)
    assert work[0].exists(), "the killed build's work folder is what the next one must handle"
    second = invoke("artifacts.build", "--containerd", version)
    said = second.communicate(timeout=1800)[0]
    assert second.returncode == 0, said
    assert not work[0].exists()
    record = built.load_record(f"v{version.lstrip('v')}")
    for path, file in built.binaries(record).items():
        if file.name in ("containerd", "ctr"):  # both print the stamped version (cmd/*/main.go)
            out = subprocess.run([str(file), "--version"], capture_output=True, text=True, timeout=60)
            assert version.lstrip("v") in out.stdout, (path, out)
    for entry in store.all_entries():
        if entry.data.get("component") in ("containerd", "containerd-shim-runc-v2"):
            assert store.lookup(entry.key)[1] == [], entry.key
