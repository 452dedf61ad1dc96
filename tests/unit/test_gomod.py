"""Wrapper go.mod and version flags, for two Kubernetes minors.

The go.mod excerpts below are written here in the shape of k8s.io/kubernetes'
own (staging modules required at v0.0.0 and replaced with ./staging paths);
the module names are those of 1.35 and 1.36, where 1.36 adds cri-streaming
and streaming (kubernetes 1.36 CHANGELOG; k8s-from-source.md 1.2).
"""

import re

from harness.artifacts import components, gomod
from harness.artifacts.versions import KubeVersion

COMMON = ("api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider "
          "cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api "
          "cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms "
          "kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics "
          "mount-utils pod-security-admission sample-apiserver").split()
REPLACE_ONLY = ["sample-cli-plugin", "sample-controller"]


def kubernetes_gomod(staging: list[str], go_line: str) -> str:
    required = [n for n in staging if n not in REPLACE_ONLY]
    return "\n".join(
        ["module k8s.io/kubernetes", "", f"go {go_line}", "", "require (",
         "\tgithub.com/spf13/cobra v1.10.2"] + [f"\tk8s.io/{n} v0.0.0" for n in required] + [")", "", "replace ("]
        + [f"\tk8s.io/{n} => ./staging/src/k8s.io/{n}" for n in staging] + [")", ""])


V135 = kubernetes_gomod(COMMON + REPLACE_ONLY, "1.25.0")
V136 = kubernetes_gomod(COMMON + REPLACE_ONLY + ["cri-streaming", "streaming"], "1.26.0")


def replaces(text: str) -> dict[str, str]:
    return dict(re.findall(r"^\t(k8s\.io/\S+) => k8s\.io/\S+ (v\S+)$", text, re.M))


def test_every_staging_module_is_replaced_by_its_published_tag():
    text = gomod.kubernetes_wrapper(KubeVersion.parse("1.36.3"), V136, ["kubeadm"])
    got = replaces(text)
    assert len(got) == 33
    assert set(got.values()) == {"v0.36.3"}
    assert "k8s.io/cri-streaming" in got and "k8s.io/sample-controller" in got


def test_the_staging_set_follows_the_release():
    text = gomod.kubernetes_wrapper(KubeVersion.parse("1.35.4"), V135, ["kubeadm"])
    got = replaces(text)
    assert len(got) == 31 and set(got.values()) == {"v0.35.4"}
    assert "k8s.io/cri-streaming" not in got


def test_go_and_godebug_lines_follow_the_minor():
    t135 = gomod.kubernetes_wrapper(KubeVersion.parse("1.35.4"), V135, ["kubeadm"])
    t136 = gomod.kubernetes_wrapper(KubeVersion.parse("1.36.3"), V136, ["kubeadm"])
    assert "\ngo 1.25.0\n" in t135 and "godebug default=go1.25" in t135
    assert "\ngo 1.26.0\n" in t136 and "godebug default=go1.26" in t136
    assert "\tk8s.io/kubernetes v1.35.4\n" in t135


def test_every_command_is_named_as_a_tool():
    text = gomod.kubernetes_wrapper(KubeVersion.parse("1.36.3"), V136, list(components.KUBERNETES_COMMANDS))
    tools = re.search(r"tool \(\n(.*?)\n\)", text, re.S).group(1).split()
    assert sorted(tools) == sorted(f"k8s.io/kubernetes/cmd/{c}" for c in components.KUBERNETES_COMMANDS)


def test_version_flags_stamp_both_packages_without_a_suffix():
    flags = gomod.kubernetes_version_flags(KubeVersion.parse("1.36.3"), "2026-07-22T18:07:38Z")
    for pkg in ("k8s.io/client-go/pkg/version", "k8s.io/component-base/version"):
        assert f"-X {pkg}.gitVersion=v1.36.3" in flags
        assert f"-X {pkg}.gitMajor=1" in flags
        assert f"-X {pkg}.gitMinor=36" in flags  # no "+": an exact release
        assert f"-X {pkg}.buildDate=2026-07-22T18:07:38Z" in flags
    assert len(flags) == 12


def test_version_flags_for_another_minor():
    flags = gomod.kubernetes_version_flags(KubeVersion.parse("1.35.4"), "x")
    assert "-X k8s.io/component-base/version.gitVersion=v1.35.4" in flags
    assert "-X k8s.io/component-base/version.gitMinor=35" in flags


def test_a_gomod_without_staging_modules_is_refused():
    import pytest

    with pytest.raises(ValueError):
        gomod.kubernetes_wrapper(KubeVersion.parse("1.36.3"), "module example.com/x\n", ["kubeadm"])


def test_component_key_changes_with_every_input():
    base = components.kubernetes(KubeVersion.parse("1.36.3"), V136, "2026-07-22T18:07:38Z")[0]
    key = base.key("go1.26.8")
    assert key == components.kubernetes(KubeVersion.parse("1.36.3"), V136, "2026-07-22T18:07:38Z")[0].key("go1.26.8")
    assert base.key("go1.26.9") != key
    other_date = components.kubernetes(KubeVersion.parse("1.36.3"), V136, "2026-07-23T00:00:00Z")[0]
    assert other_date.key("go1.26.8") != key
    other_version = components.kubernetes(KubeVersion.parse("1.36.1"), V136, "2026-07-22T18:07:38Z")[0]
    assert other_version.key("go1.26.8") != key


def test_kubernetes_components_share_one_wrapper_and_build_without_cgo():
    comps = components.kubernetes(KubeVersion.parse("1.36.3"), V136, "d")
    assert [c.name for c in comps] == list(components.KUBERNETES_COMMANDS)
    assert {c.wrapper for c in comps} == {"kubernetes-v1.36.3"}
    assert all(dict(c.env)["CGO_ENABLED"] == "0" and dict(c.env)["GOTOOLCHAIN"] == "local" for c in comps)
    assert comps[0].flags()[:1] == ["-trimpath"]


def test_wrappers_of_older_modules_still_get_a_go_line_with_tool_support():
    c = components.flannel_cni_plugin("1.14")
    assert "\ngo 1.24.0\n" in c.gomod_text
    assert components.coredns("v1.14.2", "1.25.0").gomod_text.count("\ngo 1.25.0\n") == 1


def test_kube_version_parsing():
    import pytest

    from harness.errors import UsageError

    assert str(KubeVersion.parse("v1.36.3")) == "1.36.3"
    assert KubeVersion.parse("1.36.3").staging == "v0.36.3"
    for bad in ("1.36", "1.36.3-rc.1", "latest", ""):
        with pytest.raises(UsageError):
            KubeVersion.parse(bad)
    with pytest.raises(UsageError, match="1.34, 1.35, 1.36, 1.37"):
        KubeVersion.parse("1.33.1").check_supported()
