"""The kubeadm configs kubelab writes, checked by the real `kubeadm config validate` of two
minors (built from source here; the check runs on the host, no cluster needed)."""

import subprocess

import pytest

from harness.artifacts import kit as kits
from harness.artifacts.versions import DEFAULT_KUBERNETES, PREVIOUS_KUBERNETES
from harness.progress import Progress
from harness.provisioners.kubeadm import cluster_spec
from harness.provisioners.kubeadm_config import ClusterSpec, init_config, join_config
from harness.model import InstallDef
from harness import tuning

pytestmark = pytest.mark.artifacts

# The default minor and the one before it (the matrix's second row).
MINORS = [DEFAULT_KUBERNETES, PREVIOUS_KUBERNETES]
TOKEN = "abcdef.0123456789abcdef"
HASH = "sha256:" + "ab" * 32


@pytest.fixture(scope="module", params=MINORS)
def kubeadm(request):
    version = kits.check_version(request.param)
    return version, kits.build_kubeadm(version, Progress())


def validate(kubeadm_bin, path) -> subprocess.CompletedProcess:
    return subprocess.run([str(kubeadm_bin), "config", "validate", "--config", str(path)],
                          capture_output=True, text=True, timeout=120)


def specs(version):
    track = cluster_spec(InstallDef(track="kubeadm", kubernetes=str(version)), tuning.decide("qemu"))
    kvm = cluster_spec(InstallDef(track="kubeadm", kubernetes=str(version)), tuning.decide("kvm"))
    return {"the track's (TCG settings, patches)": track,
            "the track's under KVM (upstream's defaults)": kvm,
            "air-gap: no kubernetesVersion": ClusterSpec(kubernetes="", patches_dir=""),
            "172.20/16 pods, 172.21/16 services": ClusterSpec(kubernetes=version.tag, pod_cidr="172.20.0.0/16",
                                                              service_cidr="172.21.0.0/16")}


def test_init_configs_are_valid_for_that_kubeadm(kubeadm, tmp_path):
    version, binary = kubeadm
    for what, spec in specs(version).items():
        path = tmp_path / "init.yaml"
        path.write_text(init_config(spec, "cp1", "192.0.2.10", TOKEN))
        out = validate(binary, path)
        assert out.returncode == 0, f"{version} {what}:\n{out.stdout}{out.stderr}"
        assert "ok" in (out.stdout + out.stderr).lower()


def test_join_config_is_valid_for_that_kubeadm(kubeadm, tmp_path):
    version, binary = kubeadm
    path = tmp_path / "join.yaml"
    path.write_text(join_config(specs(version)["the track's (TCG settings, patches)"], "w1", "192.0.2.11",
                                "192.0.2.10:6443", TOKEN, HASH))
    out = validate(binary, path)
    assert out.returncode == 0, f"{version}:\n{out.stdout}{out.stderr}"


def test_a_broken_config_is_refused_with_the_field(kubeadm, tmp_path):
    """The check can fail: kubeadm names what is wrong."""
    version, binary = kubeadm
    path = tmp_path / "bad.yaml"
    path.write_text(init_config(ClusterSpec(kubernetes=version.tag), "cp1", "192.0.2.10", TOKEN)
                    .replace("podSubnet: 10.244.0.0/16", "podSubnet: 10.244.0.0/99"))
    out = validate(binary, path)
    assert out.returncode != 0 and "podSubnet" in out.stdout + out.stderr
