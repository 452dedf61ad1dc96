"""The evidence book's record: claims judged from run records (book.json).

Pure apart from reading the runs: (plan, the repeats' matrix folders) ->
{claims: [...]}. A claim's verdict comes from the checks that prove it, in
the cells its proofs ask for: `does not hold` when one of them was evaluated
and not met, `holds` when they were met, `not observed here` when nothing
decided it (the run broke, was not run, the versions gated the checks out,
or nothing here can prove it), always with why. The verbatim lines are the
observations' matched lines with the command and the upstream source; each
also in a stable form (times and process ids masked) that snippets show and
comparisons use, so a rerun that saw the same thing reads the same.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

from ..matrix import report as matrix_report
from ..matrix.cells import HOST
from .book_plan import Plan
from .claims import CHECK_KINDS, Claim

SCHEMA = "kubelab/book"
SCHEMA_VERSION = 1
HOLDS, FAILS, UNSEEN = "holds", "does not hold", "not observed here"
VERDICTS = (HOLDS, FAILS, UNSEEN)
VERSION_KEYS = ("os", "kernel", "containerd", "runc", "systemd")

# What changes from one run to the next without the evidence changing: clock times and process ids.
_VOLATILE = [
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"), "<time>"),
    (re.compile(r"\b([IWEF])\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ "), r"\1<time> <pid> "),  # klog: E1203 17:58:34.1  1 x.go]
    (re.compile(r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d\b"), "<time>"),
    (re.compile(r"\b(\w[\w.-]*)\[\d+\]:"), r"\1[<pid>]:"),  # journal: kubelet[1234]:
    (re.compile(r"\btime=\"[^\"]*\""), 'time="<time>"'),  # logrus
]


def stable(text: str) -> str:
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def combine(verdicts: list[tuple[str, str]]) -> tuple[str, str]:
    """Many (verdict, why) into one: any failure wins, then any holds; else not observed."""
    for wanted in (FAILS, HOLDS):
        whys = list(dict.fromkeys(w for v, w in verdicts if v == wanted))
        if whys:
            return wanted, "; ".join(whys)
    whys = list(dict.fromkeys(w for _, w in verdicts))
    return UNSEEN, "; ".join(whys) or "nothing ran"


# -- one run --------------------------------------------------------------------------------
def _read_record(folder: Path, entry: dict) -> tuple[Path | None, dict | None]:
    if not entry.get("run_dir"):
        return None, None
    run_dir = (folder / entry["run_dir"]).parent
    try:
        return run_dir, json.loads((run_dir / "run.json").read_text())
    except (OSError, ValueError):
        return run_dir, None


def _shown(o: dict) -> str:
    """What the observation saw, as one text: the matched line, or the value it read."""
    if o.get("matched"):
        return str(o["matched"])
    if o.get("met") is True and o.get("expected", "").startswith("absent"):
        return "(no line matched)"
    value = o.get("value")
    if isinstance(value, str):
        return value or '""'  # an empty value read, shown as such
    return json.dumps(value, sort_keys=True)


WHY_TAIL = 3  # lines of a long value a verdict's why quotes: where a log or an output ends


def _brief(text: str) -> str:
    """A value for a verdict's why: a long one by its last lines (the whole of it is in the claim's lines)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) <= WHY_TAIL:
        return repr(text)
    return f"{' / '.join(lines[-WHY_TAIL:])!r} (the last {WHY_TAIL} of {len(lines)} lines)"


def _judge(observations: list[dict]) -> tuple[str, str]:
    decisive = [o for o in observations if o.get("met") is not None]
    failed = [o for o in decisive if o["met"] is False]
    if failed:
        return FAILS, "; ".join(f"{o['kind']} {o['check']} on {o['machine']}: expected {o.get('expected')}, "
                                f"found {_brief(stable(_shown(o)))}" for o in failed)
    met = [o for o in decisive if o["met"] is True]
    if met:
        checks = list(dict.fromkeys(o["check"] for o in met))
        return HOLDS, f"{len(checks)} proving check(s) met"
    gated = [o for o in observations if not o.get("probe")]
    if gated:
        return UNSEEN, "the versions here gate every proving check out (" + "; ".join(
            dict.fromkeys(f"{o['check']}: {o.get('matched', '')}" for o in gated)) + ")"
    return UNSEEN, "no proving check was evaluated"


