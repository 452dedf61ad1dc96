"""Where kubelab keeps the labs' disks: its own pool, or a folder KUBELAB_DISKS names (a pool of its own)."""

from pathlib import Path

from harness import paths
from harness.machines.libvirt import DISKS_POOL_PREFIX, POOL, pool_name


def test_the_labs_disks_go_to_kubelabs_pool_unless_a_folder_is_named(monkeypatch, tmp_path):
    monkeypatch.delenv("KUBELAB_DISKS", raising=False)
    assert paths.disks_dir() is None and pool_name(None) == POOL
    monkeypatch.setenv("KUBELAB_DISKS", str(tmp_path / "a" / ".." / "disks"))
    # one folder, one name, however it is written; kubelab keeps to a folder of its own in it
    assert paths.disks_dir() == tmp_path / "disks" / "kubelab"


def test_each_folder_has_a_pool_of_its_own_that_the_janitor_knows_as_kubelabs():
    a, b = pool_name(Path("/mnt/a")), pool_name(Path("/mnt/b"))
    assert a != b and a == pool_name(Path("/mnt/a"))
    assert a.startswith(DISKS_POOL_PREFIX) and len(a) == len(DISKS_POOL_PREFIX) + 8


def test_a_folder_libvirts_qemu_cannot_pass_through_is_named():
    """QEMU runs as its own user: each folder above the disks must let others pass (o+x). Made
    under /var/tmp, whose parents are open (pytest's own tmp folders are closed to others)."""
    import shutil
    import tempfile

    from harness.machines.libvirt import closed_ancestor

    root = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="kubelab-test-"))
    try:
        root.chmod(0o711)
        closed, open_one = root / "private", root / "open"
        (closed / "disks").mkdir(parents=True)
        (open_one / "disks").mkdir(parents=True)
        closed.chmod(0o700)
        assert closed_ancestor(closed / "disks" / "kubelab") == closed
        assert closed_ancestor(open_one / "disks" / "kubelab") is None  # made by kubelab below: its own mode
    finally:
        shutil.rmtree(root)
