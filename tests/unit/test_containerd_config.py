"""containerd config.toml and hosts.toml, per containerd major version."""

import tomllib

import pytest

from harness.node import containerd_config as cc
from harness.serve import mirror


@pytest.mark.parametrize("version,major", [("1.6.20~ds1-1+deb12u3", 1), ("1.7.24~ds1-6+deb13u1", 1),
                                           ("2.1.9+ds1-3", 2), ("v2.3.4", 2), ("1:2.2.1-1", 2)])
def test_major_from_debian_and_upstream_versions(version, major):
    assert cc.major(version) == major


def test_containerd_1x_reads_a_version_2_file_with_the_cri_plugin():
    doc = tomllib.loads(cc.config_toml("1.7.24~ds1-6", sandbox_image="registry.k8s.io/pause:3.10.2"))
    assert doc["version"] == 2
    cri = doc["plugins"]["io.containerd.grpc.v1.cri"]
    assert cri["registry"]["config_path"] == "/etc/containerd/certs.d"
    assert cri["sandbox_image"] == "registry.k8s.io/pause:3.10.2"
    assert cri["cni"] == {"bin_dir": "/opt/cni/bin", "conf_dir": "/etc/cni/net.d"}
    assert "containerd" not in cri  # runc options untouched unless asked
    assert doc["plugins"]["io.containerd.internal.v1.opt"]["path"] == "/var/lib/containerd/opt"


def test_containerd_2x_reads_a_version_3_file_with_images_and_runtime_plugins():
    doc = tomllib.loads(cc.config_toml("2.1.9+ds1-3", sandbox_image="registry.k8s.io/pause:3.10.2"))
    assert doc["version"] == 3
    plugins = doc["plugins"]
    assert plugins["io.containerd.cri.v1.images"]["registry"]["config_path"] == "/etc/containerd/certs.d"
    assert plugins["io.containerd.cri.v1.images"]["pinned_images"]["sandbox"] == "registry.k8s.io/pause:3.10.2"
    assert plugins["io.containerd.cri.v1.runtime"]["cni"]["bin_dirs"] == ["/opt/cni/bin"]
    assert "io.containerd.grpc.v1.cri" not in plugins


@pytest.mark.parametrize("version,path", [
    ("1.6.20", ("io.containerd.grpc.v1.cri", "containerd", "runtimes", "runc", "options")),
    ("2.1.9", ("io.containerd.cri.v1.runtime", "containerd", "runtimes", "runc", "options")),
])
def test_systemd_cgroup_lands_at_the_path_of_that_version(version, path):
    for value in (True, False):
        node = tomllib.loads(cc.config_toml(version, systemd_cgroup=value))["plugins"]
        for part in path:
            node = node[part]
        assert node == {"SystemdCgroup": value}


def test_hosts_toml_mirrors_each_upstream_over_plain_http():
    files = mirror.hosts_files("kubelab-host:5000")
    assert sorted(files) == ["/etc/containerd/certs.d/ghcr.io/hosts.toml",
                             "/etc/containerd/certs.d/kubelab.local/hosts.toml",
                             "/etc/containerd/certs.d/registry.k8s.io/hosts.toml"]
    doc = tomllib.loads(files["/etc/containerd/certs.d/registry.k8s.io/hosts.toml"])
    assert doc["server"] == "https://registry.k8s.io"
    host = doc["host"]["http://kubelab-host:5000/v2/registry.k8s.io"]
    assert host == {"capabilities": ["pull", "resolve"], "override_path": True}
    assert "skip_verify" not in host  # it makes 1.7.16+ and 2.x try HTTPS first


def test_the_same_hosts_toml_serves_1x_and_2x():
    # hosts.toml's format is the same from 1.6 to 2.4; only config_path's table differs.
    one = cc.config_toml("1.6.20")
    two = cc.config_toml("2.1.9")
    assert 'config_path = "/etc/containerd/certs.d"' in one
    assert "config_path = '/etc/containerd/certs.d'" in two


@pytest.mark.parametrize("version,release", [("1.6.20~ds1-1+deb12u3", (1, 6)), ("2.1.9+ds1-3", (2, 1)),
                                             ("1:2.2.1-1", (2, 2)), ("v2.3.4", (2, 3)), ("2.4.0~rc.1", (2, 4))])
def test_major_and_minor_from_debian_and_upstream_versions(version, release):
    assert cc.release(version) == release
    assert cc.has_stats_collector(version) is (release >= (2, 3))


def test_the_stats_period_lands_in_the_runtime_plugin_only_where_containerd_has_the_collector():
    # read with the built containerd v2.4.2: `containerd --config F config dump` shows this file's
    # value under io.containerd.cri.v1.runtime and keeps the images plugin's integer period (10)
    doc = tomllib.loads(cc.config_toml("v2.4.2", systemd_cgroup=True, stats_collect_period="30s"))
    runtime = doc["plugins"]["io.containerd.cri.v1.runtime"]
    assert runtime["stats_collect_period"] == "30s"
    assert runtime["containerd"]["runtimes"]["runc"]["options"] == {"SystemdCgroup": True}
    assert "stats_collect_period" not in doc["plugins"]["io.containerd.cri.v1.images"]
    for older in ("2.1.9+ds1-3", "1:2.2.1-1", "1.7.24~ds1-6"):
        assert "stats_collect_period" not in cc.config_toml(older, stats_collect_period="30s")
    assert "stats_collect_period" not in cc.config_toml("v2.4.2")
