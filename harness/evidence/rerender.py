"""`invoke report`: render a run's reports again from its run.json, after checking that the
file is a run record (a JSON object of kubelab's run schema), not merely JSON."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import UsageError
from .record import SCHEMA


def read_run(run_dir: Path) -> dict:
    path = Path(run_dir) / "run.json"
    try:
        run = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: cannot read a run record ({exc})") from None
    if not isinstance(run, dict):
        raise UsageError(f"{path}: not a run record (a JSON object expected, found {type(run).__name__})")
    if run.get("schema") != SCHEMA:
        raise UsageError(f"{path}: not a run record (schema {run.get('schema')!r}, this kubelab reads {SCHEMA!r})")
    return run


def rerender(run_dir: Path) -> list[Path]:
    """The files written (report.md, report.html, junit.xml)."""
    from .render import write_reports

    return write_reports(Path(run_dir), read_run(run_dir))
