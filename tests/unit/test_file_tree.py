"""The lab's file server tree: links added after the kit (the kubespray track's extras) stay
below the tree, replace what was there, and survive a rebuild of the kit's tree."""

import pytest

from harness import paths
from harness.errors import UsageError
from harness.serve import files


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBELAB_CACHE", str(tmp_path / "cache"))
    return paths.cache_dir()


def target(tmp_path, name, text):
    f = tmp_path / name
    f.write_text(text)
    return f


def test_added_links_replace_and_survive_a_rebuild_of_the_tree(cache, tmp_path):
    kubeadm, etcd, etcd2 = (target(tmp_path, n, n) for n in ("kubeadm", "etcd-a", "etcd-b"))
    root = files.write_tree("v1.40.1", {"dl.k8s.io/kubeadm": kubeadm})
    files.add_links(root, {"github.com/etcd.tar.gz": etcd})
    files.add_links(root, {"github.com/etcd.tar.gz": etcd2})  # replaced in place
    assert (root / "github.com/etcd.tar.gz").read_text() == "etcd-b"
    files.add_links(root, {"github.com/runc.amd64": kubeadm})  # another file, added to those remembered
    assert (root / "github.com/etcd.tar.gz").read_text() == "etcd-b"
    assert not list(root.rglob(".*.new*"))  # no staging link left
    root = files.write_tree("v1.40.1", {"dl.k8s.io/kubeadm": kubeadm})  # the kit rebuilt
    assert (root / "github.com/etcd.tar.gz").read_text() == "etcd-b"
    etcd2.unlink()  # a target gone from the store is not linked again
    root = files.write_tree("v1.40.1", {"dl.k8s.io/kubeadm": kubeadm})
    assert not (root / "github.com/etcd.tar.gz").is_symlink()
    assert (root / "dl.k8s.io/kubeadm").read_text() == "kubeadm"


@pytest.mark.parametrize("rel", ["/etc/passwd", "../outside", "github.com/../../x", ""])
def test_a_link_outside_the_tree_is_refused(cache, tmp_path, rel):
    root = files.write_tree("v1.40.1", {})
    with pytest.raises(UsageError, match="is not a path below the lab's file server"):
        files.add_links(root, {rel: target(tmp_path, "x", "x")})
    assert not (tmp_path / "outside").exists()
