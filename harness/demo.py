"""The demo: two machines of a suite, what each one says it is, torn down after (unless kept)."""

from __future__ import annotations

import time

from . import lifecycle
from .progress import Progress

SHOW = ("echo \"$(hostname) $(hostname -I) machine-id $(cat /etc/machine-id)\"; "
        "uname -r; containerd --version; ip route")


def run(suite: str, keep: bool = False, progress: Progress | None = None, show=print) -> None:
    """`show` each machine's answer to SHOW as it comes."""
    progress = progress or Progress()
    spec = lifecycle.plan_lab(2, suite, 1, 1024, f"demo-{int(time.time()) % 100000}")
    lab = lifecycle.up(spec, progress)
    from .remote.ssh import SshRemote

    try:
        for m in lab.state["machines"]:
            with SshRemote(lab.ssh_target(m["name"])) as remote:
                show(remote.run(SHOW, timeout=60, check=True).stdout.rstrip())
    finally:
        if not keep:
            lifecycle.down(lab.name, progress)
