"""The evidence book on disk: snippets per claim, and the index as Markdown and HTML.

`snippets/<ID>.md` holds what an author includes in their notes: the
sentence, the verdict, the verbatim lines (times and process ids masked) with
command and source, the versions and the facts that are not timings. Nothing
in it changes unless one of those did: run ids, dates and durations live in
the index. `snippets/<ID>.timings.md` holds the claim's timings with the
conditions they were measured under; built with `--compare`, it keeps the
previous book's text while every timing stays inside the previous spread.

Both index forms are serialisations of one list of blocks; the HTML takes
its style from the run report's (style.py, render.py's colours).
"""

from __future__ import annotations

import html as _html
import json
import re
import time
from pathlib import Path

from ..fsutil import write_atomic
from ..matrix.cells import HOST
from .book import FAILS, HOLDS, UNSEEN, VERDICTS, cell_label, stable
from .render import COLOURS
from .style import page

VERDICT_CSS = {HOLDS: COLOURS["ok"], FAILS: COLOURS["failed"], UNSEEN: COLOURS["skipped"]}
_CLASS = {HOLDS: "holds", FAILS: "fails", UNSEEN: "unseen"}
BOOK_CSS = "".join(f".{_CLASS[v]}{{border-left:6px solid {c};padding-left:.5rem}}"
                   f"td.{_CLASS[v]}{{background:{c};color:#fff}}" for v, c in VERDICT_CSS.items()) + \
    ".changes{border:3px solid #f9a825;background:#fff8e1;padding:.5rem 1rem;margin:1rem 0}"

# Blocks: ("h", level, md) ("p", md) ("quote", md) ("code", text) ("ul", [md]) ("verdict", verdict, md)
# ("table", [header md], [[(md, verdict or "")]]) ("box", title, [md]). `md` is inline Markdown.


def code(text: str) -> str:
    """Inline code that a backtick inside cannot close."""
    text = " ".join(str(text).split("\n"))
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if longest or text.startswith("`") or text.endswith("`") else ""
    return f"{tick}{pad}{text}{pad}{tick}"


def _machines(names: list[str]) -> str:
    return ", ".join(names)


def _versions(v: dict) -> str:
    if v and all(isinstance(x, dict) for x in v.values()):  # machines disagree: each one's
        return "; ".join(f"{m}: {_versions(x)}" for m, x in v.items())
    keys = ("kubernetes", "os", "kernel", "containerd", "runc", "systemd")
    return ", ".join(f"{k} {v[k]}" if k != "os" else v[k] for k in keys if v.get(k))


def _line_blocks(line: dict, repeat: int) -> list[tuple]:
    met = {True: "met", False: "NOT met", None: "recorded"}[line["met"]]
    seen = "" if repeat <= 1 or len(line["repeats"]) == repeat else \
        f" (in {len(line['repeats'])} of {repeat} runs)"
    out = [("p", f"{line['kind']} {code(line['check'])} on {_machines(line['machines'])}: {met}{seen}"
                 + (f"; expected {line['expected']}" if line["met"] is False else ""))]
    out.append(("code", line["line"]))
    tail = [f"command: {code(line['command'])}"] if line["command"] else []
    if line["source"]:
        tail.append(f"source: {line['source']}")
    if tail:
        out.append(("p", "; ".join(tail)))
    return out


def claim_blocks(claim: dict, repeat: int) -> list[tuple]:
    """The stable part of a claim: what its snippet holds and the index shows."""
    blocks: list[tuple] = [("verdict", claim["verdict"], f"**{claim['id']}: {claim['verdict']}**"),
                           ("quote", claim["says"])]
    if not claim["cells"]:
        blocks.append(("p", f"Why: {stable(claim['why'])}"))
    for cell in claim["cells"]:
        blocks.append(("h", 4, f"{cell_label(cell)}: {cell['verdict']}"))
        for scen in cell["scenarios"]:
            head = f"Scenario {code(scen['scenario'])}"
            if scen["verdict"] != cell["verdict"] or len(cell["scenarios"]) > 1:
                head += f": {scen['verdict']}"
            if scen["verdict"] != HOLDS:
                head += f" ({stable(scen['why'])})"
            blocks.append(("p", head))
            for v in scen["versions"]:
                blocks.append(("p", f"Versions: {_versions(v)}"))
            for line in scen["lines"]:
                blocks += _line_blocks(line, repeat)
            if scen["gated"]:
                blocks.append(("ul", [f"not evaluated here: {g['kind']} {code(g['check'])} on "
                                      f"{_machines(g['machines'])}: {g['why']}" for g in scen["gated"]]))
    values = [f"{code(f['fact'])} ({f['scenario']}), {_cell_of(claim, c['cell'])}: "
              + " | ".join(sorted({str(v) for v in c["values"]}))
              + (f" (notes say: {f['notes_say']})" if f["notes_say"] else "")
              for f in claim["facts"] if not f["timing"] for c in f["cells"]]
    if values:
        blocks += [("p", "Facts:"), ("ul", values)]
    return blocks


