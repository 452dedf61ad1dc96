"""What a book must run: the matrix cells its claims' proofs need, then those runs.

A proof's versions are its claims file's `suites` and `kubernetes`, else the
scenario's own suite and release; `--suite` and `--kubernetes` replace them for
every proof. Pairs are grouped into matrix cells (host-only scenarios in a
`host` row), and every repeat is one matrix run into `OUT/runs/<n>/`, so
versions, admission, fan-out, retries and `--resume` are the matrix runner's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..artifacts.versions import DEFAULT_KUBERNETES, KubeVersion
from ..errors import UsageError
from ..images.recipe import SUITES
from ..matrix.cells import HOST, Cell, image_containerd, make_cells
from .claims import Claim, ClaimSet, Proof


@dataclass(frozen=True)
class Plan:
    claims: tuple[Claim, ...]  # the selected claims, file order
    cells: tuple[Cell, ...]
    scenarios: dict  # name -> Scenario, every one a cell runs
    kubernetes: tuple[str, ...] = ()  # --kubernetes: replaces every proof's releases
    suites: tuple[str, ...] = ()  # --suite: replaces every proof's suites
    course: str = ""
    chapters: dict = field(default_factory=dict)
    files: tuple[str, ...] = ()

    def pairs(self, proof: Proof) -> list[tuple[str, str]]:
        """(Kubernetes row, suite) pairs this proof is observed in; HOST for host-only scenarios."""
        scenario = self.scenarios[proof.scenario]
        suites = self.suites or proof.suites or (scenario.lab.suite,)
        if not scenario.install.installs_kubernetes:
            return [(HOST, s) for s in suites]
        releases = self.kubernetes or proof.kubernetes or (scenario.install.kubernetes,)
        return [(k, s) for k in releases for s in suites]

    @property
    def axes(self) -> dict:
        return {"kubernetes": sorted({c.kubernetes for c in self.cells if c.kubernetes != HOST}),
                "suites": [s for s in SUITES if any(c.suite == s for c in self.cells)],
                "containerd_built": [], "scenarios": sorted(self.scenarios)}


def make(claimset: ClaimSet, chapters: tuple[str, ...] = (), kubernetes: tuple[str, ...] = (),
         suites: tuple[str, ...] = (), series=image_containerd) -> Plan:
    """The cells for the claims of `chapters` (all when empty). UsageError for an unknown chapter."""
    unknown = [c for c in chapters if c not in claimset.chapters]
    if unknown:
        raise UsageError(f"--chapter {','.join(unknown)}: the claims file has chapters "
                         f"{', '.join(claimset.chapters)}")
    for s in suites:
        if s not in SUITES:
            raise UsageError(f"--suite {s}: choose from {', '.join(SUITES)}")
    claims = claimset.select(chapters)
    names = list(dict.fromkeys(p.scenario for c in claims for p in c.proofs))
    plan = Plan(claims, (), {n: claimset.scenarios[n] for n in names}, tuple(kubernetes), tuple(suites),
                claimset.course, {k: v for k, v in claimset.chapters.items() if not chapters or k in chapters},
                claimset.files)
    wanted: dict[tuple[str, str], list[str]] = {}
    for claim in claims:
        for proof in claim.proofs:
            for pair in plan.pairs(proof):
                if proof.scenario not in wanted.setdefault(pair, []):
                    wanted[pair].append(proof.scenario)
    cells: dict[str, Cell] = {}
    for (k, suite), group in sorted(wanted.items(), key=_pair_order):
        subset = {n: plan.scenarios[n] for n in group}
        rows = (k,) if k != HOST else (DEFAULT_KUBERNETES,)  # a host cell ignores its row
        for cell in make_cells(subset, rows, (suite,), series=series):
            have = cells.get(cell.id)
            cells[cell.id] = cell if not have else replace(
                have, scenarios=have.scenarios + tuple(n for n in cell.scenarios if n not in have.scenarios))
    return Plan(claims, tuple(cells.values()), plan.scenarios, plan.kubernetes, plan.suites, plan.course,
                plan.chapters, plan.files)


def _pair_order(item):
    (k, suite), _ = item
    if k == HOST:
        return (0, (), list(SUITES).index(suite))
    v = KubeVersion.parse(k)
    return (1, (v.major, v.minor, v.patch), list(SUITES).index(suite))


def plan_lines(plan: Plan, repeat: int) -> list[str]:
    proven = [c for c in plan.claims if c.proofs]
    lines = [f"book: {len(plan.claims)} claim(s) ({len(proven)} proven by scenarios here, "
             f"{len(plan.claims) - len(proven)} marked unproven), {len(plan.scenarios)} scenario(s), "
             f"{repeat} repeat(s)"]
    for claim in plan.claims:
        if not claim.proofs:
            lines.append(f"  {claim.id:<6} not run: {claim.unproven}")
            continue
        where = "; ".join(f"{p.scenario} on " + ", ".join(f"{'host' if k == HOST else k}/{s}" for k, s in plan.pairs(p))
                          for p in claim.proofs)
        lines.append(f"  {claim.id:<6} {where}")
    return lines


def run(plan: Plan, out: Path, repeat: int, resume: bool, deadline_min: float | None, max_vcpus: int,
        memory_budget_mib: int, progress, command=None, rerun: frozenset = frozenset()) -> list[Path]:
    """Every repeat as one matrix run into OUT/runs/<n>; returns the folders in order.
    `rerun`: with `resume`, scenarios run again where they finished. `command` stands in for
    `invoke scenario` (tests)."""
    from ..matrix import run as matrix_run

    folders = []
    ends = time.time() + deadline_min * 60 if deadline_min else None
    for n in range(1, repeat + 1):
        folder = out / "runs" / str(n)
        left = max(0.1, (ends - time.time()) / 60) if ends else None
        opts = matrix_run.Options(out=folder, deadline_min=left, max_vcpus=max_vcpus,
                                  memory_budget_mib=memory_budget_mib, resume=resume, rerun=rerun, fanout=True,
                                  command=command)
        if plan.cells:
            progress.note(f"book: repeat {n} of {repeat} into {folder}")
            matrix_run.run(list(plan.cells), plan.scenarios, opts, plan.axes, progress)
        folders.append(folder)
    return folders
