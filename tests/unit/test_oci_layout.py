"""OCI image layouts written by kubelab, read back by a real OCI client (skopeo)."""

import hashlib
import json
import subprocess
import tarfile

from harness.oci.layout import (CAP_NET_BIND_SERVICE, MEDIA_LAYER, ImageConfig, Node, file_capability,
                                write_layer, write_layout)
from tests.conftest import require_tool


def build(directory, binary_data=b"\x7fELF fake binary", user="65535:65535"):
    blobs = directory / "blobs" / "sha256"
    base = write_layer([Node("/etc/passwd", data=b"root:x:0:0::/root:/sbin/nologin\n"),
                        Node("/tmp", kind="dir", mode=0o1777)], blobs, "base")
    bins = write_layer([Node("/pause", mode=0o755, data=binary_data,
                             xattrs=(("security.capability", file_capability(CAP_NET_BIND_SERVICE)),)),
                        Node("/bin/cp", kind="symlink", target="/bin/busybox")], blobs, "binaries")
    written = write_layout(directory, [base, bins], ImageConfig(entrypoint=("/pause",), user=user),
                           "registry.k8s.io/pause:3.10.2")
    return written, [base, bins]


def skopeo(*args):
    exe = require_tool("skopeo", "scripts/setup installs it: apt-get install -y skopeo")
    out = subprocess.run([exe, *args], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_skopeo_reads_the_layout(tmp_path):
    written, layers = build(tmp_path)
    info = skopeo("inspect", f"oci:{tmp_path}:3.10.2")
    assert info["Digest"] == written["manifest"]
    assert info["Layers"] == [l.digest for l in layers]
    assert info["Os"] == "linux" and info["Architecture"] == "amd64"


def test_skopeo_reads_the_config_kubelab_wrote(tmp_path):
    build(tmp_path)
    config = skopeo("inspect", "--config", f"oci:{tmp_path}:3.10.2")
    assert config["config"]["Entrypoint"] == ["/pause"]
    assert config["config"]["User"] == "65535:65535"
    assert config["config"]["Env"] == ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
    assert len(config["rootfs"]["diff_ids"]) == 2


def test_blobs_are_named_by_their_sha256(tmp_path):
    build(tmp_path)
    for blob in (tmp_path / "blobs" / "sha256").iterdir():
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == blob.name
    index = json.loads((tmp_path / "index.json").read_text())
    manifest = json.loads((tmp_path / "blobs/sha256" / index["manifests"][0]["digest"].split(":")[1]).read_text())
    assert {l["mediaType"] for l in manifest["layers"]} == {MEDIA_LAYER}
    assert json.loads((tmp_path / "oci-layout").read_text()) == {"imageLayoutVersion": "1.0.0"}


def test_same_inputs_give_the_same_digests(tmp_path):
    a, _ = build(tmp_path / "a")
    b, _ = build(tmp_path / "b")
    c, _ = build(tmp_path / "c", binary_data=b"other")
    assert a["manifest"] == b["manifest"] != c["manifest"]


def test_layers_carry_owners_modes_parents_and_the_capability(tmp_path):
    _, layers = build(tmp_path)
    with tarfile.open(layers[1].path) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert set(members) == {"pause", "bin", "bin/cp"}
    pause = members["pause"]
    assert pause.mode == 0o755 and pause.uid == 0 and pause.mtime == 0
    assert members["bin"].isdir() and members["bin/cp"].issym() and members["bin/cp"].linkname == "/bin/busybox"
    cap = pause.pax_headers["SCHILY.xattr.security.capability"].encode("latin-1")
    # VFS_CAP_REVISION_2 | effective, permitted = 1 << CAP_NET_BIND_SERVICE: what `setcap cap_net_bind_service=+ep` writes
    assert cap == bytes.fromhex("01000002" "00040000" "00000000" "00000000" "00000000")
    with tarfile.open(layers[0].path) as tar:
        assert tar.getmember("tmp").mode == 0o1777
