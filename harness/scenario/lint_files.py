"""`scenario.lint`: every problem of every file at once (file, line and field each), and the
warnings. Whether a file is valid depends on the file alone, never on this host: what the
host can run is asked when a run starts (capacity.check_capacity)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import ScenarioError


@dataclass(frozen=True)
class Linted:
    files: int
    warnings: tuple[str, ...]
    claims_files: int = 0


def lint(paths: list[Path], claim_paths: list[Path] | None = None) -> Linted:
    """Raise ScenarioError listing every problem; else how many files and their warnings.

    The claims files (default claims/*.yaml) are linted with them: a check's `claims:` must name
    an id one of them defines, and every claim must be proven by a check or say why not."""
    from ..errors import ClaimsError
    from ..evidence import claims as claims_files
    from .load import load_into

    claim_paths = claims_files.all_files() if claim_paths is None else list(claim_paths)
    ids = claims_files.defined_ids(claim_paths)
    named = ", ".join(str(p) for p in claim_paths) or "none"
    problems: list[str] = []
    warnings: list[str] = []
    for path in paths:
        scenario = load_into(path, problems, ids, named)
        warnings += list(scenario.warnings) if scenario else []
    try:
        claims_files.load(claim_paths, all_scenarios=True)
    except ClaimsError as exc:  # a cited scenario's own problems are listed once
        problems += [p for p in exc.problems if p not in problems]
    if problems:
        raise ScenarioError(problems)
    return Linted(len(paths), tuple(warnings), len(claim_paths))
