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
