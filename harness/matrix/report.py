"""The matrix record (matrix.json) and what is rendered from it.

matrix.json holds every cell's outcome per scenario; pivots are derived, one
per (scenario, fact): rows are Kubernetes versions, columns containerd
versions. Markdown and HTML are rendered from the record only, so a merged or
compared matrix renders the same way as one run here.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..errors import UsageError
from ..evidence import style
from ..artifacts.versions import KubeVersion
from .cells import HOST

SCHEMA = "kubelab/matrix"
SCHEMA_VERSION = 1
# A scenario's status in a cell. MET carries facts; the others stand in every pivot of it.
# RUNNING is what matrix.json says while a scenario is under way (it is saved as each ends).
MET, FAIL, INFRA, UNSUPPORTED, NOT_RUN, RUNNING = "met", "FAIL", "INFRA", "UNSUPPORTED", "NOT RUN", "running"
STATUSES = (MET, FAIL, INFRA, UNSUPPORTED, NOT_RUN, RUNNING)
SECONDS_SUFFIX = "_s"  # facts named like ready_s are timings


def new(axes: dict, concurrent_cells: int = 1, commit: str = "", started_at: float | None = None) -> dict:
    """commit: the kubelab that runs it (provenance.commit()); started_at: epoch seconds."""
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "axes": axes, "cells": [],
            "concurrent_cells": concurrent_cells, "kubelab_commit": commit, "started_at": started_at,
            "finished_at": None}


def cell_entry(cell, runs: bool | None = None) -> dict:
    """runs: will this invocation run the cell (an unsupported pair does, with --unsupported)?"""
    runs = cell.supported if runs is None else runs
    return {"id": cell.id, "kubernetes": cell.kubernetes, "suite": cell.suite, "containerd": cell.containerd,
            "built": cell.built, "runtime": cell.runtime, "column": cell.column, "supported": cell.supported,
            "unsupported_why": cell.unsupported_why,
            "scenarios": {n: {"status": NOT_RUN if runs else UNSUPPORTED} for n in cell.scenarios}}


def load(path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UsageError(f"{path}: no such matrix record") from None
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise UsageError(f"{path}: not a kubelab matrix record (expected schema {SCHEMA!r})")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise UsageError(f"{path}: matrix schema_version {data.get('schema_version')!r}; "
                         f"this kubelab reads {SCHEMA_VERSION}")
    return data


def save(matrix: dict, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "matrix.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(matrix, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)  # a reader never sees half a record
    (folder / "matrix.md").write_text(render_md(matrix))
    (folder / "matrix.html").write_text(render_html(matrix))
    return path


# -- pivots -------------------------------------------------------------------------------
def _row_key(k: str):
    return (1, None) if k == HOST else (0, KubeVersion.parse(k))


def _col_key(cell: dict):
    """Known containerd series in order; a track's own containerd of unknown series ("kubespray's") after them."""
    parts = cell["containerd"].split(".")[:2]
    known = all(p.isdigit() for p in parts)
    return (0, tuple(int(p) for p in parts)) if known else (1, ()), cell["suite"]


def value_of(entry: dict, fact: str) -> str:
    if entry["status"] != MET:
        return entry["status"]
    value = entry.get("facts", {}).get(fact, "unknown")
    return str(value)


def pivots(matrix: dict) -> list[dict]:
    """[{scenario, fact, rows, columns, values: {(row, col): {text, link}}}] in a stable order."""
    cells = matrix["cells"]
    columns = sorted({(_col_key(c), c["column"]) for c in cells})
    out = []
    names = sorted({n for c in cells for n in c["scenarios"]})
    for name in names:
        mine = [c for c in cells if name in c["scenarios"]]
        facts = sorted({f for c in mine for f in c["scenarios"][name].get("facts", {})}) or ["result"]
        rows = sorted({c["kubernetes"] for c in mine}, key=_row_key)
        cols = [label for _, label in columns if any(c["column"] == label for c in mine)]
        for fact in facts:
            values = {}
            for c in mine:
                entry = c["scenarios"][name]
                text = entry["status"] if fact == "result" else value_of(entry, fact)
                values[(c["kubernetes"], c["column"])] = {"text": text, "link": entry.get("run_dir", ""),
                                                         "was": entry.get("was", {}).get(fact)}
            out.append({"scenario": name, "fact": fact, "rows": rows, "columns": cols, "values": values})
    return out


def changes(p: dict) -> list[str]:
    """Where a value differs from its neighbour to the left or above (the borders)."""
    found = []
    for r, row in enumerate(p["rows"]):
        for c, col in enumerate(p["columns"]):
            here = p["values"].get((row, col))
            if not here or here["text"] in STATUSES[1:]:
                continue
            if c:
                left = p["values"].get((row, p["columns"][c - 1]))
                if left and left["text"] not in STATUSES[1:] and left["text"] != here["text"]:
                    found.append(f"Kubernetes {row}: {p['columns'][c - 1]} -> {col}: {left['text']} -> {here['text']}")
            if r:
                up = p["values"].get((p["rows"][r - 1], col))
                if up and up["text"] not in STATUSES[1:] and up["text"] != here["text"]:
                    found.append(f"{col}: Kubernetes {p['rows'][r - 1]} -> {row}: {up['text']} -> {here['text']}")
    return found