def run_entry(repeat: int, folder: Path, out: Path, entry: dict, scenario_name: str, checks: tuple[str, ...]) -> dict:
    """One scenario run as the book sees it: its verdict for these checks, its lines and versions."""
    status = entry.get("status", matrix_report.NOT_RUN)
    run_dir, record = _read_record(folder, entry)
    result = {"repeat": repeat, "status": status, "lines": [], "gated": [], "versions": {}, "facts": {},
              "conditions": {}, "report": "", "run_id": "", "started_at": None, "seconds": entry.get("seconds"),
              "side_by_side": entry.get("cells_side_by_side")}  # None: a matrix that did not record it
    if run_dir is not None and record is not None:
        result["report"] = str(_relative(run_dir / "report.md", out))
        result["run_id"] = f"{run_dir.parent.name}/{run_dir.name}"
        result["started_at"] = record.get("started_at")
        result["facts"] = record.get("facts", {})
        result["versions"] = _versions(record)
        result["conditions"] = _conditions(record)
    if status not in (matrix_report.MET, matrix_report.FAIL) or record is None:
        why = entry.get("reason") or (record or {}).get("verdict", {}).get("reason", "")
        what = {matrix_report.INFRA: "broke (harness or infrastructure)", matrix_report.NOT_RUN: "was not run",
                matrix_report.UNSUPPORTED: "is an unsupported pair, not run",
                matrix_report.RUNNING: "was still running"}.get(status, f"has no run record ({status})")
        result["verdict"], result["why"] = UNSEEN, f"{scenario_name} {what}" + (f": {why}" if why else "")
        return result
    observations = [o for o in record.get("observations", [])
                    if o.get("check") in checks and o.get("kind") in CHECK_KINDS]
    result["verdict"], result["why"] = _judge(observations)
    unrecorded = [c for c in checks if c not in {o["check"] for o in observations}]
    if unrecorded and result["verdict"] != FAILS:  # e.g. a cited layer finding this cluster did not make
        missing = "the run recorded no " + ", ".join(repr(c) for c in unrecorded)
        result["verdict"], result["why"] = UNSEEN, missing if result["verdict"] == HOLDS else \
            f"{result['why']}; {missing}"
    if result["verdict"] == UNSEEN and record.get("status") != "complete":
        result["why"] += f" (the run is incomplete: {record.get('verdict', {}).get('reason', '')})"
    for o in observations:
        if not o.get("probe"):
            result["gated"].append({"kind": o["kind"], "check": o["check"], "machine": o["machine"],
                                    "why": stable(str(o.get("matched", "")))})
            continue
        text = _shown(o)
        result["lines"].append({"kind": o["kind"], "check": o["check"], "machine": o["machine"], "met": o.get("met"),
                                "verbatim": text, "line": stable(text), "expected": o.get("expected", ""),
                                "command": o.get("command", ""), "source": o.get("source", "")})
    return result


def _relative(path: Path, base: Path) -> Path:
    try:
        return path.resolve().relative_to(base.resolve())
    except ValueError:
        return path


def _versions(record: dict) -> dict:
    """The lab's versions (every machine's, once when they agree) and the Kubernetes installed."""
    per_machine = {m: {k: v.get("versions", {}).get(k, "") for k in VERSION_KEYS}
                   for m, v in record.get("machines", {}).items()}
    distinct = list({json.dumps(v, sort_keys=True): v for v in per_machine.values()}.values())
    versions = dict(distinct[0]) if len(distinct) == 1 else {m: v for m, v in per_machine.items()}
    if record.get("install", {}).get("kubernetes"):
        versions["kubernetes"] = record["install"]["kubernetes"]
    return versions


def _conditions(record: dict) -> dict:
    """What a timing was measured under."""
    machines = record.get("machines", {})
    containerd = sorted({v.get("versions", {}).get("containerd", "") for v in machines.values()} - {""})
    return {"acceleration": record.get("lab", {}).get("accel") or "unknown",
            "host_cores": record.get("host", {}).get("cores", "unknown"),
            "kubernetes": record.get("install", {}).get("kubernetes", ""),
            "containerd": ", ".join(containerd)}


# -- merging runs ------------------------------------------------------------------------------
def _merge_lines(runs: list[dict]) -> list[dict]:
    """Lines of every run, one per (check, what it saw), with the machines and runs that saw it."""
    merged: dict[tuple, dict] = {}
    for run in runs:
        for line in run["lines"]:
            key = (line["kind"], line["check"], line["met"], line["line"], line["expected"], line["command"],
                   line["source"])
            entry = merged.setdefault(key, {**{k: line[k] for k in ("kind", "check", "met", "line", "expected",
                                                                   "command", "source")},
                                           "machines": [], "verbatim": [], "repeats": []})
            for field, value in (("machines", line["machine"]), ("verbatim", line["verbatim"]),
                                 ("repeats", run["repeat"])):
                if value not in entry[field]:
                    entry[field].append(value)
    return list(merged.values())


def _merge_gated(runs: list[dict]) -> list[dict]:
    merged: dict[tuple, dict] = {}
    for run in runs:
        for g in run["gated"]:
            entry = merged.setdefault((g["kind"], g["check"], g["why"]), {**g, "machines": []})
            entry.pop("machine", None)
            if g["machine"] not in entry["machines"]:
                entry["machines"].append(g["machine"])
    return list(merged.values())