def _cell_of(claim: dict, cid: str) -> str:
    cell = next((c for c in claim["cells"] if c["id"] == cid), None)
    return cell_label(cell) if cell else cid


def _conditions(fact: dict, cell: dict, concurrent: int) -> str:
    parts = []
    for c in cell["conditions"]:
        parts.append(f"{c['acceleration']}; host {c['host_cores']} cores; guests {fact['guests']}"
                     + (f"; Kubernetes {c['kubernetes']}" if c.get("kubernetes") else "")
                     + (f"; containerd {c['containerd']}" if c.get("containerd") else ""))
    beside = cell.get("side_by_side")
    if beside is None and concurrent > 1:  # the run did not record its own: the matrix's peak
        parts.append(f"up to {concurrent} matrix cells ran side by side (contention lengthens timings)")
    elif beside and beside > 1:
        parts.append(f"up to {beside} matrix cells ran side by side while it ran (contention lengthens timings)")
    return "; ".join(parts) or "conditions not recorded"


def _figure(value) -> str:
    return f"{value} s" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def timing_blocks(claim: dict, concurrent: int) -> list[tuple]:
    items = []
    for fact in claim["facts"]:
        if not fact["timing"]:
            continue
        for cell in fact["cells"]:
            where = f"{code(fact['fact'])} ({fact['scenario']}), {_cell_of(claim, cell['cell'])}"
            if "median" in cell:
                figure = (f"{cell['median']} s" if cell["n"] == 1 else
                          f"median {cell['median']} s, min {cell['min']} s, max {cell['max']} s over "
                          f"{cell['measured']} of {cell['n']} runs")
            else:
                figure = "not measured: " + ", ".join(sorted({str(v) for v in cell["values"]}))
            note = f" (notes say: {fact['notes_say']})" if fact["notes_say"] else ""
            state = ""
            if cell.get("state"):
                state = " At the fix, run by run: " + "; ".join(
                    f"{_figure(v)}: " + ", ".join(f"{k} {s}" for k, s in st.items())
                    for v, st in zip(cell["values"], cell["state"])) + "."
            items.append(f"{where}: {figure}{note}.{state} Measured under: {_conditions(fact, cell, concurrent)}.")
    return [("ul", items)] if items else []


# -- Markdown ------------------------------------------------------------------------------
def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    tick = "`" * max(3, longest + 1)
    return f"{tick}\n{text}\n{tick}"


