"""The run record: run.json and the step logs, written as the run goes.

run.json is rewritten atomically after every phase, step and observation, so
an interrupted or crashed run still leaves a readable record (status stays
`incomplete`). Everything passes through redact() on its way to disk.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from .. import paths, provenance
from ..fsutil import write_atomic
from ..remote.result import CommandResult
from .redact import redact, redact_obj
from .render import write_reports

SCHEMA = "kubelab.run/v1"
MAX_VALUE_CHARS = 4000


def runs_dir() -> Path:
    return Path(os.environ.get("KUBELAB_RUNS", paths.project_root() / "runs"))


def check_runs_dir() -> Path:
    """Refuse, before a run starts, a runs folder this user cannot write (or make)."""
    from ..cli_options import writable_folder_problem
    from ..errors import UsageError

    root = runs_dir()
    problem = writable_folder_problem(root)
    if problem:
        where = "KUBELAB_RUNS" if os.environ.get("KUBELAB_RUNS") else "the runs folder"
        raise UsageError(f"{where} {root}: {problem}; set KUBELAB_RUNS to a folder this user can write")
    return root


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")[:60]


def _json_value(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value if not isinstance(value, str) else value[:MAX_VALUE_CHARS]
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    return str(value)


def private_path(directory: Path, name: str) -> Path:
    """Where a run in `directory` keeps a secret file (`write_private`)."""
    return directory / "private" / name


def fetched_name(machine: str, remote_path: str) -> str:
    """The name a file fetched from a machine is kept under: `<machine>-<its file name>`."""
    return f"{machine}-{remote_path.rsplit('/', 1)[-1]}"


class RunRecord:
    def __init__(self, directory: Path, data: dict):
        self.directory = directory
        self.data = data
        self._n = 0

    @classmethod
    def create(cls, scenario, mode: str, suite: str, root: Path | None = None) -> "RunRecord":
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        base = (root or runs_dir()) / scenario.name
        directory = base / (stamp + ("-control" if mode == "control" else ""))
        n = 1
        while directory.exists():
            n += 1
            directory = base / f"{stamp}-{n}" if mode != "control" else base / f"{stamp}-control-{n}"
        (directory / "steps").mkdir(parents=True)
        data = {
            "schema": SCHEMA,
            "status": "incomplete",
            "mode": mode,
            "scenario": {"name": scenario.name, "summary": scenario.summary, "claims": list(scenario.claims),
                         "file": scenario.source_file, "sha256": scenario.sha256},
            "lab": {"suite": suite},
            "host": {"cores": os.cpu_count()},  # what a timing was measured on (the evidence book quotes it)
            "kubelab": {"commit": provenance.commit()},
            "started_at": time.time(),
            "finished_at": None,
            "machines": {},
            "phases": [],
            "steps": [],
            "observations": [],
            "evidence": [],
            "verdict": {"result": "interrupted", "exit_code": 2, "reason": "the run did not finish"},
        }
        record = cls(directory, data)
        record.save()
        return record

    # -- writing ---------------------------------------------------------
    def save(self) -> None:
        write_atomic(self.directory / "run.json", json.dumps(redact_obj(self.data), indent=2) + "\n")

    def write_file(self, relative: str, text: str) -> str:
        write_atomic(self.directory / relative, redact(text))
        return relative

    def _log_name(self, phase: str, machine: str, name: str) -> str:
        self._n += 1
        return f"steps/{self._n:02d}-{_slug(phase)}-{_slug(machine)}-{_slug(name)}.log"

    # -- phases ----------------------------------------------------------
    def phase_start(self, name: str) -> dict:
        entry = {"name": name, "status": "running", "started_at": time.time(), "finished_at": None, "reason": ""}
        self.data["phases"].append(entry)
        self.save()
        return entry

    def phase_end(self, entry: dict, status: str, reason: str = "") -> None:
        entry.update(status=status, finished_at=time.time(), reason=reason)
        self.save()

    def phase_skipped(self, name: str, reason: str) -> None:
        now = time.time()
        self.data["phases"].append({"name": name, "status": "skipped", "started_at": now, "finished_at": now, "reason": reason})
        self.save()

    # -- steps and observations -------------------------------------------
    def write_private(self, name: str, text: str) -> Path:
        """A secret the harness needs (admin.conf): private/, mode 600, never rendered."""
        path = private_path(self.directory, name)
        write_atomic(path, text, mode=0o600)
        path.parent.chmod(0o700)
        return path

    def step(self, phase: str, name: str, machine: str, result: CommandResult, content: str = "") -> None:
        """A command and its verbatim output; `content`, what it was given on stdin (a file it wrote)."""
        log = self._log_name(phase, machine, name)
        text = _log_text(machine, result)
        if content:
            text = f"--- stdin ({len(content)} bytes) ---\n{content}\n--- end of stdin ---\n" + text
        self.write_file(log, text)
        self.data["steps"].append({
            "index": len(self.data["steps"]) + 1, "phase": phase, "name": name, "machine": machine,
            "command": result.command, "exit_code": result.exit_code, "started_at": result.started_at,
            "duration": round(result.duration, 3), "log": log,
        })
        self.save()

    def skipped_step(self, phase: str, name: str, machine: str, reason: str) -> None:
        """A recovery step its version gate left out: in the record, so the report says why."""
        self.data["steps"].append({
            "index": len(self.data["steps"]) + 1, "phase": phase, "name": name, "machine": machine,
            "command": f"(skipped: {reason})", "exit_code": None, "started_at": time.time(), "duration": 0.0,
            "log": "",
        })
        self.save()

    def observation(self, kind: str, phase: str, check, machine: str, outcome, phase_started: float,
                    probe_text: str) -> dict:
        log = self._log_name(phase, machine, check.name)
        self.write_file(log, f"# machine: {machine}\n# check: {check.name} ({check.expected() or 'recorded'})\n"
                             f"# command: {outcome.command}\n# exit: {outcome.exit_code}; polls: {outcome.polls}\n"
                             f"--- last output\n{outcome.reading.text}\n")
        entry = {
            "kind": kind, "phase": phase, "check": check.name, "machine": machine,
            "probe": probe_text, "command": outcome.command,
            "met": outcome.met if check.asserts else None, "expected": check.expected(),
            "value": _json_value(outcome.reading.value), "matched": outcome.matched[:MAX_VALUE_CHARS],
            "at": round(outcome.at, 3), "after": round(outcome.at - phase_started, 3), "polls": outcome.polls,
            "within": check.within, "stable_for": check.stable_for, "source": check.source, "log": log,
        }
        self.data["observations"].append(entry)
        self.save()
        return entry

    def finding(self, phase: str, finding, started: float) -> dict:
        """A verify layer's finding, as an observation (kind `verify`, check `<layer>: <check>`):
        `met` True/False where it asserts, None where it records a fact or does not apply."""
        name = f"{finding.layer}: {finding.check}"
        log = ""
        if finding.detail:
            log = self._log_name(phase, finding.layer, finding.check)
            self.write_file(log, f"# layer: {finding.layer}\n# check: {finding.check}\n# source: {finding.source}\n"
                                 f"--- what was read\n{finding.detail}\n")
        now = time.time()
        entry = {
            "kind": "verify", "phase": phase, "check": name, "machine": "cluster", "probe": f"verify layer {finding.layer}",
            "command": finding.source, "met": finding.met, "expected": finding.verdict, "verdict": finding.verdict,
            "layer": finding.layer, "value": finding.value[:MAX_VALUE_CHARS],
            "matched": finding.value[:MAX_VALUE_CHARS] if finding.verdict != "not applicable"
            else f"not applicable: {finding.value}"[:MAX_VALUE_CHARS],
            "at": round(now, 3), "after": round(now - started, 3), "polls": 1, "within": 0.0, "stable_for": 0.0,
            "source": finding.source, "log": log,
        }
        self.data["observations"].append(entry)
        self.save()
        return entry

    def not_applicable(self, kind: str, phase: str, check, machine: str, facts: dict) -> None:
        self.data["observations"].append({
            "kind": kind, "phase": phase, "check": check.name, "machine": machine, "probe": "", "command": "",
            "met": None, "expected": check.expected(), "value": None,
            "matched": "not applicable: versions " + ", ".join(f"{k} {v}" for k, v in check.versions.items())
                       + " (machine has " + ", ".join(f"{k} {facts.get(k, '?')}" for k in check.versions) + ")",
            "at": time.time(), "after": 0.0, "polls": 0, "within": check.within, "stable_for": check.stable_for,
            "source": check.source, "log": "",
        })
        self.save()

    def evidence(self, kind: str, what: str, machine: str, relative: str) -> None:
        self.data["evidence"].append({"kind": kind, "what": what, "machine": machine, "file": relative})
        self.save()

    # -- end -------------------------------------------------------------
    def finish(self, result: str, exit_code: int, reason: str, complete: bool) -> list[Path]:
        self.data["verdict"] = {"result": result, "exit_code": exit_code, "reason": reason}
        self.data["status"] = "complete" if complete else "incomplete"
        self.data["finished_at"] = time.time()
        self.save()
        return write_reports(self.directory, redact_obj(self.data))


def _log_text(machine: str, result: CommandResult) -> str:
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(result.started_at))
    return (f"# machine: {machine}\n# command: {result.command}\n# started: {started}\n"
            f"# exit: {result.exit_code} after {result.duration:.2f}s\n"
            f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}\n")
