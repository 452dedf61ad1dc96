"""`invoke scenario kubespray-layer-check` with the real checkout in KUBELAB_KUBESPRAY (-m kubespray).

The scenario's `install.variables` leave out what the lab cannot serve (nodelocaldns, the DNS
autoscaler, the workers' nginx) and pick the nerdctl release that builds here. Without them the
checkout's own pins ask for downloads no module here builds, and the run must stop before any
machine exists, exit 2, naming each with kubespray's own path, read from the checkout's list.
"""

import os
import re
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

    text = find("kubespray-layer-check").read_text()
    stripped = tmp_path / "kubespray-layer-check.yaml"
    stripped.write_text(re.sub(r"\n  variables:\n(    .*\n)+", "\n", text))
    scenario = load(stripped)
    assert not scenario.install.variables
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
