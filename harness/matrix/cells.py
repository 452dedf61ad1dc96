"""Matrix cells: one (Kubernetes, containerd) pair, and the scenarios that fan out in it.

The containerd axis comes from Debian's suites (each guest image carries its
suite's containerd). Host-only scenarios have no Kubernetes axis: they run
once per containerd column, in a cell whose Kubernetes is HOST. A track that
installs its own containerd over the guest's (kubespray) gets cells of its
own per suite, gated on the containerd it installs, not the suite's.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..artifacts.versions import KubeVersion
from ..errors import UsageError
from ..images.recipe import SUITES

HOST = "host"  # the Kubernetes "version" of a cell that runs host-only scenarios
# The containerd series each suite's image carries (its manifest records the exact
# package; a run records the version the guest reports). sid moves: its series is
# the one its archive held when this table was written (2026-12).
SUITE_CONTAINERD = {"bookworm": "1.6", "trixie": "1.7", "sid": "2.1"}

# Which (Kubernetes, containerd) pairs upstream supports.
# - containerd RELEASES.md, "Kubernetes Support" (containerd/containerd, main): Kubernetes
#   1.30-1.33 list 2.1, 2.0, 1.7 and 1.6; the copy read has no row for 1.34 or later.
# - Kubernetes v1.34 release blog (2025-08-27): "the last Kubernetes release to support
#   containerd 1.x will be v1.35"; from v1.36 containerd 1.x is off-policy (the kubelet
#   still falls back to its own cgroupDriver). kubeadm 1.36.3 itself warns at preflight that
#   the fallback "will be removed in 1.37" (cmd/kubeadm/app/preflight/checks.go:139), seen in
#   a real run on trixie's containerd 1.7.24.
SUPPORT_SOURCE = ("containerd RELEASES.md 'Kubernetes Support'; Kubernetes v1.34 release blog: "
                  "containerd 1.x last supported by v1.35")


def support(kubernetes: str, containerd: str) -> tuple[bool, str]:
    """(supported, why) for one pair; HOST cells are always supported."""
    if kubernetes == HOST:
        return True, ""
    k = KubeVersion.parse(kubernetes)
    major = int(containerd.split(".")[0])
    if major < 2 and (k.major, k.minor) >= (1, 36):
        return False, f"containerd {containerd} with Kubernetes {k.major}.{k.minor}: 1.x is supported up to 1.35 ({SUPPORT_SOURCE})"
    return True, ""


def image_containerd(suite: str) -> str:
    """The containerd series of the suite's built image (its manifest), else the nominal one."""
    from ..images import store
    from ..images.recipe import Recipe

    image = store.find(Recipe.debian(suite))
    version = (image.manifest.get("packages", {}).get("containerd", "") if image else "").split("~")[0]
    parts = version.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 and parts[0].isdigit() else SUITE_CONTAINERD[suite]


@dataclass(frozen=True)
class Cell:
    kubernetes: str  # "1.36.3", or HOST
    suite: str  # the guest image, hence the containerd
    scenarios: tuple[str, ...]
    supported: bool = True
    unsupported_why: str = ""
    containerd_series: str = ""  # from the suite's image when built; else SUITE_CONTAINERD
    built: str = ""  # "2.2.9": containerd built from source into the sid image (suite is sid)
    runtime: str = ""  # "kubespray": the track installs its own containerd (containerd_series, if known)

    @property
    def containerd(self) -> str:
        if self.runtime:
            return self.containerd_series or f"{self.runtime}'s"
        return self.built or self.containerd_series or SUITE_CONTAINERD[self.suite]

    @property
    def id(self) -> str:
        """Folder and CI-artifact name: unique per cell, no dots or slashes."""
        k = "host" if self.kubernetes == HOST else "k" + self.kubernetes.replace(".", "-")
        if self.runtime:
            return f"{k}_{self.suite}_{self.runtime}"
        return f"{k}_containerd-{self.built.replace('.', '-')}" if self.built else f"{k}_{self.suite}"

    @property
    def column(self) -> str:
        if self.runtime:
            return f"containerd {self.containerd_series} (installed by {self.runtime}, {self.suite})" \
                if self.containerd_series else f"containerd installed by {self.runtime} ({self.suite})"
        return f"containerd {self.built} (built, {self.suite})" if self.built else \
            f"containerd {self.containerd} ({self.suite})"


def parse_list(text: str, what: str) -> tuple[str, ...]:
    items = tuple(dict.fromkeys(s.strip() for s in (text or "").split(",") if s.strip()))
    if not items:
        raise UsageError(f"--{what}: give at least one value, comma-separated")
    return items


def make_cells(scenarios: dict, kubernetes: tuple[str, ...], suites: tuple[str, ...], series=None,
               built: tuple[str, ...] = ()) -> list[Cell]:
    """Cells for these scenarios ({name: Scenario}) across the axes, in row-major order.

    The columns are the suites, then each containerd built from source (`built`, on sid);
    scenarios whose track installs its own containerd run once per suite, in cells of their own.
    Unsupported pairs are kept (shown as such); the caller decides whether to run them.
    `series(suite)` gives the suite's containerd series (default: the nominal table).
    """
    from ..artifacts.containerd import parse
    from ..images.containerd_image import SUITE
    from ..tracks import track_of

    series = series or SUITE_CONTAINERD.get
    for s in suites:
        if s not in SUITES:
            raise UsageError(f"--suite {s}: choose from {', '.join(SUITES)}")
    for k in kubernetes:
        KubeVersion.parse(k)
    built = tuple(dict.fromkeys(parse(b).lstrip("v") for b in built))
    host = tuple(n for n, s in scenarios.items() if not s.install.installs_kubernetes)
    kube: list[str] = []  # on the suite's (or the column's built) containerd
    own: dict[tuple[str, str], list[str]] = {}  # (track, the containerd it installs or "") -> scenarios
    for n, s in scenarios.items():
        track = track_of(s.install)
        if s.install.installs_kubernetes and track.replaces_runtime:
            own.setdefault((track.name, track.runtime_containerd(s.install)), []).append(n)
        elif s.install.installs_kubernetes:
            kube.append(n)
    columns = [(suite, series(suite), "") for suite in suites] + [(SUITE, b, b) for b in built]
    cells = []
    if host:
        cells += [Cell(HOST, suite, host, containerd_series=c, built=b) for suite, c, b in columns]
    for k in kubernetes if kube or own else ():
        row = str(KubeVersion.parse(k))
        for suite, c, b in columns if kube else ():
            ok, why = support(k, c)
            cells.append(Cell(row, suite, tuple(kube), ok, why, c, b))
        for (track, version), names in own.items():
            for suite in suites or (SUITE,):
                ok, why = support(k, version) if version else (True, "")
                cells.append(Cell(row, suite, tuple(names), ok, why, version, runtime=track))
    return cells
