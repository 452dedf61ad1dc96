"""A scenario as the command line asks for it: another suite, Kubernetes release or
containerd built from source than its file says, and whether `--control` means anything.
Every combination is checked before a lab exists."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import UsageError
from ..model import Scenario
from ..tracks import track_of


@dataclass(frozen=True)
class Asked:
    scenario: Scenario
    suite: str | None  # None: the scenario's own


def apply(scenario: Scenario, suite: str | None = None, kubernetes: str | None = None,
          containerd: str | None = None, control: bool = False, kubespray: str | None = None,
          dry_run: bool = False) -> Asked:
    """`kubernetes` and `containerd` as the user typed them (a release like 1.36.3 / 2.2.9);
    `kubespray` a checkout's path. A dry-run shows what it cannot know yet as placeholders."""
    if suite:
        from ..images.recipe import check_suite

        check_suite(suite)
    if containerd:
        from ..artifacts.containerd import parse
        from ..images.containerd_image import SUITE

        if suite and suite != SUITE:
            raise UsageError(f"--containerd {containerd}: a containerd built from source runs on {SUITE}, "
                             f"not --suite {suite}")
        scenario = scenario.with_containerd(parse(containerd).lstrip("v"))
        suite = SUITE
    if kubernetes:
        from ..artifacts.versions import KubeVersion

        if not scenario.install.installs_kubernetes:
            raise UsageError(f"--kubernetes: scenario {scenario.name} is host-only (install track none)")
        scenario = scenario.with_kubernetes(str(KubeVersion.parse(kubernetes)))
    # the install track's own inputs (the kubespray checkout), checked here, before any lab
    scenario = replace(scenario, install=track_of(scenario.install).resolve(
        scenario.install, kubespray, required=not dry_run))
    if control and scenario.control_problem():
        raise UsageError(f"--control: {scenario.control_problem()}")
    return Asked(scenario, suite)
