"""Which kubelab made a record: the git commit of its checkout, and whether that
checkout had uncommitted changes (a record made from changed code says so)."""

from __future__ import annotations

import subprocess

from . import paths


def commit() -> str:
    """`8891156a1b2c`, `8891156a1b2c (with uncommitted changes)`, or `unknown (...)`."""
    root = str(paths.project_root())
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return "unknown (not a git checkout)"
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({type(exc).__name__})"
    return head.stdout.strip() + (" (with uncommitted changes)" if dirty else "")