def _shown(v: dict | None) -> str:
    if not v:
        return "-"
    text = v["text"]
    if v.get("was") is not None and v["was"] != text:
        text = f"{v['was']} → {text}"
    return text


def _timing_note(matrix: dict, fact: str) -> str:
    if fact.endswith(SECONDS_SUFFIX) and matrix.get("concurrent_cells", 1) > 1:
        return (f"Timings were measured while up to {matrix['concurrent_cells']} cells ran side by side; "
                "under TCG that contention lengthens them.")
    return ""


def render_md(matrix: dict) -> str:
    lines = ["# kubelab matrix", ""] + [f"- **{k}:** {v}" for k, v in context(matrix)] + [""]
    if matrix.get("compared_with"):
        lines += [f"Compared with `{matrix['compared_with']}`: a changed cell shows `was → now`.", ""]
    lines += ["## Every cell", "", "| status | cell | scenario | wall (s) | reason |", "|---|---|---|---|---|"]
    for r in outcomes(matrix):
        status = f"[{r['status']}]({r['link']})" if r["link"] else r["status"]
        lines.append(f"| {status} | {r['cell']} | {r['scenario']} | {_seconds(r['seconds'])} | "
                     f"{r['reason'].replace('|', '/')} |")
    lines.append("")
    for p in pivots(matrix):
        lines += [f"## {p['scenario']}: {p['fact']}", "",
                  "| Kubernetes | " + " | ".join(p["columns"]) + " |",
                  "|---|" + "---|" * len(p["columns"])]
        for row in p["rows"]:
            cells = []
            for col in p["columns"]:
                v = p["values"].get((row, col))
                text = _shown(v)
                cells.append(f"[{text}]({v['link']})" if v and v.get("link") else text)
            lines.append(f"| {row} | " + " | ".join(cells) + " |")
        lines.append("")
        for c in changes(p):
            lines.append(f"- changes: {c}")
        note = _timing_note(matrix, p["fact"])
        if note:
            lines.append(f"- note: {note}")
        lines.append("")
    unsupported = sorted({c["unsupported_why"] for c in matrix["cells"] if not c["supported"]})
    if unsupported:
        lines += ["## Unsupported pairs", ""] + [f"- {u}" for u in unsupported] + [""]
    return "\n".join(lines)


# -- the run's context: what a reader needs before the pivots ---------------------------------------
def _when(ts) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts)) if ts else "-"


def context(matrix: dict) -> list[tuple[str, str]]:
    """(label, text): when it ran, which kubelab, its axes, and how long."""
    axes = matrix.get("axes", {})
    wall = matrix.get("wall_s")
    return [
        ("When", f"{_when(matrix.get('started_at'))} to {_when(matrix.get('finished_at'))}"),
        ("kubelab", f"commit {matrix.get('kubelab_commit') or 'unknown (not recorded)'}"),
        ("Scenarios", ", ".join(axes.get("scenarios", [])) or "-"),
        ("Kubernetes", ", ".join(axes.get("kubernetes", [])) or "-"),
        ("Suites", ", ".join(axes.get("suites", [])) or "-"),
        ("containerd built from source", ", ".join(axes.get("containerd_built", [])) or "none"),
        ("Cells", f"{len(matrix['cells'])}, " + ("one at a time" if matrix.get("concurrent_cells", 1) <= 1
                                                  else f"up to {matrix['concurrent_cells']} at once")),
        ("Wall time", f"{wall:.0f} s" if wall is not None else "-"),
    ]


# FAIL and INFRA first: what needs a reader's attention leads
_ORDER = {FAIL: 0, INFRA: 1, RUNNING: 2, NOT_RUN: 3, UNSUPPORTED: 4, MET: 5}


def outcomes(matrix: dict) -> list[dict]:
    """One row per (cell, scenario), failures and INFRA first, each with its reason and wall time."""
    rows = []
    for c in matrix["cells"]:
        for name, entry in c["scenarios"].items():
            verdict = entry.get("verdict") or {}
            reason = entry.get("reason") or (verdict.get("reason") if entry["status"] != MET else "") \
                or (c.get("unsupported_why") if entry["status"] == UNSUPPORTED else "") or ""
            if (entry.get("attempts") or 0) > 1:
                reason = f"{reason} ({entry['attempts']} attempts)".lstrip()
            rows.append({"cell": c["id"], "kubernetes": c["kubernetes"], "column": c["column"], "scenario": name,
                         "status": entry["status"], "seconds": entry.get("seconds"),
                         "attempts": entry.get("attempts"), "reason": reason, "link": entry.get("run_dir", ""),
                         "log": entry.get("log", "")})
    return sorted(rows, key=lambda r: (_ORDER.get(r["status"], 9), r["cell"], r["scenario"]))


def _seconds(v) -> str:
    return "-" if v is None else f"{v:.0f}"


