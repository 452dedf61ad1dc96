"""Reports rendered from a run record (run.json, schema kubelab.run/v1).

Markdown and HTML are two serialisations of one list of blocks built by
`_document`, so both always carry the same facts. Everything shown comes from
the record; a value it lacks is shown as "—", never guessed.
"""

from __future__ import annotations

import json

import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path

from harness.cluster_versions import rows as cluster_rows
from harness.evidence.redact import redact, redact_obj
from harness.evidence.style import esc as _esc
from harness.evidence.style import page
from harness.fsutil import write_atomic
from harness.model import PHASES
from harness.progress import one_line

DASH = "—"
MET = {True: "✔", False: "✘", None: DASH}
COLOURS = {"ok": "#2e7d32", "failed": "#c62828", "skipped": "#9e9e9e", "running": "#f9a825"}
VERSION_KEYS = ("os", "kernel", "containerd", "runc", "systemd")


# -- facts derived from the record ---------------------------------------------

def _secs(value) -> str:
    return DASH if value is None else f"{value:.1f}"


def _span(item: dict | None):
    """Seconds from started_at to finished_at, or None if either is missing."""
    if not item or item.get("started_at") is None or item.get("finished_at") is None:
        return None
    return item["finished_at"] - item["started_at"]


def _when(ts) -> str:
    if ts is None:
        return DASH
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _phase(run: dict, name: str) -> dict | None:
    return next((p for p in run.get("phases", []) if p.get("name") == name), None)


def not_reached(run: dict) -> list[str]:
    """Phases the engine plans that have no record in this run."""
    recorded = {p.get("name") for p in run.get("phases", [])}
    return [p for p in PHASES if p not in recorded]


def _accel(lab: dict) -> str:
    """`TCG (software emulation)` or `KVM`, and why (older records kept only the domain type)."""
    name = {"qemu": "TCG (software emulation)", "kvm": "KVM"}.get(lab.get("accel"), lab.get("accel"))
    return f"{name}: {lab['accel_reason']}" if name and lab.get("accel_reason") else name or DASH


def _timings(run: dict) -> list[tuple[str, object]]:
    arm = _phase(run, "arm")
    first = next((o for o in run.get("observations", []) if o.get("kind") == "expect" and o.get("met") is True), None)
    to_signature = None
    if arm and first and arm.get("started_at") is not None and first.get("at") is not None:
        to_signature = first["at"] - arm["started_at"]
    return [
        ("arm start → first expect signature met", to_signature),
        ("recovery (recover phase)", _span(_phase(run, "recover"))),
        ("verify (verify phase)", _span(_phase(run, "verify"))),
        ("total (run)", _span(run)),
    ]


# -- the document: a list of blocks ---------------------------------------------
# ("h", level, text) ("p", text) ("warn", title, lines) ("fields", [(label, value)])
# ("table", headers, rows) ("code", text) ("links", [(label, href)]) ("timeline",)
# A field value or a table cell is text, or (label, href) for a link. Each section is a function of
# the record returning its blocks; the report is SECTIONS in order, what was proved first.

# The checks, grouped as a run proves them: (title, what the group shows, which observations).
# A new kind of check is a line here.
CHECK_GROUPS = (
    ("The fault took", "Each fault was proven in effect before anything else ran",
     lambda o: o.get("kind") == "armed"),
    ("The failure, as expected", "The failure signature the scenario claims",
     lambda o: o.get("kind") == "expect"),
    ("After the fix", "The healthy state, proven after the recovery",
     lambda o: o.get("kind") == "verify" and not o.get("layer")),
    ("The cluster, layer by layer", "What `invoke verify`'s layers found on the running cluster",
     lambda o: o.get("kind") == "verify" and bool(o.get("layer"))),
)


