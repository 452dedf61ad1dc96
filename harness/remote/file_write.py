"""Writing a file in a guest as a plan step: the command, with the content on its stdin."""

from __future__ import annotations

import shlex


def write_command(path: str) -> str:
    """What writing a file sends: the content goes on stdin (SshRemote.put does the same), into a
    temporary name first, so a reader never sees half a file."""
    q = shlex.quote(path)
    return (f"mkdir -p {shlex.quote(path.rsplit('/', 1)[0] or '/')} && cat > {q}.kubelab-tmp && "
            f"chmod 644 {q}.kubelab-tmp && mv {q}.kubelab-tmp {q}")
