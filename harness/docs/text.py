"""Markdown pieces for generated pages: a table cell, inline code."""

from __future__ import annotations

import re


def cell(text) -> str:
    """One table cell: a pipe or a line break in it would end the cell or the row."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text) -> str:
    """Inline code that a backtick inside cannot close."""
    text = " ".join(str(text).split("\n"))
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if longest or text.startswith("`") or text.endswith("`") else ""
    return f"{tick}{pad}{text}{pad}{tick}"
