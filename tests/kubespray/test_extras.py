"""The files kubespray downloads beyond the kit, built from their Go modules at the checkout's
versions (harness/kubespray/extras.py): each at the path kubespray fetches, in upstream's
layout, and the programs in it are the release the checkout asked for."""

import subprocess
import tarfile

import pytest

from harness.artifacts import kit as kits
from harness.artifacts.versions import DEFAULT_KUBERNETES, KubeVersion
from harness.kubespray import extras, readiness
from harness.kubespray.downloads import Defaults
from harness.model import InstallDef
from harness.progress import Progress
from harness.tracks.kubespray import settings

pytestmark = pytest.mark.kubespray


@pytest.fixture(scope="module")
def built(ks):
    try:
        kit = kits.load_kit(KubeVersion.parse(DEFAULT_KUBERNETES))
    except Exception as exc:  # noqa: BLE001 - the reason is the skip message
        pytest.skip(f"no kit for Kubernetes {DEFAULT_KUBERNETES} here ({exc})")
    install = InstallDef(track="kubespray", kubernetes=DEFAULT_KUBERNETES)
    wanted = Defaults(ks.path, ks.version).resolve(DEFAULT_KUBERNETES, settings(install))
    served, gaps = readiness.build_all(wanted, kit, Progress(quiet=True), ks.version)
    return {d.name: d for d in extras.buildable(wanted)}, served, gaps


def _version_line(path, *args) -> str:
    return subprocess.run([str(path), *args], capture_output=True, text=True, timeout=60).stdout


def test_each_recipe_of_the_list_is_served_at_kubesprays_path(built):
    todo, served, gaps = built
    assert sorted(todo) == ["containerd", "etcd", "runc"]
    assert not [d for d in served.missing_files if d.name in todo]
    assert not [g for g in gaps if g.download.name in todo]
    assert sorted(set(todo) & set(served.files)) == ["containerd", "etcd", "runc"]


def test_the_etcd_archive_holds_the_programs_in_the_folder_kubespray_copies_from(built, tmp_path):
    todo, served, _ = built
    folder = f"etcd-v{todo['etcd'].version.lstrip('v')}-linux-amd64"
    with tarfile.open(served.files["etcd"]) as tar:
        assert sorted(tar.getnames()) == [f"{folder}/etcd", f"{folder}/etcdctl", f"{folder}/etcdutl"]
        tar.extractall(tmp_path, filter="data")
    # etcd --version: "etcd Version: 3.6.14" (server/etcdmain/config.go)
    assert f"etcd Version: {todo['etcd'].version.lstrip('v')}" in _version_line(tmp_path / folder / "etcd", "--version")


def test_runc_is_the_static_release_with_seccomp(built):
    todo, served, _ = built
    runc = served.files["runc"]
    out = _version_line(runc, "--version")
    # runc --version (main.go, runc v1.4.3): "runc version 1.4.3", then "libseccomp: <version>" when built with seccomp
    assert out.splitlines()[0] == f"runc version {todo['runc'].version.lstrip('v')}"
    assert "libseccomp: " in out
    interp = subprocess.run(["readelf", "-l", str(runc)], capture_output=True, text=True, timeout=60).stdout
    assert "Requesting program interpreter" not in interp  # static: no dynamic loader


def test_the_containerd_archive_unpacks_below_bin(built, tmp_path):
    todo, served, _ = built
    with tarfile.open(served.files["containerd"]) as tar:
        assert sorted(tar.getnames()) == ["bin/containerd", "bin/containerd-shim-runc-v2", "bin/ctr"]
        tar.extractall(tmp_path, filter="data")
    # containerd --version: "containerd <package> v2.3.4 <revision>" (cmd/containerd/command/main.go)
    assert f" v{todo['containerd'].version.lstrip('v')}" in _version_line(tmp_path / "bin/containerd", "--version")

