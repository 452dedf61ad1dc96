"""What kubespray would download, decided from a checkout's own list (a small tree written
by the test, tests/unit/kubespray_tree.py), and the offline extra vars built on it."""

import pytest
import yaml

from harness.errors import UsageError
from harness.kubespray import offline
from harness.kubespray.downloads import Defaults

from . import kubespray_tree
from .kubespray_tree import SHA


@pytest.fixture
def defaults(tmp_path):
    return Defaults(kubespray_tree.write(tmp_path), "9.8.7")


def by_name(downloads):
    return {d.name: d for d in downloads}


def test_the_default_version_is_the_first_key_of_kubelet_checksums(defaults):
    assert defaults.default_kube_version() == "1.40.1"


def test_supported_versions_are_those_in_all_three_tables(defaults):
    assert defaults.supported_versions() == ["1.40.1", "1.40.0", "1.39.5"]  # 1.38.0 is only in kubeadm's
    assert defaults.supported()["kubeadm_checksums"] == ["1.40.1", "1.40.0", "1.39.5", "1.38.0"]


def test_files_and_images_for_the_default_version(defaults):
    got = by_name(defaults.resolve())
    assert list(got) == ["kubeadm", "runc", "crictl", "widget", "pause", "kubeadm_kube_apiserver",
                         "kubeadm_kube_controller_manager", "kubeadm_kube_scheduler", "kubeadm_kube_proxy"]
    kubeadm = got["kubeadm"]
    assert kubeadm.path == "dl.k8s.io/release/v1.40.1/bin/linux/amd64/kubeadm"
    assert kubeadm.url == "https://" + kubeadm.path and kubeadm.file_name == "kubeadm"
    assert (kubeadm.sha256, kubeadm.table, kubeadm.version) == (SHA["c"], "kubeadm_checksums", "1.40.1")
    assert got["runc"].path == "github.com/example/runc/releases/download/v2.1.0/runc.amd64"
    # crictl: the newest below the next minor (1.41), as `select('version', ..., '<')` picks it
    assert got["crictl"].path == "github.com/example/crictl/v1.40.0/crictl-linux.tgz"
    assert got["crictl"].version == "1.40.0" and got["crictl"].groups == ("k8s_cluster",)
    assert got["widget"].image == "docker.io/example/widget:v0.9.1"
    assert got["pause"].image == "registry.k8s.io/pause:9.1"
    assert got["kubeadm_kube_proxy"].image == "registry.k8s.io/kube-proxy:v1.40.1"


def test_an_older_version_changes_what_follows_from_it(defaults):
    got = by_name(defaults.resolve("1.39.5"))
    assert got["kubeadm"].path == "dl.k8s.io/release/v1.39.5/bin/linux/amd64/kubeadm"
    assert got["kubeadm"].sha256 == SHA["e"]
    assert got["crictl"].version == "1.39.0" and got["pause"].tag == "9.0"


def test_settings_decide_what_is_enabled_and_disabled_entries_are_not_evaluated(defaults):
    # `gizmo` names a variable nobody defines: enabling it is what makes that an error
    got = by_name(defaults.resolve(None, {"container_manager": "crio", "kube_network_plugin": "other"}))
    assert "runc" not in got and "widget" not in got and "gizmo" not in got
    with pytest.raises(UsageError) as info:
        defaults.resolve(None, {"gizmo_enabled": True})
    assert "downloads.gizmo.url" in str(info.value) and "`a_variable_nobody_defines` is not defined" in str(info.value)


def test_kubeadm_etcd_image_only_when_kubeadm_runs_etcd(defaults):
    settings = {"etcd_deployment_type": "kubeadm", "etcd_image_repo": "quay.io/example/etcd", "etcd_image_tag": "v9"}
    assert by_name(defaults.resolve(None, settings))["kubeadm_etcd"].image == "quay.io/example/etcd:v9"


