"""`invoke scenario kubespray-layer-check` with the real checkout in KUBELAB_KUBESPRAY (-m kubespray).

The kit serves kubeadm, kubelet, kubectl and kubeadm's images; the rest of what the checkout
downloads (etcd, CNI, crictl, runc, containerd and nerdctl archives, nodelocaldns, the DNS
autoscaler, nginx) is not built yet. Until it is, the run must stop before any machine exists,
exit 2, and name each of those with kubespray's own path, read from the checkout's download list.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.kubespray import serving
from harness.kubespray.downloads import Defaults
from harness.machines.libvirt import LibvirtBackend
from harness.paths import project_root
from harness.tracks.kubespray import settings
from harness.scenario.files import find
from harness.scenario.load import load

pytestmark = pytest.mark.kubespray


def test_a_run_the_kit_cannot_serve_stops_before_any_machine_naming_each_download(ks, tmp_path):
    from harness.artifacts import kit as kits
    from harness.artifacts.versions import KubeVersion

    scenario = load(find("kubespray-layer-check"))
    try:
        kit = kits.load_kit(KubeVersion.parse(scenario.install.kubernetes))
    except Exception as exc:  # noqa: BLE001 - the reason is the skip's text
        pytest.skip(f"the kit is not built ({exc})")
    wanted = Defaults(ks.path, ks.version).resolve(scenario.install.kubernetes, settings(scenario.install))
    lacking = serving.serving(wanted, kit).problems()
    if not lacking:
        pytest.skip("the kit serves everything this checkout downloads: the full run is the test now")
    before = LibvirtBackend().leftovers()
    runs = tmp_path / "runs"
    proc = subprocess.run([str(Path(sys.executable).with_name("invoke")), "scenario", "kubespray-layer-check",
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