def markdown(blocks: list[tuple]) -> str:
    out = []
    for b in blocks:
        kind = b[0]
        if kind == "h":
            out.append("#" * b[1] + " " + b[2])
        elif kind in ("p",):
            out.append(b[1])
        elif kind == "verdict":
            out.append(b[2])
        elif kind == "quote":
            out.append("> " + b[1])
        elif kind == "code":
            out.append(_fence(b[1]))
        elif kind == "ul":
            out.append("\n".join(f"- {item}" for item in b[1]))
        elif kind == "box":
            out.append("\n".join([f"**{b[1]}**", ""] + [f"- {item}" for item in b[2]]))
        elif kind == "table":
            rows = [b[1], ["---"] * len(b[1])] + [[text for text, _ in row] for row in b[2]]
            out.append("\n".join("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows))
    return "\n\n".join(out) + "\n"


# -- HTML ------------------------------------------------------------------------------------
def inline_html(md: str) -> str:
    """The inline Markdown the book writes: code spans, **bold**, [links](href)."""
    out, pos = [], 0
    for m in re.finditer(r"(`+) ?(.+?) ?\1(?!`)|\*\*(.+?)\*\*|\[([^\]]+)\]\(([^)\s]+)\)", md):
        out.append(_html.escape(md[pos:m.start()]))
        if m.group(1):
            out.append(f"<code>{_html.escape(m.group(2))}</code>")
        elif m.group(3):
            out.append(f"<strong>{inline_html(m.group(3))}</strong>")
        else:
            out.append(f"<a href=\"{_html.escape(m.group(5))}\">{inline_html(m.group(4))}</a>")
        pos = m.end()
    out.append(_html.escape(md[pos:]))
    return "".join(out)


def html(blocks: list[tuple], title: str) -> str:
    out = []
    for b in blocks:
        kind = b[0]
        if kind == "h":  # ids as a Markdown renderer makes them, so `#k8` links work in both
            slug = re.sub(r"[^a-z0-9]+", "-", b[2].lower()).strip("-")
            out.append(f"<h{b[1]} id=\"{slug}\">{inline_html(b[2])}</h{b[1]}>")
        elif kind == "p":
            out.append(f"<p>{inline_html(b[1])}</p>")
        elif kind == "verdict":
            out.append(f"<p class=\"{_CLASS[b[1]]}\">{inline_html(b[2])}</p>")
        elif kind == "quote":
            out.append(f"<blockquote>{inline_html(b[1])}</blockquote>")
        elif kind == "code":
            out.append(f"<pre><code>{_html.escape(b[1])}</code></pre>")
        elif kind == "ul":
            out.append("<ul>" + "".join(f"<li>{inline_html(i)}</li>" for i in b[1]) + "</ul>")
        elif kind == "box":
            out.append(f"<div class=\"changes\"><p><strong>{inline_html(b[1])}</strong></p><ul>"
                       + "".join(f"<li>{inline_html(i)}</li>" for i in b[2]) + "</ul></div>")
        elif kind == "table":
            head = "".join(f"<th>{inline_html(h)}</th>" for h in b[1])
            body = "".join("<tr>" + "".join(f"<td class=\"{_CLASS.get(v, '')}\">{inline_html(t)}</td>" for t, v in row)
                           + "</tr>" for row in b[2])
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    return page(title, [f"<style>{BOOK_CSS}</style>"] + out)  # the reports' page, plus the verdict colours


# -- the index -------------------------------------------------------------------------------
def _pivot(claim: dict) -> list[tuple]:
    """Rows Kubernetes, columns containerd: the claim's verdict per cell, with its other facts."""
    cells = claim["cells"]
    if len(cells) < 2:
        return []
    rows = list(dict.fromkeys(c["kubernetes"] for c in cells))
    cols = list(dict.fromkeys(c["column"] for c in sorted(cells, key=lambda c: (
        [int(p) for p in str(c["containerd"]).split(".")[:2] if p.isdigit()], c["suite"]))))
    table = []
    for row in rows:
        line = [("host" if row == HOST else f"Kubernetes {row}", "")]
        for col in cols:
            cell = next((c for c in cells if c["kubernetes"] == row and c["column"] == col), None)
            if cell is None:
                line.append(("-", ""))
                continue
            facts = [f"{f['fact']} " + "/".join(sorted({str(v) for v in c["values"]}))
                     for f in claim["facts"] if not f["timing"] for c in f["cells"] if c["cell"] == cell["id"]]
            line.append(("; ".join([cell["verdict"]] + facts), cell["verdict"]))
        table.append(line)
    return [("p", "Across versions:"), ("table", ["Kubernetes"] + cols, table)]


def _runs(claim: dict) -> list[str]:
    items = []
    for cell in claim["cells"]:
        for scen in cell["scenarios"]:
            for run in scen["runs"]:
                when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(run["started_at"])) if run["started_at"] else "-"
                took = f", {run['seconds']:.0f} s" if isinstance(run.get("seconds"), (int, float)) else ""
                label = f"{cell_label(cell)}, {scen['scenario']}, run {run['repeat']}: {run['status']}"
                items.append(f"[{label}]({run['report']}) ({run['run_id'] or 'no record'}, {when}{took})"
                             if run["report"] else f"{label} (no record)")
    return items


def resumed_note(book: dict) -> str:
    """Said after a resumed book's wall time, which is then this invocation's alone."""
    if not book.get("kept_runs"):
        return ""
    return (f" (resumed: {book['kept_runs']} run(s) kept from an earlier build; the runs span "
            f"{book['runs_span_s']:.0f} s)")


def provenance_lines(book: dict) -> list[str]:
    """kubelab's commit and the kubespray checkout, when the book recorded them (older books did not)."""
    made = book.get("provenance") or {}
    lines = []
    if made.get("kubelab"):
        lines.append("kubelab commit " + ", ".join(code(c) for c in made["kubelab"]))
    if made.get("kubespray"):
        lines.append("kubespray checkout " + ", ".join(code(c) for c in made["kubespray"]))
    return lines


def index_blocks(book: dict) -> list[tuple]:
    counts = {v: sum(1 for c in book["claims"] if c["verdict"] == v) for v in VERDICTS}
    blocks: list[tuple] = [("h", 1, f"Evidence book: {book['course'] or 'claims'}")]
    built = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(book["built_at"])) if book.get("built_at") else "-"
    took = f" in {book['wall_s']:.0f} s" if book.get("wall_s") is not None else ""
    took += resumed_note(book)
    blocks.append(("ul", [f"claims file(s): {', '.join(code(f) for f in book['claims_files'])}",
                          f"built {built}{took}; {book['repeat']} repeat(s); up to {book['concurrent_cells']} "
                          "matrix cell(s) side by side",
                          "runs: " + (", ".join(f"[{r}]({r}/matrix.md)" for r in book["runs"]) or "none"),
                          *provenance_lines(book),
                          f"verdicts: {counts[HOLDS]} hold, {counts[FAILS]} do not hold, {counts[UNSEEN]} not "
                          "observed here"]))
    if book.get("compared_with"):
        changed = [c for c in book["claims"] if c["changes"]]
        items = [f"**{c['id']}** ({book['chapters'].get(c['chapter'], c['chapter'])}): " + "; ".join(c["changes"])
                 for c in changed]
        items += [f"**{r}**: in the previous book, not in this one" for r in book.get("removed", [])]
        blocks.append(("box", f"Changes since {book['compared_with']}",
                       items or ["no claim changed: every verdict, matched line, version and fact is as before, "
                                 "every timing inside its previous spread"]))
    order = sorted(book["claims"], key=lambda c: not c["changes"]) if book.get("compared_with") else book["claims"]
    blocks.append(("h", 2, "Claims"))
    blocks.append(("table", ["claim", "chapter", "verdict"],
                   [[(f"[{c['id']}](#{c['id'].lower()})", ""), (book["chapters"].get(c["chapter"], c["chapter"]), ""),
                     (c["verdict"] + (" (changed)" if c["changes"] else ""), c["verdict"])] for c in order]))
    for chapter, title in book["chapters"].items():
        mine = [c for c in order if c["chapter"] == chapter]
        if not mine:
            continue
        blocks.append(("h", 2, title))
        for claim in mine:
            blocks.append(("h", 3, f"{claim['id']}"))
            if claim["changes"]:
                blocks.append(("box", "Changed since the previous book", claim["changes"]))
            body = claim_blocks(claim, book["repeat"])
            blocks += body[:2] + ([("p", f"Why: {claim['why']}")] if claim["cells"] else []) + body[2:]
            blocks += _pivot(claim)
            timings = timing_blocks(claim, book["concurrent_cells"])
            if timings:
                blocks += [("p", "Timings:")] + timings
            runs = _runs(claim)
            if runs:
                blocks += [("p", "Run reports:"), ("ul", runs)]
            snippets = [f"[snippets/{claim['id']}.md](snippets/{claim['id']}.md)"]
            if timings:
                snippets.append(f"[snippets/{claim['id']}.timings.md](snippets/{claim['id']}.timings.md)")
            blocks.append(("p", "Snippets: " + ", ".join(snippets)))
    return blocks


