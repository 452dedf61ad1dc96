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


def lint(paths: list[Path]) -> Linted:
    """Raise ScenarioError listing every problem; else how many files and their warnings."""
    from .load import load_into

    problems: list[str] = []
    warnings: list[str] = []
    for path in paths:
        scenario = load_into(path, problems)
        warnings += list(scenario.warnings) if scenario else []
    if problems:
        raise ScenarioError(problems)
    return Linted(len(paths), tuple(warnings))
