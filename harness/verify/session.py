"""`invoke verify`: one run that checks a cluster layer by layer, with the usual record.

The run folder is a scenario's (run.json, steps/, report.md/html, junit.xml):
phase `prepare` reaches the cluster and every node, phase `verify` runs the
layers, each finding an observation; phase `teardown` removes what verify
created in the cluster. Exit 0 when no finding `does not hold`, 1 when one
does, 2 when the cluster or a node cannot be reached (before any check), or on
an internal error.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import HarnessError
from ..evidence.record import RunRecord
from ..progress import Progress
from . import layer
from .access import Access, Unreachable, fetch_admin_conf, lab_remotes, reach, ssh_remotes
from .finding import FAILS, Finding
from .run import run_layers

SUMMARY = "A running cluster checked layer by layer: {layers}."
COLUMNS = (("layer", 12), ("check", 46), ("verdict", 14), ("value", 60), ("source", 40))


@dataclass(frozen=True)
class Subject:
    """What a run record names as its scenario: here, verify itself."""
    name: str = "verify"
    summary: str = ""
    claims: tuple = ()
    source_file: str = ""
    sha256: str = ""


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    result: str
    reason: str
    directory: Path


def row(f: Finding | None) -> str:
    cells = ([c for c, _ in COLUMNS] if f is None else [f.layer, f.check, f.verdict, f.value, f.source])
    return "  ".join(_fit(str(v), w) for v, (_, w) in zip(cells, COLUMNS)).rstrip()


def _fit(text: str, width: int) -> str:
    text = text.replace("\n", " ")
    return (text[:width - 1] + "…") if len(text) > width else text.ljust(width)


def lab_connector(name: str, image: str):
    """Access to a lab kept by `invoke scenario --keep` (or made by lab.up and an install)."""
    def connect(record: RunRecord) -> tuple[Access, dict]:
        from ..cluster import ClusterClient
        from ..errors import LabError
        from ..lab import Lab
        from ..machines import accel

        try:
            lab = Lab.load(name)
        except LabError as exc:
            raise Unreachable(str(exc)) from None
        if lab.status != "up":
            raise Unreachable(f"lab `{name}` is {lab.status}, not up: `invoke lab.up` it again or pick another lab")
        remotes = lab_remotes(lab)
        kubeconfig = fetch_admin_conf(lab, remotes, lambda text: record.write_private("admin.conf", text))
        cluster = ClusterClient(kubeconfig)
        _, matched = reach(cluster, remotes)
        where = {"name": lab.name, "suite": lab.state["suite"], "backend": lab.state["backend"],
                 **accel.lab_fields(lab.state)}
        return Access(cluster, matched, image=image), where
    return connect


def ssh_connector(kubeconfig: Path, targets: str, identity: Path, known_hosts: Path | None, image: str):
    """Access to a cluster kubelab did not make: its kubeconfig and pinned SSH to its nodes."""
    remotes = ssh_remotes(targets, identity, known_hosts)  # bad input is refused before the record exists

    def connect(record: RunRecord) -> tuple[Access, dict]:
        from ..cluster import ClusterClient

        cluster = ClusterClient(Path(kubeconfig))
        _, matched = reach(cluster, remotes)
        return Access(cluster, matched, image=image), {"name": f"kubeconfig {kubeconfig}"}
    return connect


def verify(connect: Callable, layers: tuple[str, ...], runs_root: Path | None = None,
           progress: Progress | None = None, out: Callable[[str], None] = print) -> Outcome:
    progress = progress or Progress()
    record = RunRecord.create(Subject(summary=SUMMARY.format(layers=", ".join(layers))), "verify", "", runs_root)
    record.data["verify"] = {"layers": list(layers)}
    progress.note(f"verify ({', '.join(layers)}): record in {record.directory}")

    entry = record.phase_start("prepare")
    try:
        access, where = connect(record)
    except (Unreachable, HarnessError) as exc:
        record.phase_end(entry, "failed", str(exc))
        return _finish(record, progress, "error", 2, f"cannot verify: {exc}")
    except KeyboardInterrupt:
        record.phase_end(entry, "failed", "interrupted")
        return _finish(record, progress, "interrupted", 2, "interrupted before the run finished")
    # every node command a layer runs, verbatim in the record under the layer's name
    access.on_read = lambda node, result: record.step("verify", access.layer, node, result)
    access.on_wait = progress.update  # the activity's detail: a heartbeat line in a log, live on a terminal
    record.data["lab"].update(where)
    record.data["machines"] = {n: {"role": "node"} for n in access.remotes}
    record.phase_end(entry, "ok")

    entry = record.phase_start("verify")
    started = time.time()
    access.prestart(layers)
    findings: list[Finding] = []
    out(row(None))

    def on_finding(f: Finding) -> None:
        record.finding("verify", f, started)
        findings.append(f)
        out(row(f))

    def on_error(name: str, text: str) -> None:
        record.write_file(f"steps/verify-{name}-error.log", text)

    interrupted = internal = None
    try:
        for name in layers:
            with progress.activity(f"layer {name}: {layer(name).READS[:100]}"):
                run_layers(access, (name,), on_finding, on_error)
    except KeyboardInterrupt:
        interrupted = True
    except Exception as exc:  # noqa: BLE001 - a kubelab bug: kept with the run, exit 2
        log = record.write_file("steps/verify-internal-error.log", traceback.format_exc())
        internal = f"internal error: {type(exc).__name__}: {exc} (traceback in {log})"
    record.phase_end(entry, "failed" if interrupted or internal else "ok",
                     "interrupted" if interrupted else internal or "")
    _teardown(record, access, progress)
    if interrupted:
        return _finish(record, progress, "interrupted", 2, "interrupted before the run finished")
    if internal:
        return _finish(record, progress, "error", 2, internal)
    failed = [f for f in findings if f.verdict == FAILS]
    if failed:
        return _finish(record, progress, "not-met", 1, f"{len(failed)} check(s) do not hold: "
                       + "; ".join(f"{f.layer}: {f.check}" for f in failed))
    return _finish(record, progress, "met", 0, f"every check of {len(layers)} layer(s) holds")


def _teardown(record: RunRecord, access: Access, progress: Progress) -> None:
    entry = record.phase_start("teardown")
    try:
        gone = access.cleanup()
    except Exception as exc:  # noqa: BLE001 - a cleanup that failed is said, and the run still ends
        record.phase_end(entry, "failed", f"could not remove verify's objects: {exc}")
        progress.note(f"teardown: could not remove verify's objects: {exc}")
        return
    record.data["verify"]["removed"] = gone
    record.phase_end(entry, "ok")
    if gone:
        progress.note(f"teardown: removed {', '.join(gone)}")


def _finish(record: RunRecord, progress: Progress, result: str, code: int, reason: str) -> Outcome:
    record.finish(result, code, reason, complete=result != "interrupted")
    progress.note(f"verdict: {result} (exit {code}): {reason}")
    progress.note(f"report: {record.directory / 'report.md'}")
    return Outcome(code, result, reason, record.directory)