def _title(run: dict) -> list[tuple]:
    sc, verdict = run.get("scenario", {}), run.get("verdict", {})
    doc: list[tuple] = [("h", 1, f"{sc.get('name', DASH)}: {verdict.get('result', DASH)}")]
    if run.get("status") != "complete":
        lines = ["This run did not complete (interrupted or crashed); the evidence below is partial."]
        missing = not_reached(run)
        lines.append("Phases not reached: " + (", ".join(missing) if missing else "none") + ".")
        running = [p["name"] for p in run.get("phases", []) if p.get("status") == "running"]
        if running:
            lines.append("Still running when it stopped: " + ", ".join(running) + ".")
        doc.append(("warn", "INCOMPLETE RUN", lines))
    return doc


def proof(o: dict) -> str:
    """The line that decides a check: the line a pattern matched, that no line matched an
    `absent` pattern, or the value read against what was expected (a verify layer's
    finding: the value it read). A multi-line reading gives its first line and a count;
    the record and the check's log keep all of it."""
    value, matched, expected = (_text(o.get(k)) for k in ("value", "matched", "expected"))
    met = o.get("met")
    if met is None or o.get("layer"):  # gated out, recorded only, or a finding: what was read
        return one_line(matched or value, "in the record") or DASH
    if expected.startswith("pattern "):
        return one_line(matched, "in the record") if met and matched else \
            f"no line matches {expected[len('pattern '):]} (the output is in the check's log)"
    if expected.startswith("absent "):
        if not met:
            return f"this line matches {expected[len('absent '):]}: {one_line(matched, 'in the record')}"
        n = len(value.splitlines())
        return f"no line matches {expected[len('absent '):]} ({n} line{'' if n == 1 else 's'} read)"
    seen = one_line(matched or value, "in the record") or "(nothing)"
    return f"read {seen} ({expected})" if met else f"read {seen}; expected {expected or DASH}"


def _verdict_text(o: dict) -> str:
    mark = {True: "✔", False: "✘"}.get(o.get("met"), DASH)
    if o.get("verdict"):  # a verify layer's own words: holds, does not hold, recorded, not applicable
        return f"{mark} {o['verdict']}"
    if o.get("met") is None:
        return f"{DASH} not applicable"
    return "✔ met" if o["met"] else "✘ not met"


def _proved(run: dict) -> list[tuple]:
    verdict = run.get("verdict", {})
    reason = f": {verdict['reason']}" if verdict.get("reason") else ""
    doc: list[tuple] = [("h", 2, "What was proved"),
                        ("p", f"Verdict: {verdict.get('result', DASH)} (exit code {verdict.get('exit_code', DASH)})"
                              f"{reason}.")]
    observations = run.get("observations", [])
    shown = 0
    for title, meaning, chosen in CHECK_GROUPS:
        mine = [o for o in observations if chosen(o)]
        if not mine:
            continue
        shown += len(mine)
        asserted = [o for o in mine if o.get("met") is not None]
        count = f"{sum(o['met'] is True for o in asserted)} of {len(asserted)} met"
        if len(asserted) < len(mine):
            count += f", {len(mine) - len(asserted)} not asserted"
        rows = [[o.get("check", DASH), o.get("machine", DASH), _verdict_text(o), proof(o),
                 ("log", o["log"]) if o.get("log") else DASH] for o in mine]
        doc += [("h", 3, f"{title}: {count}"), ("p", meaning + "."),
                ("table", ["check", "on", "verdict", "the line that proves it", "reading"], rows)]
    if not shown:
        doc.append(("p", "No check was evaluated."))
    if run.get("facts"):
        doc += [("h", 3, "Facts"), ("table", ["fact", "value"], [[k, v] for k, v in run["facts"].items()])]
    return doc


def _summary(run: dict) -> list[tuple]:
    sc, lab = run.get("scenario", {}), run.get("lab", {})
    fields = [
        ("Claims", ", ".join(sc.get("claims", [])) or DASH),
        ("Mode", run.get("mode", DASH)),
        ("Run status", run.get("status", DASH)),
        ("Scenario file", f"{sc.get('file', DASH)} (sha256 {sc.get('sha256', DASH)})"),
        ("Lab", f"{lab.get('name', DASH)}: suite {lab.get('suite', DASH)}, "
                f"backend {lab.get('backend', DASH)}, image {lab.get('image', DASH)}"),
        ("Acceleration", _accel(lab)),
        ("Started", _when(run.get("started_at"))),
        ("Finished", _when(run.get("finished_at"))),
        ("kubelab", f"commit {run['kubelab']['commit']}" if run.get("kubelab") else DASH),
    ]
    return [("h", 2, "Summary"), ("p", sc.get("summary") or DASH), ("fields", fields)]