def render_html(matrix: dict) -> str:
    e = style.esc
    rows = outcomes(matrix)
    counts = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    out = [f"<h1>kubelab matrix: {e(summary or 'no scenarios')}</h1>",
           "<ul>" + "".join(f"<li><strong>{e(k)}:</strong> {e(v)}</li>" for k, v in context(matrix)) + "</ul>"]
    if matrix.get("compared_with"):
        out.append(f"<p>Compared with <code>{e(matrix['compared_with'])}</code>: a changed cell shows was → now.</p>")
    out.append("<h2>Every cell</h2><table><thead><tr><th>status</th><th>cell</th><th>Kubernetes</th>"
               "<th>containerd</th><th>scenario</th><th>wall (s)</th><th>reason</th><th>record</th></tr></thead><tbody>")
    for r in rows:
        links = [f"<a href='{e(r['link'])}'>report</a>"] if r["link"] else []
        links += [f"<a href='{e(r['log'])}'>log</a>"] if r["log"] else []
        out.append(f"<tr><td class='{e(r['status'].replace(' ', ''))}'>{e(r['status'])}</td><td>{e(r['cell'])}</td>"
                   f"<td>{e(r['kubernetes'])}</td><td>{e(r['column'])}</td><td>{e(r['scenario'])}</td>"
                   f"<td>{_seconds(r['seconds'])}</td><td>{e(r['reason'])}</td><td>{' '.join(links)}</td></tr>")
    out.append("</tbody></table>")
    for p in pivots(matrix):
        out.append(f"<h2>{e(p['scenario'])}: {e(p['fact'])}</h2><table><tr><th>Kubernetes</th>"
                   + "".join(f"<th>{e(c)}</th>" for c in p["columns"]) + "</tr>")
        for r, row in enumerate(p["rows"]):
            out.append(f"<tr><th>{e(row)}</th>")
            for c, col in enumerate(p["columns"]):
                v = p["values"].get((row, col))
                classes = []
                if v and v["text"] not in STATUSES[1:]:
                    left = p["values"].get((row, p["columns"][c - 1])) if c else None
                    up = p["values"].get((p["rows"][r - 1], col)) if r else None
                    if left and left["text"] not in STATUSES[1:] and left["text"] != v["text"]:
                        classes.append("cl")
                    if up and up["text"] not in STATUSES[1:] and up["text"] != v["text"]:
                        classes.append("ct")
                if v and v["text"] in STATUSES[1:]:
                    classes.append(v["text"].replace(" ", ""))
                text = e(_shown(v))
                if v and v.get("link"):
                    text = f"<a href='{e(v['link'])}'>{text}</a>"
                out.append(f"<td class='{' '.join(classes)}'>{text}</td>")
            out.append("</tr>")
        out.append("</table>")
        note = _timing_note(matrix, p["fact"])
        if note:
            out.append(f"<p>{e(note)}</p>")
    unsupported = sorted({c["unsupported_why"] for c in matrix["cells"] if not c["supported"]})
    if unsupported:
        out.append("<h2>Unsupported pairs</h2><ul>" + "".join(f"<li>{e(u)}</li>" for u in unsupported) + "</ul>")
    return style.page("kubelab matrix", out)


# -- compare and merge ------------------------------------------------------------------------
def compare(matrix: dict, previous: dict, previous_name: str) -> dict:
    """Mark every (cell, scenario, fact) whose shown value changed since `previous`."""
    before = {c["id"]: c for c in previous["cells"]}
    for cell in matrix["cells"]:
        old = before.get(cell["id"])
        if not old:
            continue
        for name, entry in cell["scenarios"].items():
            was_entry = old["scenarios"].get(name)
            if not was_entry:
                continue
            facts = set(entry.get("facts", {})) | set(was_entry.get("facts", {})) | {"result"}
            was = {}
            for fact in facts:
                now_v = entry["status"] if fact == "result" else value_of(entry, fact)
                old_v = was_entry["status"] if fact == "result" else value_of(was_entry, fact)
                if now_v != old_v:
                    was[fact] = old_v
            if was:
                entry["was"] = was
    matrix["compared_with"] = previous_name
    return matrix


def merge(parts: list[dict]) -> dict:
    """One matrix from per-job records (one or more cells each); a later part wins a cell id."""
    if not parts:
        raise UsageError("matrix.merge: no matrix.json given")
    cells: dict[str, dict] = {}
    axes: dict[str, list] = {"kubernetes": [], "suites": [], "scenarios": []}
    for part in parts:
        for key, values in part.get("axes", {}).items():
            for v in values:
                if v not in axes.setdefault(key, []):
                    axes[key].append(v)
        for c in part["cells"]:
            cells[c["id"]] = c
    commits = sorted({p.get("kubelab_commit") or "unknown (not recorded)" for p in parts})
    starts = [p["started_at"] for p in parts if p.get("started_at")]
    ends = [p["finished_at"] for p in parts if p.get("finished_at")]
    merged = new(axes, max(p.get("concurrent_cells", 1) for p in parts), " and ".join(commits),
                 min(starts) if starts else None)
    merged["finished_at"] = max(ends) if ends else None
    merged["cells"] = [cells[k] for k in sorted(cells)]
    return merged
