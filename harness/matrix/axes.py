"""The matrix's axes from the command line: the scenarios (loaded), the Kubernetes rows
(`host` is the row of host-only scenarios, which an exported host cell passes back), the
Debian suites and the containerd releases built from source (columns), and the cells."""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Scenario
from .cells import HOST, Cell, image_containerd, make_cells


@dataclass(frozen=True)
class Axes:
    cells: list[Cell]
    scenarios: dict[str, Scenario]
    axes: dict  # as matrix.json records them


def from_options(scenario_names: tuple[str, ...], kubernetes: tuple[str, ...], suites: tuple[str, ...],
                 containerd: tuple[str, ...] = (), kubespray: str | None = None, dry_run: bool = False) -> Axes:
    """`kubernetes` may be empty (the kit's default) or hold HOST; `suites` may be empty only
    with containerd releases (then every column is built from source). Versions as typed
    (1.36.3, 2.2.9). `kubespray`: the checkout for the scenarios whose track runs one."""
    from dataclasses import replace

    from ..artifacts.versions import DEFAULT_KUBERNETES
    from ..scenario.files import find
    from ..scenario.load import load
    from ..tracks import track_of

    scenarios = {}
    for name in scenario_names:
        s = load(find(name))
        track = track_of(s.install)
        s = replace(s, install=track.resolve(s.install, kubespray if track.takes_checkout else None,
                                             required=not dry_run))
        scenarios[s.name] = s
    versions = tuple(v for v in kubernetes if v != HOST) or (DEFAULT_KUBERNETES,)
    built = tuple(v.lstrip("v") for v in containerd)
    if not suites and not built:
        from ..errors import UsageError

        raise UsageError("--suite: give at least one suite, or --containerd releases")
    axes = {"kubernetes": list(versions), "suites": list(suites), "containerd_built": list(built),
            "scenarios": list(scenarios)}
    return Axes(make_cells(scenarios, versions, suites, series=image_containerd, built=built), scenarios, axes)


def warnings(axes: Axes) -> list[str]:
    return [w for s in axes.scenarios.values() for w in s.warnings]
