"""`invoke scenario kubespray-layer-check` with the real checkout in KUBELAB_KUBESPRAY (-m kubespray).

A run whose downloads the kit cannot serve must stop before any machine exists, exit 2, naming
each with kubespray's own path, read from the checkout's list. The scenario's own `install.variables`
are replaced by one image tag no kit has (`coredns_image_tag`, an image kubespray pulls by
repo:tag with no checksum), so the case exists whatever the kit comes to serve.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import KitNotBuilt
from harness.kubespray import serving
from harness.artifacts import kit as kits
from harness.artifacts.versions import KubeVersion
from harness.kubespray.downloads import Defaults
from harness.machines.libvirt import LibvirtBackend
from harness.paths import project_root
from harness.tracks.kubespray import settings
from harness.scenario.files import find
from harness.scenario.load import load
from tests.conftest import unavailable

pytestmark = pytest.mark.kubespray

UNSERVED_TAG = "v0.0.0-unserved"  # no CoreDNS release has it


def test_a_run_the_kit_cannot_serve_stops_before_any_machine_naming_each_download(ks, tmp_path):
    text = find("kubespray-layer-check").read_text()
    stripped = tmp_path / "kubespray-layer-check.yaml"
    stripped.write_text(re.sub(r"\n  variables:\n(    .*\n)+", f"\n  variables:\n    coredns_image_tag: {UNSERVED_TAG}\n",
                               text))
    scenario = load(stripped)
    assert dict(scenario.install.variables) == {"coredns_image_tag": UNSERVED_TAG}
    try:
        kit = kits.load_kit(KubeVersion.parse(scenario.install.kubernetes))
    except KitNotBuilt as exc:  # only "not built" is a missing prerequisite; any other error fails
        unavailable(str(exc))
    wanted = Defaults(ks.path, ks.version).resolve(scenario.install.kubernetes, settings(scenario.install))
    lacking = serving.serving(wanted, kit).problems()
    coredns = next(d for d in wanted if d.name == "coredns")
    assert f"image coredns: {coredns.image}" in lacking and coredns.image.endswith(f":{UNSERVED_TAG}")
    before = LibvirtBackend().leftovers()
    runs = tmp_path / "runs"
    proc = subprocess.run([str(Path(sys.executable).with_name("invoke")), "scenario", str(stripped),
                           "--kubespray", str(ks.path)], cwd=project_root(), capture_output=True, text=True,
                          timeout=600, env=dict(os.environ, KUBELAB_RUNS=str(runs)))
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2, said
    assert f"kit cannot serve what kubespray {ks.version} downloads" in said
    for line in lacking:  # e.g. "file etcd: github.com/etcd-io/etcd/releases/download/v3.6.14/etcd-...tar.gz"
        assert line in said
    assert "dl.k8s.io/release" not in said  # kubeadm, kubelet and kubectl are served
    assert LibvirtBackend().leftovers() == before
    assert not runs.exists() or not any(runs.rglob("run.json"))


def test_a_clone_of_the_wrong_project_stops_the_run_before_any_machine(ks, git_clones, tmp_path):
    """A calico release the kit has not built (kubespray's previous row, 3.31.6) is built from the
    clone KUBELAB_SRC_CALICO names; pointed at another project's clone, the run stops at preflight,
    exit 2, naming calico, the version and how to give it, with no machine made."""
    text = find("kubespray-layer-check").read_text()
    older = tmp_path / "kubespray-layer-check.yaml"
    older.write_text(re.sub(r"\n  variables:\n", "\n  variables:\n    calico_version: 3.31.6\n", text))
    scenario = load(older)
    try:
        kits.load_kit(KubeVersion.parse(scenario.install.kubernetes))
    except KitNotBuilt as exc:
        unavailable(str(exc))
    wanted = Defaults(ks.path, ks.version).resolve(scenario.install.kubernetes, settings(scenario.install))
    assert next(d for d in wanted if d.name == "calicoctl").version == "3.31.6"
    before = LibvirtBackend().leftovers()
    runs = tmp_path / "runs"
    env = dict(os.environ, KUBELAB_RUNS=str(runs), KUBELAB_SRC_CALICO=str(git_clones["node-cache"]))
    proc = subprocess.run([str(Path(sys.executable).with_name("invoke")), "scenario", str(older),
                           "--kubespray", str(ks.path)], cwd=project_root(), capture_output=True, text=True,
                          timeout=600, env=env)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2, said
    assert f"calico v3.31.6: {git_clones['node-cache']} has no tag v3.31.6" in said, said
    assert "`git clone --branch v3.31.6 https://github.com/projectcalico/calico PATH`" in said
    assert "to go on without it, set `install.cni: flannel` in the scenario" in said
    assert LibvirtBackend().leftovers() == before
    assert not runs.exists() or not any(runs.rglob("run.json"))