def snippet(claim: dict, book: dict) -> str:
    source = Path(book["claims_files"][0]).name if book["claims_files"] else "claims"
    head = (f"<!-- kubelab evidence book: claim {claim['id']} ({source}); "
            "written by `invoke evidence`: change the claims file or the scenarios, not this -->")
    return head + "\n\n" + markdown(claim_blocks(claim, book["repeat"]))


def timings_snippet(claim: dict, book: dict) -> str:
    blocks = timing_blocks(claim, book["concurrent_cells"])
    if not blocks:
        return ""
    head = f"<!-- kubelab evidence book: timings of claim {claim['id']}; written by `invoke evidence` -->"
    return head + "\n\n" + markdown(blocks)


def write(out: Path, book: dict, previous_dir: Path | None = None) -> list[Path]:
    """book.json, index.md, index.html and snippets/; snippets of claims no longer in the book go."""
    out = Path(out)
    written = []
    snippets = out / "snippets"
    keep = set()
    for claim in book["claims"]:
        path = snippets / f"{claim['id']}.md"
        write_atomic(path, snippet(claim, book))
        keep.add(path.name)
        text = timings_snippet(claim, book)
        if not text:
            continue
        path = snippets / f"{claim['id']}.timings.md"
        before = previous_dir / "snippets" / path.name if previous_dir else None
        if claim.get("timings_kept") and before and before.exists():
            text = before.read_text()  # every timing inside the previous spread: the text stands
        write_atomic(path, text)
        keep.add(path.name)
    for stale in snippets.glob("*.md"):
        if stale.name not in keep:
            stale.unlink()
    blocks = index_blocks(book)
    for name, text in (("book.json", json.dumps(book, indent=2, sort_keys=True) + "\n"),
                       ("index.md", markdown(blocks)),
                       ("index.html", html(blocks, f"Evidence book: {book['course']}"))):
        write_atomic(out / name, text)
        written.append(out / name)
    return written
