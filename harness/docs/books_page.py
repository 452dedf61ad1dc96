"""The committed evidence books at a glance: a page (evidence-books.md) and README's lines, written
from docs/books/<chapter>/book.json as `invoke evidence` recorded it, so a rebuilt book changes
them where its verdicts, wall time or provenance did."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from markdown.extensions.toc import slugify

from ..evidence.book_render import code, provenance_lines, resumed_note
from .scenario_pages import claim_anchor
from .text import cell

PAGE = "evidence-books.md"


def read(books_dir: Path) -> list[tuple[str, dict]]:
    """[(chapter, book)] of every committed book, in the folders' order (host, kubeadm, kubespray)."""
    return [(path.parent.name, json.loads(path.read_text())) for path in sorted(books_dir.glob("*/book.json"))]


def _title(chapter: str, book: dict) -> str:
    return book.get("chapters", {}).get(chapter, chapter)


def anchor(chapter: str, book: dict) -> str:
    return _slug(_title(chapter, book))


def _slug(title: str) -> str:
    """A heading's anchor as MkDocs (toc's slugify) writes it."""
    return slugify(title, "-")


def id_ranges(ids: list[str]) -> str:
    """["S1", "S2", "S3", "K5"] -> "S1-S3, K5": runs of one prefix with consecutive numbers."""
    out: list[list] = []
    for claim in ids:
        m = re.fullmatch(r"(\D*)(\d+)", claim)
        if m and out and out[-1][0] == m.group(1) and out[-1][2] == int(m.group(2)) - 1:
            out[-1][2] = int(m.group(2))
        else:
            out.append([m.group(1), int(m.group(2)), int(m.group(2))] if m else [claim, None, None])
    return ", ".join(p if a is None else f"{p}{a}" if a == b else f"{p}{a}-{p}{b}" for p, a, b in out)


def _built(book: dict) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(book["built_at"])) if book.get("built_at") else "-"


def _wall(book: dict) -> str:
    """The book's time: its wall time, or, when it was resumed, the span of its runs (what the
    wall time of this invocation alone would understate)."""
    if book.get("kept_runs"):
        return f"{book['runs_span_s'] / 60:.1f} min of runs (resumed)"
    return f"{book['wall_s'] / 60:.1f} min" if book.get("wall_s") is not None else "-"


def _holding(book: dict) -> str:
    claims = book["claims"]
    holds = sum(1 for c in claims if c["verdict"] == "holds")
    return f"{id_ranges([c['id'] for c in claims])}: {holds} of {len(claims)} hold"


def _kubespray(book: dict) -> str:
    return ", ".join(code(c) for c in (book.get("provenance") or {}).get("kubespray", [])) or "-"


def unbuilt(chapters: dict[str, str], claims: list[tuple[str, str]], books: list[tuple[str, dict]]) -> list[tuple]:
    """[(chapter, title, claim ids)] of the course's chapters with no committed book.
    chapters: {id: title}; claims: [(claim id, chapter)], both in the claims file's order."""
    have = {chapter for chapter, _ in books}
    return [(ch, title, [c for c, of in claims if of == ch]) for ch, title in chapters.items() if ch not in have]


def _claim_link(claim: str, evidence_at: dict[str, str]) -> str:
    where = evidence_at.get(claim)
    return f"[{claim}](scenarios/{where}.md#{claim_anchor(claim)})" if where else claim


def page(books: list[tuple[str, dict]], evidence_at: dict[str, str] | None = None,
         missing: list[tuple] = ()) -> str:
    """evidence_at: {claim id: the scenario page showing its evidence}; missing: unbuilt()'s chapters."""
    evidence_at = evidence_at or {}
    lines = ["# Evidence books", "",
             "The example course's books (`claims/course.yaml`), as `invoke evidence` wrote them under "
             "`docs/books/<chapter>/`. Each claim's verbatim evidence is on the page of the scenario that "
             "proves it; [The evidence book](evidence-book.md) says how a book is built.", ""]
    if not books:
        lines += ["No book is committed yet.", ""]
    for chapter, book in books:
        built = f"- built {_built(book)}"
        if book.get("wall_s") is not None:
            built += (f" in {book['wall_s']:.0f} s" + (resumed_note(book) or f" ({_wall(book)})")
                      + f"; {book['repeat']} repeat(s); up to {book['concurrent_cells']} matrix cell(s) side by side")
        lines += [f"## {_title(chapter, book)}", "",
                  f"- `invoke evidence --claims claims/course.yaml --chapter {chapter}`", built,
                  f"- claims {_holding(book)}", *(f"- {line}" for line in provenance_lines(book))]
        lines += ["", "| claim | verdict | proven by | the notes say |", "|---|---|---|---|"]
        for c in book["claims"]:
            proven = ", ".join(f"[{s}](scenarios/{s}.md)" for s in c.get("scenarios", [])) or "-"
            lines.append(f"| {_claim_link(c['id'], evidence_at)} | {c['verdict']} | {proven} | {cell(c['says'])} |")
        lines.append("")
    for _, title, ids in missing:
        lines += [f"## {title}", "", f"No book of this chapter is committed yet: claims {id_ranges(ids)} "
                  "have no evidence here.", ""]
    return "\n".join(lines)


def readme_table(books: list[tuple[str, dict]], missing: list[tuple] = ()) -> str:
    """README's lines: one per book, linking its section of the page, then one per chapter with
    no book yet (unbuilt())."""
    lines = ["| chapter | claims | built | wall time | kubespray checkout |", "|---|---|---|---|---|"]
    for chapter, book in books:
        lines.append(f"| [{_title(chapter, book)}](docs/{PAGE}#{anchor(chapter, book)}) | {_holding(book)} | "
                     f"{_built(book)} | {_wall(book)} | {_kubespray(book)} |")
    for _, title, ids in missing:
        lines.append(f"| [{title}](docs/{PAGE}#{_slug(title)}) | {id_ranges(ids)}: no book yet | - | - | - |")
    return "\n".join(lines) + "\n"