def _containerd(v: dict) -> str:
    """The real version (probes/facts.py), and Debian's package when the binary is not it."""
    real, package = v.get("containerd") or DASH, v.get("containerd_package")
    return f"{real} (replaces Debian's {package})" if package and package != real else real


def _changed(before: dict, after: dict, key: str) -> str:
    was, now = before.get(key) or DASH, after.get(key) or DASH
    return now if now == was else f"{now} (was {was})"


def _versions(run: dict) -> list[tuple]:
    machines = [[m, v.get("ip", DASH), *(_containerd(v.get("versions", {})) if k == "containerd"
                                         else v.get("versions", {}).get(k) or DASH for k in VERSION_KEYS)]
                for m, v in run.get("machines", {}).items()]
    doc = [("h", 2, "Versions"), ("table", ["machine", "ip", *VERSION_KEYS], machines)]
    after = {m: v["versions_after_install"] for m, v in run.get("machines", {}).items() if v.get("versions_after_install")}
    if after:  # an install that brings its own runtime (kubespray): what it left, beside what the image had
        doc += [("h", 3, "After the install"),
                ("p", "Read again at collect: the install replaced the guest's container runtime."),
                ("table", ["machine", "containerd", "runc"],
                 [[m, a.get("error") or _changed(run["machines"][m].get("versions", {}), a, "containerd"),
                   "" if a.get("error") else _changed(run["machines"][m].get("versions", {}), a, "runc")]
                  for m, a in after.items()])]
    cluster = run.get("cluster")
    if cluster:
        doc.append(("h", 3, "The cluster, as it reports itself"))
        if cluster.get("versions"):
            doc += [("p", f"Read through the API at {_when(cluster.get('read_at'))}."),
                    ("table", ["component", "version", "read from"], cluster_rows(cluster["versions"]))]
        else:
            doc.append(("p", f"Not read: {cluster.get('error', DASH)}"))
    return doc


def _phases(run: dict) -> list[tuple]:
    phases = [[p.get("name", DASH), p.get("status", DASH), _secs(_span(p)), p.get("reason", "")]
              for p in run.get("phases", [])]
    return [("h", 2, "Phases"), ("table", ["phase", "status", "duration (s)", "reason"], phases), ("timeline",)]


def _done(run: dict) -> list[tuple]:
    doc: list[tuple] = [("h", 2, "What was done")]
    for s in run.get("steps", []):
        code = s.get("exit_code")
        f = [("exit code", DASH if code is None else str(code)), ("duration", f"{_secs(s.get('duration'))} s"),
             ("started", _when(s.get("started_at")))]
        if s.get("log"):
            f.append(("log", (s["log"], s["log"])))
        title = f"{s.get('index', '')}. {s.get('name', DASH)} on {s.get('machine', DASH)}"
        doc += [("h", 3, f"{title} ({s.get('phase', DASH)} phase)"), ("code", s.get("command", "")), ("fields", f)]
        if s.get("ansible"):
            doc += _play(s["ansible"])
    return doc


def _play(play: dict) -> list[tuple]:
    """An ansible-playbook step: its pace, the recap, the slowest tasks and every failure."""
    rate = play.get("tasks_per_minute")
    doc: list[tuple] = [("p", f"{play.get('tasks', 0)} tasks in {_secs(play.get('seconds'))} s"
                              + (f" ({rate} per minute)" if rate is not None else "") + ".")]
    if play.get("recap"):
        keys = ("ok", "changed", "unreachable", "failed", "skipped", "rescued", "ignored")
        doc.append(("table", ["host", *keys], [[h, *(str(r.get(k, DASH)) for k in keys)]
                                              for h, r in sorted(play["recap"].items())]))
    if play.get("slowest"):
        doc.append(("table", ["slowest task", "play", "seconds"],
                    [[t["task"], t["play"], _secs(t["seconds"])] for t in play["slowest"]]))
    for f in play.get("failures", []):
        doc += [("p", f"{'Ignored failure' if f.get('ignored') else 'Failed'}: {f['task']} on {f['host']} "
                      f"({f['kind']}): {f['message']}"), ("code", f["line"])]
    return doc


