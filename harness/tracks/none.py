"""`install: none`: host scenarios; nothing is installed and the install phase is skipped."""

from __future__ import annotations

from .base import Track


class NoTrack(Track):
    name = "none"
    installs_kubernetes = False
