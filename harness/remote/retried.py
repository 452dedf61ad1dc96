"""A guest command retried as a plan step: the shell loop, so dry-run prints what runs."""

from __future__ import annotations

TRIES = 30
PAUSE_S = 10  # 30 tries 10 s apart: 5 minutes


def retried(command: str, tries: int = TRIES, pause_s: int = PAUSE_S) -> str:
    """`command` run until it exits 0, at most `tries` times `pause_s` apart; the loop exits
    non-zero when every try failed."""
    return (f"n=0; until {command}; do n=$((n+1)); [ $n -ge {tries} ] && break; sleep {pause_s}; done; "
            f"[ $n -lt {tries} ]")