def _seen(run: dict) -> list[tuple]:
    doc: list[tuple] = [("h", 2, "What was seen")]
    for o in run.get("observations", []):
        met = o.get("met")
        when = f"{_secs(o.get('after'))} s after the {o.get('phase', DASH)} phase started"
        when += f", {o.get('polls', DASH)} poll(s)"
        f = [("expected", o.get("expected") or DASH), ("met", MET.get(met, DASH)),
             ("probe", o.get("probe") or DASH), ("when", when)]
        if o.get("source"):
            f.append(("source", o["source"]))
        if o.get("log"):
            f.append(("log", (o["log"], o["log"])))
        shown = ("matched line", o["matched"]) if o.get("matched") else ("value", o.get("value", ""))
        title = f"{MET.get(met, DASH)} {o.get('check', DASH)} on {o.get('machine', DASH)} ({o.get('kind', DASH)})"
        doc += [("h", 3, title), ("fields", f), ("p", shown[0] + ":"), ("code", shown[1])]
    return doc


def _timings_section(run: dict) -> list[tuple]:
    return [("h", 2, "Timings"), ("table", ["measure", "seconds"], [[k, _secs(v)] for k, v in _timings(run)])]


def _evidence(run: dict) -> list[tuple]:
    links = [(f"{e.get('what', DASH)} ({e.get('kind', DASH)}, {e.get('machine', DASH)})", e.get("file", ""))
             for e in run.get("evidence", [])]
    return [("h", 2, "Evidence files"), ("links", links) if links else ("p", "No evidence files were recorded.")]


SECTIONS = (_title, _proved, _summary, _versions, _phases, _done, _seen, _timings_section, _evidence)


def _document(run: dict) -> list[tuple]:
    return [_as_text(b) for section in SECTIONS for b in section(run)]