def _scenario_entry(name: str, runs: list[dict], repeat: int) -> dict:
    verdict, why = combine([(r["verdict"], r["why"]) for r in runs])
    bad = [r for r in runs if r["verdict"] == verdict]
    if len(runs) > 1 and verdict != HOLDS and len(bad) < len(runs):
        why = f"in {len(bad)} of {len(runs)} runs: {why}"
    versions = list({json.dumps(r["versions"], sort_keys=True): r["versions"] for r in runs if r["versions"]}.values())
    return {"scenario": name, "verdict": verdict, "why": why, "runs": runs, "lines": _merge_lines(runs),
            "gated": _merge_gated(runs), "versions": versions, "repeat": repeat}


# -- facts -------------------------------------------------------------------------------------
def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def fact_entry(ref, timing: bool, cells: list[dict], guests: str = "") -> dict:
    """A fact the claim quotes, per cell: its values over the runs; timings as median, min and max,
    with what they were measured under."""
    out = {"scenario": ref.scenario, "fact": ref.fact, "notes_say": ref.notes_say, "timing": timing,
           "guests": guests, "cells": []}
    for cell in cells:
        scen = next((s for s in cell["scenarios"] if s["scenario"] == ref.scenario), None)
        if scen is None:
            continue
        values = [r["facts"].get(ref.fact, "unknown") if r["facts"] else "unknown" for r in scen["runs"]]
        entry = {"cell": cell["id"], "values": values, "n": len(values)}
        if ref.state:  # what explains each value, from the same run
            entry["state"] = [{name: r["facts"].get(name, "unknown") for name in ref.state} for r in scen["runs"]]
        numbers = [n for n in map(_number, values) if n is not None]
        if timing and numbers:
            entry.update(median=round(statistics.median(numbers), 1), min=min(numbers), max=max(numbers),
                         measured=len(numbers))
        conditions = [r["conditions"] for r in scen["runs"] if r["conditions"]]
        entry["conditions"] = list({json.dumps(c, sort_keys=True): c for c in conditions}.values())
        beside = [r["side_by_side"] for r in scen["runs"] if r["side_by_side"]]
        entry["side_by_side"] = max(beside) if len(beside) == len(scen["runs"]) else None
        out["cells"].append(entry)
    return out


# -- the book ----------------------------------------------------------------------------------
def _claim_entry(claim: Claim, plan: Plan, repeats: list[tuple[int, Path, dict]], out: Path) -> dict:
    base = {"id": claim.id, "chapter": claim.chapter, "says": claim.says, "where": claim.where,
            "scenarios": [p.scenario for p in claim.proofs], "cells": [], "facts": [], "changes": []}
    if not claim.proofs:
        return {**base, "verdict": UNSEEN, "why": claim.unproven, "unproven": True}
    cells: dict[str, dict] = {}
    for proof in claim.proofs:
        pairs = set(plan.pairs(proof))
        runs_by_cell: dict[str, list[dict]] = {}
        for repeat, folder, matrix in repeats:
            for cell in matrix["cells"]:
                if proof.scenario not in cell["scenarios"] or (cell["kubernetes"], cell["suite"]) not in pairs:
                    continue
                cells.setdefault(cell["id"], {k: cell[k] for k in ("id", "kubernetes", "suite", "containerd",
                                                                   "column")} | {"scenarios": []})
                runs_by_cell.setdefault(cell["id"], []).append(
                    run_entry(repeat, folder, out, cell["scenarios"][proof.scenario], proof.scenario, proof.checks))
        for cid, runs in runs_by_cell.items():
            cells[cid]["scenarios"].append(_scenario_entry(proof.scenario, runs, len(repeats)))
    if not cells:
        return {**base, "verdict": UNSEEN, "why": "no run of its scenarios is in these run folders"}
    for cell in cells.values():
        cell["verdict"], cell["why"] = combine([(s["verdict"], f"{s['scenario']}: {s['why']}")
                                                for s in cell["scenarios"]])
    ordered = sorted(cells.values(), key=_cell_order)
    verdict, why = combine([(c["verdict"], f"{_cell_label(c)}: {c['why']}") for c in ordered])
    if verdict == HOLDS:  # a hold is only as wide as the cells that showed it
        shown = [c for c in ordered if c["verdict"] == HOLDS]
        why = f"met in {len(shown)} of {len(ordered)} cell(s)" + "".join(
            f"; {_cell_label(c)}: {c['why']}" for c in ordered if c["verdict"] != HOLDS)
    facts = [fact_entry(ref, _is_timing(plan, ref), ordered, _guests(plan, ref.scenario)) for ref in claim.facts]
    return {**base, "verdict": verdict, "why": why, "cells": ordered, "facts": facts}


