"""The files kubespray downloads beyond the kit, built from their Go modules at the checkout's
versions (harness/kubespray/extras.py): each at the path kubespray fetches, in upstream's
layout, and the programs in it are the release the checkout asked for."""

import subprocess
import tarfile

import pytest

from harness.artifacts import kit as kits
from harness.artifacts.versions import DEFAULT_KUBERNETES, KubeVersion
from harness.kubespray import extras, readiness, sources
from harness.kubespray.downloads import Defaults
from harness.model import InstallDef
from harness.progress import Progress
from harness.tracks.kubespray import settings

pytestmark = pytest.mark.kubespray


def _release_served(ks, kit) -> dict:
    """install.variables that pick, for each recipe whose pinned release the proxy refuses, the
    later patch it serves (kubespray master 46dbdd39's nerdctl 2.3.0 here: 2.3.1)."""
    wanted = Defaults(ks.path, ks.version).resolve(
        DEFAULT_KUBERNETES, settings(InstallDef(track="kubespray", kubernetes=DEFAULT_KUBERNETES)))
    chosen = {}
    for d in extras.buildable(wanted):
        source = sources.SOURCES[d.name]
        version = sources.module_version(d)
        if source.version_variable and not sources.proxy_answer(source.modules[0], version)[0]:
            later = next((v for v in sources.nearby(version) if sources.proxy_answer(source.modules[0], v)[0]), None)
            if later is None:
                pytest.skip(f"{source.modules[0]}@{version} and its next patches are not served by the module proxy")
            chosen[source.version_variable] = later.lstrip("v")
    return chosen


@pytest.fixture(scope="module")
def built(ks):
    try:
        kit = kits.load_kit(KubeVersion.parse(DEFAULT_KUBERNETES))
    except Exception as exc:  # noqa: BLE001 - the reason is the skip message
        pytest.skip(f"no kit for Kubernetes {DEFAULT_KUBERNETES} here ({exc})")
    install = InstallDef(track="kubespray", kubernetes=DEFAULT_KUBERNETES,
                         variables=tuple(sorted(_release_served(ks, kit).items())))
    wanted = Defaults(ks.path, ks.version).resolve(DEFAULT_KUBERNETES, settings(install))
    served, gaps = readiness.build_all(wanted, kit, Progress(quiet=True), ks.version)
    return {d.name: d for d in extras.buildable(wanted)}, served, gaps


def _version_line(path, *args) -> str:
    return subprocess.run([str(path), *args], capture_output=True, text=True, timeout=60).stdout


def test_each_recipe_of_the_list_is_served_at_kubesprays_path(built):
    todo, served, gaps = built
    assert sorted(todo) == ["containerd", "etcd", "nerdctl", "runc"]
    assert not [d for d in served.missing_files if d.name in todo]
    assert not [g for g in gaps if g.download.name in todo]
    assert sorted(set(todo) & set(served.files)) == ["containerd", "etcd", "nerdctl", "runc"]


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


def test_the_nerdctl_archive_holds_the_program_kubespray_copies(built, tmp_path):
    todo, served, _ = built
    with tarfile.open(served.files["nerdctl"]) as tar:
        assert tar.getnames() == ["nerdctl"]
        tar.extractall(tmp_path, filter="data")
    # nerdctl --version: "nerdctl version 2.3.1" (cmd/nerdctl/main.go @ v2.3.1: cobra Version is
    # strings.TrimPrefix(version.GetVersion(), "v"), the version stamped into pkg/version)
    assert _version_line(tmp_path / "nerdctl", "--version").strip() == f"nerdctl version {todo['nerdctl'].version.lstrip('v')}"