def _text(value) -> str:
    """Any value a record can hold, as display text: observations carry exit codes,
    booleans, numbers, lists and mappings as well as strings."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, indent=2, sort_keys=True, default=str)


def _as_text(block: tuple) -> tuple:
    kind = block[0]
    if kind in ("p", "code"):
        return (kind, _text(block[1]))
    if kind == "h":
        return (kind, block[1], _text(block[2]))
    if kind == "fields":
        return (kind, [(k, v if isinstance(v, tuple) else _text(v)) for k, v in block[1]])
    if kind == "table":
        return (kind, block[1], [[c if isinstance(c, tuple) else _text(c) for c in row] for row in block[2]])
    if kind == "warn":
        return (kind, block[1], [_text(line) for line in block[2]])
    return block


# -- Markdown ---------------------------------------------------------------------

def _fence(text: str) -> str:
    # A fence longer than any backtick run inside, so verbatim output cannot close it.
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    tick = "`" * max(3, longest + 1)
    return f"{tick}\n{text}\n{tick}"


def _md_value(v) -> str:
    return f"[{v[0]}]({v[1]})" if isinstance(v, tuple) else v


def _md_cell(v) -> str:
    if isinstance(v, tuple):
        return f"[{_md_cell(v[0])}]({v[1]})"
    return str(v).replace("|", "\\|").replace("\n", " ")


def markdown(run: dict) -> str:
    """The run as a Markdown narrative an author can paste."""
    out = []
    for b in _document(redact_obj(run)):
        if b[0] == "h":
            out.append("#" * b[1] + " " + b[2])
        elif b[0] == "p":
            out.append(b[1])
        elif b[0] == "warn":
            out.append("\n".join([f"> **⚠ {b[1]}**", ">"] + [f"> {line}" for line in b[2]]))
        elif b[0] == "fields":
            out.append("\n".join(f"- **{k}:** {_md_value(v)}" for k, v in b[1]))
        elif b[0] == "table":
            rows = [b[1], ["---"] * len(b[1])] + b[2]
            out.append("\n".join("| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows))
        elif b[0] == "code":
            out.append(_fence(b[1]))
        elif b[0] == "links":
            out.append("\n".join(f"- [{label}]({href})" for label, href in b[1]))
    return redact("\n\n".join(out) + "\n")


# -- HTML ---------------------------------------------------------------------------

def _timeline(run: dict) -> str:
    """Inline SVG: a bar per phase on a shared time axis, a mark per met observation."""
    phases = [p for p in run.get("phases", []) if p.get("started_at") is not None]
    if not phases:
        return "<p>No phase timings were recorded.</p>"
    known = [t for p in phases for t in (p["started_at"], p.get("finished_at")) if t is not None]
    known += [o["at"] for o in run.get("observations", []) if o.get("at") is not None]
    t0, t1 = min(known), max(known)
    # A phase still running when the run stopped extends to the last recorded moment.
    ends = [p.get("finished_at") or t1 for p in phases]
    span = max(t1 - t0, 1e-6)
    left, width, row = 110, 720, 20

    def x(t: float) -> float:
        return left + (t - t0) * width / span

    axis_y = 10 + len(phases) * row
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 20}" height="{axis_y + 30}" role="img">',
             "<title>Phase timeline</title>"]
    rows = {}
    for i, (p, end) in enumerate(zip(phases, ends)):
        y = 10 + i * row
        rows.setdefault(p.get("name"), y)
        tip = f"{p.get('name')}: {p.get('status')}, {_secs(_span(p))} s"
        parts.append(f'<text x="{left - 6}" y="{y + 11}" text-anchor="end">{_esc(p.get("name"))}</text>')
        x0, w = x(p["started_at"]), max(2.0, x(end) - x(p["started_at"]))
        parts.append(f'<rect x="{x0:.1f}" y="{y}" width="{w:.1f}" height="14" '
                     f'fill="{COLOURS.get(p.get("status"), "#555")}"><title>{_esc(tip)}</title></rect>')
    for o in run.get("observations", []):
        if o.get("met") is True and o.get("at") is not None:
            mx, my = x(o["at"]), rows.get(o.get("phase"), 10)
            parts.append(f'<path class="mark" d="M{mx:.1f} {my} l-4 -6 h8 z M{mx:.1f} {my} v14" stroke="#111" '
                         f'fill="#111"><title>{_esc(o.get("check", ""))}</title></path>')
    # At most ~10 ticks, on round numbers of seconds.
    step = next((s for s in (0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600) if span / s <= 10), 7200)
    parts.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + width}" y2="{axis_y}" stroke="#555"/>')
    for k in range(int(span / step) + 1):
        tx = x(t0 + k * step)
        parts.append(f'<line x1="{tx:.1f}" y1="{axis_y}" x2="{tx:.1f}" y2="{axis_y + 4}" stroke="#555"/>'
                     f'<text x="{tx:.1f}" y="{axis_y + 16}" text-anchor="middle">{k * step:g}s</text>')
    parts.append("</svg>")
    legend = "green ok, red failed, grey skipped, amber running"
    return "\n".join(parts) + f"\n<p>Bars: {legend}. Marks: observations that were met (hover for the check).</p>"


def _html_value(v) -> str:
    return f'<a href="{_esc(v[1])}">{_esc(v[0])}</a>' if isinstance(v, tuple) else _esc(v)


def _html_cell(v) -> str:
    """A table cell: text (a verdict coloured) or a link."""
    if isinstance(v, tuple):
        return f"<td>{_html_value(v)}</td>"
    cls = ' class="ok"' if v.startswith("✔") else ' class="bad"' if v.startswith("✘") else ""
    return f"<td{cls}>{_esc(v)}</td>"


def html(run: dict) -> str:
    """The run as a standalone HTML page: inline CSS and SVG, no scripts, no external resources."""
    run = redact_obj(run)
    doc = _document(run)
    out = []
    for b in doc:
        if b[0] == "h":
            out.append(f"<h{b[1]}>{_esc(b[2])}</h{b[1]}>")
        elif b[0] == "p":
            out.append(f"<p>{_esc(b[1])}</p>")
        elif b[0] == "warn":
            out.append(f'<div class="warn"><p><strong>⚠ {_esc(b[1])}</strong></p>'
                       + "".join(f"<p>{_esc(line)}</p>" for line in b[2]) + "</div>")
        elif b[0] == "fields":
            items = "".join(f"<li><strong>{_esc(k)}:</strong> {_html_value(v)}</li>" for k, v in b[1])
            out.append(f"<ul>{items}</ul>")
        elif b[0] == "table":
            head = "".join(f"<th>{_esc(h)}</th>" for h in b[1])
            body = "".join("<tr>" + "".join(_html_cell(c) for c in r) + "</tr>" for r in b[2])
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        elif b[0] == "code":
            out.append(f"<pre><code>{_esc(b[1])}</code></pre>")
        elif b[0] == "links":
            out.append("<ul>" + "".join(f"<li>{_html_value(link)}</li>" for link in b[1]) + "</ul>")
        elif b[0] == "timeline":
            out.append(_timeline(run))
    return redact(page(doc[0][2], out))


# -- JUnit --------------------------------------------------------------------------

def junit(run: dict) -> str:
    """JUnit XML: a testcase per asserted observation, per failed or skipped phase, and for an incomplete run."""
    run = redact_obj(run)
    name = run.get("scenario", {}).get("name", "unknown")
    suite = ET.Element("testsuite", name=f"kubelab.{name}")
    if run.get("started_at") is not None:
        suite.set("timestamp", datetime.fromtimestamp(run["started_at"], timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}

    def case(classname: str, title: str, seconds=None, outcome: str | None = None, message: str = "", text: str = ""):
        counts["tests"] += 1
        tc = ET.SubElement(suite, "testcase", classname=classname, name=title, time=f"{seconds or 0:.3f}")
        if outcome:
            counts[{"failure": "failures", "error": "errors", "skipped": "skipped"}[outcome]] += 1
            el = ET.SubElement(tc, outcome, message=message)
            el.text = text or None

    for o in run.get("observations", []):
        if o.get("met") is None:  # recorded, not asserted
            continue
        failed = o["met"] is False
        case(f"{name}.{o.get('kind')}", f"{o.get('check')} [{o.get('machine')}]", o.get("after"),
             "failure" if failed else None,
             f"expected {o.get('expected')}, got {o.get('value')!r}" if failed else "",
             f"expected: {o.get('expected')}\nvalue: {o.get('value')}\ncommand: {o.get('command')}" if failed else "")
    for p in run.get("phases", []):
        if p.get("status") in ("failed", "skipped"):
            case(f"{name}.phase", f"phase {p.get('name')}", _span(p),
                 "error" if p["status"] == "failed" else "skipped", p.get("reason") or p["status"])
    if run.get("status") != "complete":
        case(f"{name}.run", "run completed", None, "error",
             "run incomplete; phases not reached: " + (", ".join(not_reached(run)) or "none"))

    suite.set("time", f"{_span(run) or 0:.3f}")
    for k, v in counts.items():
        suite.set(k, str(v))
    ET.indent(suite)
    return redact('<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n")


def write_reports(run_dir: Path, run: dict) -> list[Path]:
    """Write report.md, report.html and junit.xml into `run_dir` atomically; return their paths."""
    run_dir = Path(run_dir)
    outputs = {"report.md": markdown, "report.html": html, "junit.xml": junit}
    paths = []
    for filename, render in outputs.items():
        write_atomic(run_dir / filename, render(run))
        paths.append(run_dir / filename)
    return paths
