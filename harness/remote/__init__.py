"""Talking to machines: pinned-key SSH, command results, key material."""
