"""What the preflight says about a download the kit lacks: buildable here but not built yet, or not
buildable here (its module is not served) and the kubespray variable that leaves it out, if any."""

import pytest

from harness.kubespray.downloads import Download
from harness.kubespray.sources import gaps, module_version
from tests.git_repos import tagged

# the module proxy's words for a module it refuses (seen for nerdctl, k8s.io/dns and
# cluster-proportional-autoscaler on this machine, 2026-12-04)
REFUSED = "This module version is not available."


def proxy(served: set[str]):
    asked = []

    def answer(module, version):
        asked.append(f"{module}@{version}")
        return (True, "") if f"{module}@{version}" in served else (False, REFUSED)
    return answer, asked


def file(name, version):
    return Download(name, "file", ("k8s_cluster",), url=f"https://github.com/x/{name}/{version}/{name}.tar.gz",
                    version=version)


def image(name, repo, tag):
    return Download(name, "image", ("k8s_cluster",), repo=repo, tag=tag)


def test_a_download_whose_module_is_served_is_buildable_but_not_built_yet():
    answer, asked = proxy({"go.etcd.io/etcd/server/v3@v3.6.14"})
    [gap] = gaps([file("etcd", "v3.6.14")], answer, "`invoke artifacts.build --kubernetes 1.36.3 --kubespray K`")
    assert gap.buildable is True
    assert gap.reason == ("go.etcd.io/etcd/server/v3@v3.6.14 is served by the Go module proxy; kubelab builds it "
                          "once nothing else is missing (`invoke artifacts.build --kubernetes 1.36.3 --kubespray K` "
                          "builds it now)")
    assert asked == ["go.etcd.io/etcd/server/v3@v3.6.14"]


def test_one_not_served_names_the_proxys_answer_and_what_kubespray_allows():
    answer, asked = proxy(set())
    [gap] = gaps([file("etcd", "v3.6.99")], answer)
    assert gap.buildable is False and asked == ["go.etcd.io/etcd/server/v3@v3.6.99"]
    assert gap.reason == (f"cannot be built here: not served by the Go module proxy: go.etcd.io/etcd/server/v3@v3.6.99 "
                          f"({REFUSED}); no kubespray variable leaves it out")


def test_a_git_sourced_download_without_a_clone_says_how_to_give_one_and_asks_no_proxy(monkeypatch):
    monkeypatch.delenv("KUBELAB_SRC_DNS", raising=False)
    answer, asked = proxy(set())
    [gap] = gaps([image("nodelocaldns", "registry.k8s.io/dns/k8s-dns-node-cache", "1.25.0")], answer)
    assert gap.buildable is False and asked == []
    assert gap.reason == ("node-cache 1.25.0: no source: the Go module proxy does not serve k8s.io/dns; provide a "
                          "clone: `git clone --branch 1.25.0 https://github.com/kubernetes/dns PATH` (or a clone of "
                          "your mirror of it), then `--source node-cache=PATH` or KUBELAB_SRC_DNS=PATH; or, to go on "
                          "without it, set `install.variables: {enable_nodelocaldns: false}` in the scenario")
    assert gap.line().startswith("image nodelocaldns: registry.k8s.io/dns/k8s-dns-node-cache:1.25.0\n      node-cache")


def test_a_git_sourced_download_with_a_clone_at_its_tag_is_buildable(tmp_path, monkeypatch):
    clone = tagged(tmp_path / "nerdctl", "github.com/containerd/nerdctl/v2", "v2.3.0")
    monkeypatch.setenv("KUBELAB_SRC_NERDCTL", str(clone))
    answer, asked = proxy(set())
    [gap] = gaps([file("nerdctl", "2.3.0")], answer, "`invoke artifacts.build --kubespray K`")
    assert gap.buildable is True and asked == []
    assert gap.reason.startswith(f"built from {clone} at v2.3.0 (")
    assert gap.reason.endswith("kubelab builds it once nothing else is missing "
                               "(`invoke artifacts.build --kubespray K` builds it now)")
    [older] = gaps([file("nerdctl", "2.2.2")], answer)  # a pin the clone has no tag for
    assert older.buildable is False
    assert older.reason.startswith(f"nerdctl v2.2.2: {clone} has no tag v2.2.2 (its newest: v2.3.0); ")
    assert "kubespray cannot leave it out: kubespray's containerd role depends on" in older.reason


def test_debian_made_and_unknown_downloads_ask_no_proxy():
    answer, asked = proxy(set())
    nginx, other = gaps([image("nginx", "docker.io/library/nginx", "1.30.1-alpine"), file("gizmo", "1.0")], answer)
    assert nginx.buildable is True and "made from Debian's `nginx` package" in nginx.reason
    assert "kubelab builds it once nothing else is missing" in nginx.reason
    assert other.buildable is None and other.reason == "kubelab has no recipe for it"
    assert asked == []


def test_module_versions_carry_one_v():
    assert module_version(file("etcd", "v3.6.14")) == "v3.6.14"
    assert module_version(file("nerdctl", "2.3.0")) == "v2.3.0"
    assert module_version(image("nodelocaldns", "r/n", "1.25.0")) == "v1.25.0"


def test_a_proxy_that_cannot_be_asked_is_a_host_problem_not_a_module_it_lacks(monkeypatch):
    from harness.artifacts import gotool
    from harness.errors import HostError, UsageError
    from harness.kubespray.sources import proxy_answer

    def offline(module, version):
        raise UsageError(f"{module}@{version} is not served by the Go module proxy: Get "
                         '"https://proxy.golang.org/k8s.io/dns/@v/v1.25.0.info": dial tcp: lookup proxy.golang.org: '
                         "no such host")
    monkeypatch.setattr(gotool, "download", offline)
    with pytest.raises(HostError, match="cannot ask the Go module proxy whether it serves k8s.io/dns@v1.25.0"):
        proxy_answer("k8s.io/dns", "v1.25.0")

    def refused(module, version):
        raise UsageError(f"{module}@{version} is not served by the Go module proxy: reading "
                         f"https://proxy.golang.org/k8s.io/dns/@v/v1.25.0.info: 403 Forbidden\n\tserver response: {REFUSED}")
    monkeypatch.setattr(gotool, "download", refused)
    assert proxy_answer("k8s.io/dns", "v1.25.0") == (False, REFUSED)


def test_a_containerd_release_outside_kubelabs_series_is_not_promised():
    answer, _ = proxy({"github.com/containerd/containerd/v2@v2.1.5"})
    [gap] = gaps([file("containerd", "2.1.5")], answer)
    assert gap.buildable is False
    assert gap.reason == ("github.com/containerd/containerd/v2@v2.1.5 is served by the Go module proxy, but kubelab "
                          "builds containerd 2.2-2.4 only")


def test_a_recipe_name_as_an_image_is_not_promised_as_built():
    answer, _ = proxy({"go.etcd.io/etcd/server/v3@v3.6.14"})
    [gap] = gaps([image("etcd", "registry.k8s.io/etcd", "v3.6.14")], answer)
    assert gap.reason.endswith("kubelab does not build it yet as an image")
