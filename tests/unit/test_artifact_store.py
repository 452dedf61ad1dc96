"""The content-addressed store: entries, their sha256, damage detection."""

import json

import pytest

from harness.artifacts import store


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBELAB_CACHE", str(tmp_path / "cache"))
    return tmp_path


def put(key: str, files: dict[str, bytes], **record) -> store.Entry:
    work = store.workdir(key)
    for name, data in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(data)
    return store.commit(key, work, {"component": "c", "module": "m@v1", "build_seconds": 1.5, **record})


def test_a_committed_entry_records_sha256_and_size_of_each_file():
    entry = put("a" * 64, {"bin": b"hello"})
    assert entry.files == {"bin": {"sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
                                   "size": 5}}
    assert entry.data["sha256"] == entry.files["bin"]["sha256"]  # one file: its own sha256
    assert entry.data["size"] == 5
    on_disk = json.loads((entry.directory / "entry.json").read_text())
    assert on_disk["component"] == "c" and on_disk["build_seconds"] == 1.5


def test_lookup_finds_an_intact_entry():
    put("b" * 64, {"x": b"1", "y": b"2"})
    entry, problems = store.lookup("b" * 64)
    assert problems == [] and entry is not None
    assert entry.data["sha256"] == store.tree_digest(entry.files)


def test_lookup_of_an_absent_key():
    assert store.lookup("c" * 64) == (None, [])


def test_a_changed_file_is_detected():
    entry = put("d" * 64, {"bin": b"original"})
    entry.path("bin").write_bytes(b"tampered")
    found, problems = store.lookup("d" * 64)
    assert found is None
    assert len(problems) == 1 and problems[0].startswith("bin: sha256 no longer")


def test_a_same_size_change_is_detected_too():
    entry = put("e" * 64, {"bin": b"aaaa"})
    entry.path("bin").write_bytes(b"bbbb")
    assert store.lookup("e" * 64)[0] is None


def test_a_missing_file_is_detected():
    entry = put("f" * 64, {"bin": b"x", "other": b"y"})
    entry.path("other").unlink()
    assert store.lookup("f" * 64)[1] == ["other: missing"]


def test_tree_digest_depends_on_names_and_contents():
    a = {"x": {"sha256": "1"}, "y": {"sha256": "2"}}
    assert store.tree_digest(a) == store.tree_digest(dict(reversed(list(a.items()))))
    assert store.tree_digest(a) != store.tree_digest({"x": {"sha256": "2"}, "y": {"sha256": "1"}})


def test_an_empty_build_is_refused():
    from harness.errors import ArtifactError

    work = store.workdir("0" * 64)
    with pytest.raises(ArtifactError, match="produced no files"):
        store.commit("0" * 64, work, {"component": "c"})


def test_abandoned_work_folders_are_removed():
    work = store.store_dir() / ".work-abc-999999999"
    work.mkdir(parents=True)
    store.remove_abandoned()
    assert not work.exists()


def test_prune_keeps_what_a_kit_refers_to_and_removes_the_rest(cache):
    import json as _json

    from harness.artifacts import kit, listing
    from harness.paths import artifacts_dir

    kept, image, stale = put("1" * 64, {"kubeadm": b"a"}), put("2" * 64, {"index.json": b"{}"}), put("3" * 64, {"x": b"b"})
    storage = artifacts_dir() / "registry" / "current"
    old = artifacts_dir() / "registry" / "old"
    storage.mkdir(parents=True)
    old.mkdir()
    kit.kits_dir().mkdir(parents=True)
    (kit.kits_dir() / "kubernetes-v1.36.3.json").write_text(_json.dumps({
        "components": {"kubeadm": {"key": "1" * 64}}, "images": {"r:1": {"key": "2" * 64}}, "registry": str(storage)}))
    removed = listing.prune()
    assert removed == [f"store entry {'3' * store.KEY_LEN} (c, m@v1)", "registry storage old"]
    assert kept.directory.exists() and image.directory.exists() and not stale.directory.exists()
    assert storage.exists() and not old.exists()


def test_prune_keeps_an_entry_an_installer_linked_into_a_kits_file_tree(cache):
    import json as _json

    from harness.artifacts import kit, listing
    from harness.serve import files as serve_files

    crds, stale = put("4" * 64, {"crds.yaml": b"kind: CRD"}), put("5" * 64, {"x": b"b"})
    tree = serve_files.write_tree("v1.36.3", {})
    serve_files.add_links(tree, {"github.com/projectcalico/calico/raw/v3.31.7/manifests/crds.yaml": crds.path("crds.yaml")})
    kit.kits_dir().mkdir(parents=True)
    (kit.kits_dir() / "kubernetes-v1.36.3.json").write_text(_json.dumps({"components": {}, "files": str(tree)}))
    (kit.kits_dir() / "containerd-v2.3.4.json").write_text(_json.dumps({"components": {}, "files": {"ctr": "x"}}))
    removed = listing.prune()
    assert removed == [f"store entry {'5' * store.KEY_LEN} (c, m@v1)"]
    assert crds.directory.exists() and not stale.directory.exists()
    assert (tree / "github.com/projectcalico/calico/raw/v3.31.7/manifests/crds.yaml").read_text() == "kind: CRD"


def test_prune_keeps_the_entries_behind_an_installers_archives_and_pushed_images(cache):
    """kubespray's etcd and nerdctl come as archives made from store entries, and its calico and
    DNS images are pushed into the kit's registry storage: prune keeps what they were made from,
    and the listing does not offer them to prune."""
    import json as _json

    from harness.artifacts import archives, kit, listing
    from harness.serve import files as serve_files
    from harness.serve import registry

    etcd = put("6" * 64, {"etcd": b"etcd"}, module="go.etcd.io/etcd/server/v3@v3.6.14")
    node = put("7" * 64, {"index.json": b"{}"}, module="quay.io/calico/node:v3.31.7")
    stale = put("8" * 64, {"x": b"b"}, module="stale@v1")
    archive = archives.tar_gz("etcd-v3.6.14-linux-amd64.tar.gz", {"etcd-v3.6.14-linux-amd64/etcd": etcd.path("etcd")})
    tree = serve_files.write_tree("v1.36.3", {})
    serve_files.add_links(tree, {"github.com/etcd-io/etcd/releases/download/v3.6.14/etcd.tar.gz": archive})
    storage = registry.storage_dir("d" * 24)
    storage.mkdir(parents=True)
    # the image is in the storage already (an earlier push): add() pushes nothing and records its layout
    (storage / registry.POPULATED).write_text(_json.dumps(
        {"digest": "d" * 24, "images": {}, "added": {"quay.io/calico/node:v3.31.7": "sha256:abc"}}))
    assert registry.add(storage, {"quay.io/calico/node:v3.31.7": node.directory}, progress=None) == {
        "quay.io/calico/node:v3.31.7": "sha256:abc"}
    kit.kits_dir().mkdir(parents=True)
    (kit.kits_dir() / "kubernetes-v1.36.3.json").write_text(_json.dumps(
        {"kubernetes": "v1.36.3", "go": "go1.26.8", "components": {}, "files": str(tree), "registry": str(storage)}))
    assert archives.member_files(archive) == [etcd.path("etcd")]
    offered = [line.split()[1] for line in listing.render().splitlines() if "in no kit" in line]
    assert offered == ["stale@v1"]
    assert listing.prune() == [f"store entry {'8' * store.KEY_LEN} (c, stale@v1)"]
    assert etcd.directory.exists() and node.directory.exists() and not stale.directory.exists()
