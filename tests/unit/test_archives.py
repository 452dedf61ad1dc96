"""Release archives made from the kit's builds (harness/artifacts/archives.py): upstream's
layout, the same bytes for the same members, read back by GNU tar."""

import hashlib
import subprocess

from harness.artifacts import archives


def members(tmp_path, text="#!/bin/sh\necho bridge\n"):
    (tmp_path / "in").mkdir(exist_ok=True)
    out = {}
    for name, body in (("bridge", text), ("host-local", "#!/bin/sh\necho host-local\n")):
        f = tmp_path / "in" / name
        f.write_text(body)
        out[f"./{name}"] = f
    return out


def test_the_same_members_give_the_same_bytes_and_one_archive(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBELAB_CACHE", str(tmp_path / "cache"))
    first = archives.tar_gz("cni-plugins-linux-amd64-v1.9.1.tgz", members(tmp_path))
    digest = hashlib.sha256(first.read_bytes()).hexdigest()
    first.unlink()  # made again from scratch: byte for byte the same
    again = archives.tar_gz("cni-plugins-linux-amd64-v1.9.1.tgz", members(tmp_path))
    assert again == first and hashlib.sha256(again.read_bytes()).hexdigest() == digest
    assert again.read_bytes()[4:8] == b"\0\0\0\0"  # gzip's mtime field: none
    changed = archives.tar_gz("cni-plugins-linux-amd64-v1.9.1.tgz", members(tmp_path, "#!/bin/sh\necho other\n"))
    assert changed != first and changed.name == first.name


def test_gnu_tar_reads_upstreams_layout_back(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBELAB_CACHE", str(tmp_path / "cache"))
    made = archives.tar_gz("cni-plugins-linux-amd64-v1.9.1.tgz", members(tmp_path))
    listing = subprocess.run(["tar", "-tvzf", str(made)], capture_output=True, text=True, check=True).stdout
    lines = listing.splitlines()
    assert [line.split()[-1] for line in lines] == ["./bridge", "./host-local"]
    assert all(line.startswith("-rwxr-xr-x root/root") for line in lines)
    out = tmp_path / "out"
    out.mkdir()
    subprocess.run(["tar", "-xzf", str(made), "-C", str(out)], check=True)
    assert (out / "bridge").read_text() == "#!/bin/sh\necho bridge\n"
