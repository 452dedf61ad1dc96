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
from harness.artifacts import git_source, store
from harness.kubespray import extras, readiness
from harness.kubespray.downloads import Defaults
from harness.model import InstallDef
from harness.progress import Progress
from harness.serve import registry
from harness.tracks.kubespray import settings
from tests.conftest import unavailable

pytestmark = pytest.mark.kubespray


@pytest.fixture(scope="module")
def built(ks, git_clones):
    try:
        kit = kits.load_kit(KubeVersion.parse(DEFAULT_KUBERNETES))
    except KitNotBuilt as exc:  # only "not built" is a missing prerequisite; any other error fails
        unavailable(str(exc))
    # kubespray's own defaults: calico, nodelocaldns, dns-autoscaler, nerdctl at its pin
    install = InstallDef(track="kubespray", kubernetes=DEFAULT_KUBERNETES, cni="calico")
    wanted = Defaults(ks.path, ks.version).resolve(DEFAULT_KUBERNETES, settings(install))
    served, gaps = readiness.build_all(wanted, kit, Progress(quiet=True), ks.version)
    return {d.name: d for d in extras.buildable(wanted)}, served, gaps


def _version_line(path, *args) -> str:
    return subprocess.run([str(path), *args], capture_output=True, text=True, timeout=60).stdout


def test_each_recipe_of_the_list_is_served_at_kubesprays_path(built):
    todo, served, gaps = built
    assert sorted(todo) == ["calico_cni", "calico_crds", "calico_node", "calico_policy", "calicoctl", "containerd",
                            "dnsautoscaler", "etcd", "nerdctl", "nginx", "nodelocaldns", "runc"]
    assert served.complete and not gaps  # kubespray's defaults, every download served
    assert sorted(set(todo) & set(served.files)) == ["calico_crds", "calicoctl", "containerd", "etcd", "nerdctl",
                                                     "runc"]


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


def _tag_commit(clone, tag) -> str:
    return subprocess.run(["git", "-C", str(clone), "rev-parse", f"{tag}^{{commit}}"], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_what_is_built_from_a_git_tag_is_the_pinned_release_and_says_so(built, git_clones, tmp_path):
    todo, served, _ = built
    with tarfile.open(served.files["nerdctl"]) as tar:
        assert tar.getnames() == ["nerdctl"]
        tar.extractall(tmp_path / "nerdctl", filter="data")
    nerdctl = todo["nerdctl"].version.lstrip("v")
    # cobra's "nerdctl version %s", TrimPrefix(version.GetVersion(), "v") (cmd/nerdctl/main.go @ v2.3.0)
    assert _version_line(tmp_path / "nerdctl/nerdctl", "--version").strip() == f"nerdctl version {nerdctl}"
    calico = todo["calicoctl"].version.lstrip("v")
    # calicoctl version: "Client Version:    %s" of buildinfo.Version (calicoctl/commands/version.go @ v3.31.7)
    assert f"Client Version:    v{calico}" in _version_line(served.files["calicoctl"], "version")
    crds = Path(served.files["calico_crds"]).read_text()
    assert "kind: CustomResourceDefinition" in crds and "name: ippools.crd.projectcalico.org" in crds
    # each built from the clone's commit for the tag kubespray pins, and recorded so
    for name, tag in (("nerdctl", f"v{nerdctl}"), ("calico", f"v{calico}"),
                      ("node-cache", todo["nodelocaldns"].tag), ("cluster-proportional-autoscaler",
                                                                  todo["dnsautoscaler"].tag)):
        records = [e.data["source"] for e in store.all_entries()
                   if e.data.get("component") == name and e.data.get("source", {}).get("tag") == tag]
        assert records, f"no store entry of {name} {tag}"
        assert {r["commit"] for r in records} == {_tag_commit(git_clones[name], tag)}
        assert git_source.REPOSITORIES[name].upstream == records[0]["upstream"]


def test_the_images_built_from_git_tags_are_served_under_kubesprays_refs(built):
    todo, _, _ = built
    kit = kits.load_kit(KubeVersion.parse(DEFAULT_KUBERNETES))
    refs = registry.served(Path(kit["registry"]))
    for name in ("nodelocaldns", "dnsautoscaler", "calico_node", "calico_cni", "calico_policy"):
        assert todo[name].image in refs, name
