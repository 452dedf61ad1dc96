"""The look of kubelab's HTML pages (report.html, matrix.html): one stylesheet and
one page shell, so a run's report and a matrix read alike. Standalone pages:
inline CSS, no scripts, no external resources (a report is opened from disk,
off this host)."""

from __future__ import annotations

import html as _html

CSS = """body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:72rem;margin:2rem auto;
padding:0 1rem;color:#222;line-height:1.45}
h1{border-bottom:2px solid #ddd;padding-bottom:.3rem}h2{margin-top:2rem;border-bottom:1px solid #eee}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;
vertical-align:top}th{background:#f3f3f3}
pre{background:#f5f5f5;padding:.5rem;overflow-x:auto;white-space:pre-wrap}
a{color:#1565c0}
.warn{border:3px solid #c62828;background:#fdecea;padding:.5rem 1rem;margin:1rem 0}
.ok{color:#2e7d32;font-weight:600}.bad{color:#c62828;font-weight:600}.muted{color:#777}
td.met{color:#2e7d32}td.FAIL,td.INFRA{background:#fdecea}td.UNSUPPORTED,td.NOTRUN,td.running{color:#777}
td.cl{border-left:3px solid #c62828}td.ct{border-top:3px solid #c62828}
svg text{font-size:11px;font-family:system-ui,sans-serif}"""


def esc(text) -> str:
    return _html.escape(str(text), quote=True)


def page(title: str, body: list[str]) -> str:
    """A complete HTML document: `body` is already-escaped markup, one part a line."""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"/><title>{esc(title)}</title>'
            f"<style>{CSS}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n")