def _guests(plan: Plan, name: str) -> str:
    return ", ".join(f"{m.name} {m.cpus} vCPU {m.memory} MiB" for m in plan.scenarios[name].lab.machines)


def _is_timing(plan: Plan, ref) -> bool:
    return any(f.name == ref.fact and f.kind == "seconds" for f in plan.scenarios[ref.scenario].facts)


def _cell_order(cell: dict):
    from ..artifacts.versions import KubeVersion

    k = cell["kubernetes"]
    row = (0, ()) if k == HOST else (1, tuple(int(x) for x in str(KubeVersion.parse(k)).split(".")))
    return row, tuple(int(p) for p in str(cell["containerd"]).split(".")[:2] if p.isdigit()), cell["suite"]


def _cell_label(cell: dict) -> str:
    row = "host" if cell["kubernetes"] == HOST else f"Kubernetes {cell['kubernetes']}"
    return f"{row} x {cell['column']}"


def cell_label(cell: dict) -> str:
    return _cell_label(cell)


def read_repeats(folders: list[Path]) -> list[tuple[int, Path, dict]]:
    out = []
    for n, folder in enumerate(folders, 1):
        path = Path(folder) / "matrix.json"
        if path.exists():
            out.append((n, Path(folder), matrix_report.load(path)))
    return out


def provenance(repeats: list[tuple[int, Path, dict]]) -> dict:
    """What made the evidence, each as the runs recorded it (more than one value: the runs differ):
    kubelab's commit (the matrices') and the kubespray checkout a kubespray run installed from."""
    kubelab, kubespray = [], []
    for _, folder, matrix in repeats:
        kubelab.append(matrix.get("kubelab_commit") or "")
        for cell in matrix.get("cells", []):
            for entry in cell.get("scenarios", {}).values():
                _, record = _read_record(folder, entry)
                checkout = ((record or {}).get("install") or {}).get("kubespray") or {}
                if checkout.get("commit"):
                    kubespray.append(f"{checkout.get('describe') or checkout.get('version', '')} "
                                     f"({checkout['commit'][:12]})".strip())
    return {"kubelab": sorted(set(kubelab) - {""}), "kubespray": sorted(set(kubespray))}


def build(plan: Plan, folders: list[Path], out: Path) -> dict:
    """The book record from the repeats' matrix folders (OUT/runs/<n>)."""
    repeats = read_repeats(folders)
    claims = [_claim_entry(c, plan, repeats, out) for c in plan.claims]
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "course": plan.course, "claims_files": list(plan.files),
            "chapters": plan.chapters, "repeat": len(repeats),
            "runs": [str(_relative(f, out)) for _, f, _ in repeats],
            "concurrent_cells": max([m.get("concurrent_cells", 1) for _, _, m in repeats] or [1]),
            "provenance": provenance(repeats), "claims": claims}


def resumed(book: dict, started_at: float) -> dict:
    """How a book built by this invocation (from `started_at`) relates to its runs: how many were
    kept from an earlier one (--resume), and the span from the first run's start to the last one's end,
    which is the book's time when runs were kept (its wall time is then this invocation's alone)."""
    runs = {r["run_id"]: r for c in book["claims"] for cell in c["cells"] for s in cell["scenarios"]
            for r in s["runs"] if r.get("run_id") and r.get("started_at")}
    kept = sum(1 for r in runs.values() if r["started_at"] < started_at)
    ends = [r["started_at"] + (r.get("seconds") or 0) for r in runs.values()]
    span = round(max(ends) - min(r["started_at"] for r in runs.values()), 1) if runs else None
    return {"kept_runs": kept, "runs_span_s": span}


def exit_code(book: dict) -> int:
    """2: a run it needed broke or did not run; 1: a claim does not hold, or was never shown at all; 0."""
    runs = [r for c in book["claims"] for cell in c["cells"] for s in cell["scenarios"] for r in s["runs"]]
    if any(r["status"] in (matrix_report.INFRA, matrix_report.NOT_RUN, matrix_report.RUNNING) for r in runs):
        return 2
    if any(c["verdict"] == FAILS or (c["verdict"] == UNSEEN and not c.get("unproven")) for c in book["claims"]):
        return 1
    return 0


def load(folder: Path) -> dict:
    from ..errors import UsageError

    path = Path(folder) / "book.json"
    try:
        data = json.loads(path.read_text())
    except OSError:  # missing, or its folder is not one
        raise UsageError(f"{path}: no evidence book there (give the --out folder of an earlier `invoke evidence`)") \
            from None
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or data.get("schema_version") != SCHEMA_VERSION:
        raise UsageError(f"{path}: not a kubelab evidence book (schema {SCHEMA!r}, version {SCHEMA_VERSION})")
    return data
