"""Markdown pieces for generated pages: a table cell (inline code is the evidence book's, book_render.code)."""

from __future__ import annotations


def cell(text) -> str:
    """One table cell: a pipe or a line break in it would end the cell or the row."""
    return " ".join(str(text).split()).replace("|", "\\|")
