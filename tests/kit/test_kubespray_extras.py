"""The files the kubespray track builds beyond the kit (harness/kubespray/extras.py), made here
without a kubespray checkout: at releases the module proxy serves and this machine already builds
(the kit's etcd, CI's containerd column) plus runc at the release kubespray master pins. Each in
upstream's release layout, and the programs in it run. (What is built from a git clone, nerdctl
among them, is tested in tests/kubespray/test_git_sources.py, where the clones are a prerequisite.)"""

import subprocess
import tarfile

import pytest

from harness.artifacts import containerd as built_containerd
from harness.kubespray import extras
from harness.progress import Progress
from tests.kit import buildinfo

pytestmark = pytest.mark.artifacts

RUNC = "v1.4.3"  # kubespray master 46dbdd39's runc_version (roles/kubespray_defaults/vars/main/checksums.yml)


def _run(path, *args) -> str:
    return subprocess.run([str(path), *args], capture_output=True, text=True, timeout=60).stdout


def test_etcd_archive_is_upstreams_folder_and_runs(kit, tmp_path):
    version = "v" + kit["components"]["etcd"]["module"].rpartition("@v")[2]
    name = f"etcd-{version}-linux-amd64.tar.gz"
    archive = extras.make("etcd", version, name, Progress(quiet=True))
    folder = name.removesuffix(".tar.gz")
    with tarfile.open(archive) as tar:
        assert sorted(tar.getnames()) == [f"{folder}/etcd", f"{folder}/etcdctl", f"{folder}/etcdutl"]
        tar.extractall(tmp_path, filter="data")
    # etcd --version: fmt.Printf("etcd Version: %s\n", version.Version) (server/etcdmain/config.go @ v3.6.8)
    assert f"etcd Version: {version.lstrip('v')}" in _run(tmp_path / folder / "etcd", "--version")
    for program, package in (("etcd", "go.etcd.io/etcd/server/v3"), ("etcdctl", "go.etcd.io/etcd/etcdctl/v3"),
                             ("etcdutl", "go.etcd.io/etcd/etcdutl/v3")):
        buildinfo.assert_built_from(tmp_path / folder / program, package, version)
    # made again from the same members, the same bytes: the sha256 kubelab hands kubespray holds
    first = archive.read_bytes()
    archive.unlink()
    again = extras.make("etcd", version, name, Progress(quiet=True))
    assert again == archive and again.read_bytes() == first


def test_runc_is_the_static_release_with_seccomp():
    runc = extras.make("runc", RUNC, "runc.amd64", Progress(quiet=True))
    out = _run(runc, "--version")
    # runc --version (main.go @ v1.4.3): "runc version 1.4.3" first; "libseccomp: %d.%d.%d" only with seccomp
    assert out.splitlines()[0] == f"runc version {RUNC.lstrip('v')}"
    buildinfo.assert_built_from(runc, "github.com/opencontainers/runc", RUNC)
    assert "libseccomp: " in out
    headers = subprocess.run(["readelf", "-l", str(runc)], capture_output=True, text=True, timeout=60).stdout
    assert "Requesting program interpreter" not in headers  # static: no dynamic loader


def test_containerd_archive_unpacks_below_bin(tmp_path):
    version = "v" + built_containerd.CI_CONTAINERD
    name = f"containerd-{built_containerd.CI_CONTAINERD}-linux-amd64.tar.gz"
    with tarfile.open(extras.make("containerd", version, name, Progress(quiet=True))) as tar:
        assert sorted(tar.getnames()) == ["bin/containerd", "bin/containerd-shim-runc-v2", "bin/ctr"]
        tar.extractall(tmp_path, filter="data")
    # containerd --version: Fprintln(cmd.Name, version.Package, cmd.Version, version.Revision)
    # (cmd/containerd/command/main.go @ v2.4.2); kubelab stamps Version v2.4.2 and no revision
    assert f" {version} " in _run(tmp_path / "bin" / "containerd", "--version") + " "
    for program in ("containerd", "containerd-shim-runc-v2", "ctr"):
        buildinfo.assert_built_from(tmp_path / "bin" / program, f"github.com/containerd/containerd/v2/cmd/{program}",
                                    version)

