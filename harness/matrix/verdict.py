"""A matrix's exit code from its cells' statuses, by kubelab's contract: 2 when any
scenario could not be judged (INFRA, or NOT RUN / still running because a deadline or a
stop came first), else 1 when any FAIL, else 0. UNSUPPORTED pairs that were not asked
for are not failures."""

from __future__ import annotations

from dataclasses import dataclass

from .report import FAIL, INFRA, NOT_RUN, RUNNING


@dataclass(frozen=True)
class Verdict:
    exit_code: int
    message: str  # "" when every scenario was met


def verdict(matrix: dict) -> Verdict:
    statuses = [s["status"] for cell in matrix["cells"] for s in cell["scenarios"].values()]
    unjudged = sorted({s for s in statuses if s in (INFRA, NOT_RUN, RUNNING)})
    if unjudged:
        return Verdict(2, f"matrix: some scenarios are {' or '.join(unjudged)}")
    if FAIL in statuses:
        return Verdict(1, "matrix: some cells FAIL")
    return Verdict(0, "")
