"""Which versions a kit is made of. The default Kubernetes version lives here and only here.

kubeadm itself decides the etcd, CoreDNS and pause tags (its compile-time
constants): the kit reads them from the built kubeadm's
`config images list`, so they are never restated here. What kubeadm does not
pin is pinned below, each with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UsageError

DEFAULT_KUBERNETES = "1.36.3"
# A release of the minor before the default's: the second row of the two-minor tests
# (cgroup-driver-mismatch over two minors, kubeadm's config validation).
PREVIOUS_KUBERNETES = "1.35.4"
# The minors this kit knows how to build (their staging layout and Go line).
SUPPORTED_MINORS = (34, 35, 36, 37)

# flannel: the module proxy serves v0.28.4, v0.28.9 and v0.28.10. v0.28.9 and v0.28.10
# need github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc at versions the
# proxy refuses (v1.3.149, v1.3.188); v0.28.4's v1.3.75 is served. Its
# .../tencentcloud/common v1.3.79 is refused, so the wrapper requires the served
# v1.3.211 and minimal version selection takes it (a newer patch of the same API).
FLANNEL = "v0.28.4"
FLANNEL_EXTRA_REQUIRES = {"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common": "v1.3.211"}
# The tag of ghcr.io/flannel-io/flannel-cni-plugin that flannel v0.28.4's manifest names
# (Documentation/kube-flannel.yml @ v0.28.4).
FLANNEL_CNI_PLUGIN_TAG = "v1.9.1-flannel1"
# github.com/flannel-io/cni-plugin is not served by the module proxy (403 for every
# version). The same plugin lived in containernetworking/plugins as plugins/meta/flannel
# until v0.9.1, the last release that has it; that module is served, so the binary
# comes from there and its manifest entry says so.
FLANNEL_CNI_PLUGIN_MODULE = ("github.com/containernetworking/plugins", "v0.9.1")
CNI_PLUGINS = "v1.9.1"
# crictl follows Kubernetes minors (sigs.k8s.io/cri-tools). The proxy serves
# v1.34.0, v1.36.0 and v1.37.0 but refuses v1.35.0, so 1.35 gets v1.34.0: crictl
# speaks CRI v1, which every one of these kubelets and containerds serves.
CRICTL = {34: "v1.34.0", 35: "v1.34.0", 36: "v1.36.0", 37: "v1.37.0"}
# go.mod `go` and `godebug` lines of k8s.io/kubernetes per minor (component-base tags):
# the main module's lines set GODEBUG defaults, so the wrapper repeats upstream's.
GO_LINE = {34: "1.24.0", 35: "1.25.0", 36: "1.26.0", 37: "1.26.0"}

VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)$")


@dataclass(frozen=True, order=True)
class KubeVersion:
    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str) -> "KubeVersion":
        m = VERSION_RE.match(text.strip())
        if not m:
            raise UsageError(f"--kubernetes {text!r}: give a release like {DEFAULT_KUBERNETES} (no suffix)")
        return cls(*map(int, m.groups()))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    @property
    def tag(self) -> str:
        return f"v{self}"

    @property
    def staging(self) -> str:
        """The published tag of the staging modules (k8s.io/api etc.) of this release."""
        return f"v0.{self.minor}.{self.patch}"

    def check_supported(self) -> None:
        if self.major != 1 or self.minor not in SUPPORTED_MINORS:
            minors = ", ".join(f"1.{m}" for m in SUPPORTED_MINORS)
            raise UsageError(f"--kubernetes {self}: kubelab builds Kubernetes {minors}")

    @property
    def crictl(self) -> str:
        return CRICTL[self.minor]

    @property
    def go_line(self) -> str:
        return GO_LINE[self.minor]