@pytest.mark.parametrize("version", ["1.40.2", "1.38.0", "1.41.0"])
def test_a_version_outside_the_tables_is_refused_naming_what_is_missing(defaults, version):
    with pytest.raises(UsageError) as info:
        defaults.resolve(version)
    text = str(info.value)
    assert f"Kubernetes {version} is not in kubespray 9.8.7's checksum tables" in text
    assert "roles/kubespray_defaults/vars/main/checksums.yml" in text
    assert "it supports 1.39.5, 1.40.0-1.40.1" in text
    if version == "1.38.0":
        assert "no kubelet_checksums.amd64, kubectl_checksums.amd64 entry '1.38.0'" in text


def test_a_checkout_without_a_downloads_list_is_refused(tmp_path):
    root = kubespray_tree.write(tmp_path)
    (root / "roles/kubespray_defaults/defaults/main/download.yml").write_text("github_url: https://github.com\n")
    with pytest.raises(UsageError, match="no `downloads:` mapping"):
        Defaults(root, "9.8.7")


# -- the offline extra vars ------------------------------------------------------

def test_offline_variables_are_read_from_the_download_defaults(defaults):
    assert offline.url_variables(defaults) == {"github_url": "github.com", "dl_k8s_io_url": "dl.k8s.io"}
    assert offline.registry_variables(defaults) == {"kube_image_repo": "registry.k8s.io", "docker_image_repo": "docker.io"}


def test_extra_vars_point_every_download_at_the_lab(defaults):
    ev = offline.extra_vars(defaults, "1.40.0", "http://192.168.100.1:8080", "192.168.100.1:5000",
                            {"kube_network_plugin": "widget"})
    assert ev["kube_version"] == "1.40.0" and ev["unsafe_show_logs"] is True
    assert ev["github_url"] == "http://192.168.100.1:8080/github.com"
    assert ev["dl_k8s_io_url"] == "http://192.168.100.1:8080/dl.k8s.io"
    assert ev["kube_image_repo"] == "192.168.100.1:5000/registry.k8s.io"
    assert ev["docker_image_repo"] == "192.168.100.1:5000/docker.io"
    assert ev["containerd_registries_mirrors"] == [{
        "prefix": "192.168.100.1:5000", "server": "http://192.168.100.1:5000",
        "mirrors": [{"host": "http://192.168.100.1:5000", "capabilities": ["pull", "resolve"], "skip_verify": False}]}, {
        # kubelab's own images (the probes' toolbox), with the path kept as the kit pushed it
        "prefix": "kubelab.local", "server": "https://kubelab.local",
        "mirrors": [{"host": "http://192.168.100.1:5000/v2/kubelab.local", "capabilities": ["pull", "resolve"],
                     "skip_verify": False, "override_path": True}]}]
    # evaluated the way kubespray would, every file lands below files_repo and every image in the registry
    got = defaults.resolve("1.40.0", ev)
    for d in got:
        if d.kind == "file":
            assert d.url.startswith("http://192.168.100.1:8080/"), d
        else:
            assert d.repo.startswith("192.168.100.1:5000/"), d
    assert by_name(got)["kubeadm"].url == "http://192.168.100.1:8080/dl.k8s.io/release/v1.40.0/bin/linux/amd64/kubeadm"
    assert yaml.safe_load(offline.dump(ev, "made by a test")) == ev


@pytest.mark.parametrize("files_repo, registry, message", [
    ("http://h:8080/", "h:5000", "without a trailing slash"),
    ("ftp://h", "h:5000", "http"),
    ("http://h:8080", "http://h:5000", "host:port"),
])
def test_extra_vars_refuse_bad_server_addresses(defaults, files_repo, registry, message):
    with pytest.raises(UsageError, match=message):
        offline.extra_vars(defaults, "1.40.0", files_repo, registry)


def test_extra_vars_refuse_an_unsupported_version_and_a_setting_kubelab_owns(defaults):
    with pytest.raises(UsageError, match="Kubernetes 1.40.7 is not in"):
        offline.extra_vars(defaults, "1.40.7", "http://h:8080", "h:5000")
    with pytest.raises(UsageError, match="install.variables: `github_url` is kubelab's to set: it points kubespray at the lab's offline"):
        offline.extra_vars(defaults, "1.40.0", "http://h:8080", "h:5000", {"github_url": "https://github.com"})


