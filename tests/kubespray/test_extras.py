"""The files kubespray downloads beyond the kit, built from their Go modules at the checkout's
versions (harness/kubespray/extras.py): each at the path kubespray fetches, in upstream's
layout, and the programs in it are the release the checkout asked for."""

import subprocess
import tarfile
from pathlib import Path

import pytest

from harness.artifacts import kit as kits
from harness.artifacts.versions import DEFAULT_KUBERNETES, KubeVersion
from harness.errors import KitNotBuilt
from harness.kubespray import extras, readiness, sources
from harness.kubespray.downloads import Defaults
from harness.model import InstallDef
from harness.progress import Progress
from harness.serve import registry
from harness.tracks.kubespray import settings
from tests.conftest import unavailable

pytestmark = pytest.mark.kubespray


@pytest.fixture(scope="module")
def built(ks):
    try:
        kit = kits.load_kit(KubeVersion.parse(DEFAULT_KUBERNETES))
    except KitNotBuilt as exc:  # only "not built" is a missing prerequisite; any other error fails
        unavailable(str(exc))
    # nerdctl at the release measured to build here, where the checkout's pin is not served
    pick = sources.SOURCES["nerdctl"]
    install = InstallDef(track="kubespray", kubernetes=DEFAULT_KUBERNETES,
                         variables=((pick.version_variable, pick.builds_here),))
    wanted = Defaults(ks.path, ks.version).resolve(DEFAULT_KUBERNETES, settings(install))
    served, gaps = readiness.build_all(wanted, kit, Progress(quiet=True), ks.version)
    return {d.name: d for d in extras.buildable(wanted)}, served, gaps


def _version_line(path, *args) -> str:
    return subprocess.run([str(path), *args], capture_output=True, text=True, timeout=60).stdout


def test_each_recipe_of_the_list_is_served_at_kubesprays_path(built):
    todo, served, gaps = built
    assert sorted(todo) == ["containerd", "etcd", "nerdctl", "nginx", "runc"]
    assert not [d for d in served.missing_files + served.missing_images if d.name in todo]
    assert not [g for g in gaps if g.download.name in todo]
    assert sorted(set(todo) & set(served.files)) == ["containerd", "etcd", "nerdctl", "runc"]


def test_the_proxy_image_is_in_the_kits_registry_under_the_ref_kubespray_pulls(built):
    """nginx_image_repo:nginx_image_tag as the checkout resolves them, beside the kit's images."""
    todo, _, _ = built
    kit = kits.load_kit(KubeVersion.parse(DEFAULT_KUBERNETES))
    assert todo["nginx"].image in registry.served(Path(kit["registry"]))
    assert todo["nginx"].image not in kit["images"]  # added for kubespray, not one of the kit's own


def test_the_served_files_are_the_releases_the_checkout_pins(built, tmp_path):
    """The layouts are tested without a checkout (tests/kit/test_kubespray_extras.py); here, that
    what lies at kubespray's paths is the release its download list asked for."""
    todo, served, _ = built
    with tarfile.open(served.files["etcd"]) as tar:
        tar.extractall(tmp_path / "etcd", filter="data")
    [etcd] = (tmp_path / "etcd").glob("etcd-*/etcd")
    assert f"etcd Version: {todo['etcd'].version.lstrip('v')}" in _version_line(etcd, "--version")
    assert _version_line(served.files["runc"], "--version").splitlines()[0] == \
        f"runc version {todo['runc'].version.lstrip('v')}"
    with tarfile.open(served.files["containerd"]) as tar:
        tar.extractall(tmp_path / "containerd", filter="data")
    assert f" v{todo['containerd'].version.lstrip('v')}" in _version_line(tmp_path / "containerd/bin/containerd",
                                                                           "--version")
