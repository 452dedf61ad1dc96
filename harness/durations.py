"""Durations as scenario files and kubeadm write them (`90s`, `10m0s`, `1h30m`, `500ms`), in seconds."""

from __future__ import annotations

import re

DURATION_RE = re.compile(r"^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$")


def parse_duration(value) -> float | None:
    """Seconds, or None for what is not a duration (a bool, a negative number, `5 min`)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if value >= 0 else None
    if not isinstance(value, str) or not value:
        return None
    m = DURATION_RE.match(value.strip())
    if not m or not any(m.groups()):
        return None
    h, mi, s, ms = m.groups()
    return int(h or 0) * 3600 + int(mi or 0) * 60 + float(s or 0) + int(ms or 0) / 1000