def test_checksum_tables_keep_upstream_rows_and_replace_the_served_ones(defaults):
    got = defaults.resolve("1.40.0")
    ours = "1" * 64
    tables = offline.checksum_tables(defaults, got, {"kubeadm": ours, "runc": "sha256:" + "2" * 64})
    assert tables == {
        "kubeadm_checksums": {"amd64": {"1.40.1": f"sha256:{SHA['c']}", "1.40.0": f"sha256:{ours}",
                                        "1.39.5": f"sha256:{SHA['e']}", "1.38.0": f"sha256:{SHA['f']}"}},
        "runc_checksums": {"amd64": {"2.1.0": "sha256:" + "2" * 64, "2.0.9": f"sha256:{SHA['e']}"}},
    }
    assert offline.missing_checksums(got, {"kubeadm": ours, "runc": ours}) == ["crictl"]
    # kubespray evaluated with that file as extra vars takes kubelab's checksum
    assert by_name(defaults.resolve("1.40.0", tables))["kubeadm"].sha256 == ours


def test_a_table_of_one_file_for_every_architecture_keeps_its_no_arch_key(defaults):
    # kubespray's calico role asserts `calico_version in calico_crds_checksums.no_arch.keys()`
    # (roles/network_plugin/calico/tasks/check.yml): the table must keep that key, not the arch's
    got = by_name(defaults.resolve("1.40.0", {"kube_network_plugin": "gadget"}))["crds"]
    assert (got.table, got.version, got.sha256) == ("widget_crds_checksums", "0.9.1", SHA["d"])
    ours = "4" * 64
    tables = offline.checksum_tables(defaults, [got], {"crds": ours})
    assert tables == {"widget_crds_checksums": {"no_arch": {"0.9.1": f"sha256:{ours}", "0.9.0": f"sha256:{SHA['e']}"}}}
    assert by_name(defaults.resolve("1.40.0", {"kube_network_plugin": "gadget", **tables}))["crds"].sha256 == ours


def test_a_release_the_scenario_picks_beyond_the_table_gets_kubelabs_row(defaults):
    # install.variables: {runc_version: 2.1.1}, a release the checkout's table does not carry
    got = by_name(defaults.resolve("1.40.0", {"runc_version": "2.1.1"}))["runc"]
    assert (got.table, got.version, got.sha256) == ("runc_checksums", "2.1.1", None)
    assert got.path == "github.com/example/runc/releases/download/v2.1.1/runc.amd64"
    tables = offline.checksum_tables(defaults, [got], {"runc": "3" * 64})
    assert tables["runc_checksums"]["amd64"]["2.1.1"] == "sha256:" + "3" * 64
    assert by_name(defaults.resolve("1.40.0", {"runc_version": "2.1.1", **tables}))["runc"].sha256 == "3" * 64


def test_checksum_tables_refuse_unknown_names_and_bad_sums(defaults):
    got = defaults.resolve("1.40.0")
    with pytest.raises(UsageError, match="checksums given for gizmo, which kubespray 9.8.7 does not download"):
        offline.checksum_tables(defaults, got, {"gizmo": "1" * 64})
    with pytest.raises(UsageError, match="is not a sha256"):
        offline.checksum_tables(defaults, got, {"kubeadm": "abc"})


@pytest.mark.parametrize("url", ["file:///home/u/.bashrc", "https://github.com/../../etc/passwd", "ftp://h/x"])
def test_a_file_url_that_is_no_web_address_below_a_host_is_refused(defaults, url):
    # the URL becomes a path below the lab's file server: it must not point anywhere else
    with pytest.raises(UsageError, match=r"downloads\.runc\.url is `.*`; kubelab serves a file at its http\(s\)"):
        defaults.resolve("1.40.0", {"runc_download_url": url})
