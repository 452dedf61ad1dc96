"""Wrapper modules: the go.mod kubelab writes to build an upstream program as a dependency.

Pure text in, text out. k8s.io/kubernetes requires its staging modules
(k8s.io/api, ...) at the non-existent v0.0.0 and maps them to ./staging with
`replace` lines, which Go ignores in a dependency; the wrapper therefore
replaces every one of them with its published tag v0.<minor>.<patch>
(kubernetes/kubernetes#79384). The list is read from that release's own
go.mod, so a staging module added in a later minor is picked up by itself.
"""

from __future__ import annotations

import re

from .versions import KubeVersion

STAGING_REQUIRE = re.compile(r"^\s*(?:require\s+)?k8s\.io/([\w.-]+)\s+v0\.0\.0\s*$", re.M)
STAGING_REPLACE = re.compile(r"^\s*(?:replace\s+)?k8s\.io/([\w.-]+)\s+=>\s+\./staging/", re.M)
WRAPPER_MODULE = "kubelab.invalid/build"


def staging_modules(kubernetes_gomod: str) -> list[str]:
    """Every k8s.io module that k8s.io/kubernetes' go.mod requires at v0.0.0 or maps to ./staging."""
    names = set(STAGING_REQUIRE.findall(kubernetes_gomod)) | set(STAGING_REPLACE.findall(kubernetes_gomod))
    return sorted(names)


def wrapper(requires: dict[str, str], tools: list[str], go_line: str,
            replaces: dict[str, str] | None = None) -> str:
    """A go.mod that requires `requires` (module -> version) and names each program
    as a `tool` (documentation of what the wrapper is for; `go tool` can run them)."""
    lines = [f"module {WRAPPER_MODULE}", "", f"go {go_line}", ""]
    # The main module's godebug line sets the GODEBUG defaults; a dependency's is ignored.
    lines += [f"godebug default=go{'.'.join(go_line.split('.')[:2])}", ""]
    lines += ["require ("] + [f"\t{m} {v}" for m, v in sorted(requires.items())] + [")", ""]
    lines += ["tool ("] + [f"\t{t}" for t in sorted(tools)] + [")", ""]
    if replaces:
        lines += ["replace ("] + [f"\t{m} => {m} {v}" for m, v in sorted(replaces.items())] + [")", ""]
    return "\n".join(lines)


def kubernetes_wrapper(version: KubeVersion, kubernetes_gomod: str, commands: list[str]) -> str:
    staging = staging_modules(kubernetes_gomod)
    if not staging:
        raise ValueError("no staging modules found in k8s.io/kubernetes' go.mod: is this its go.mod?")
    return wrapper(
        {"k8s.io/kubernetes": version.tag},
        [f"k8s.io/kubernetes/cmd/{c}" for c in commands],
        version.go_line,
        {f"k8s.io/{name}": version.staging for name in staging},
    )


VERSION_PACKAGES = ("k8s.io/client-go/pkg/version", "k8s.io/component-base/version")


def kubernetes_version_flags(version: KubeVersion, build_date: str) -> list[str]:
    """The -X flags upstream's hack/lib/version.sh (kube::version::ldflags) sets, on both
    packages. gitMajor matters: without it kubeadm's skew constants become
    `v1.0.0-placeholder-version`. The version has no pre-release suffix: kubeadm
    turns `v1.36.3-anything` into v1.36.2 when it picks image tags
    (cmd/kubeadm/app/util/version.go, kubeadmVersion). gitTreeState is `archive`:
    the source is the module archive, not a git tree; there is no commit to name."""
    values = {
        "gitVersion": version.tag,
        "gitMajor": str(version.major),
        "gitMinor": str(version.minor),
        "gitTreeState": "archive",
        "gitCommit": "",
        "buildDate": build_date,
    }
    return [f"-X {pkg}.{key}={value}" for pkg in VERSION_PACKAGES for key, value in values.items()]
