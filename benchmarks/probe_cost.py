"""What one calico-node probe costs a guest, as an exec of calico-node and as the kubelet's own GET
of the same endpoint (nothing is installed in the lab).

    .venv/bin/python benchmarks/probe_cost.py [--lab NAME] [--rounds 5]

Why: upstream's calico-node probes are execs (`calico-node -felix-live`, `-felix-ready`), which under
VXLAN only GET felix's health endpoint on localhost:9099 (node/pkg/health/health.go, v3.31.7). An
exec probe starts runc, runc's init and the calico-node binary in the container; under TCG every
one of them is a Go program emulated from its first instruction.

On each machine with a running calico-node container, `--rounds` times each, one after another:
- `exec`: `runc exec <container> /bin/calico-node -felix-live`, as the kubelet's exec probe runs it
  through containerd (containerd's own share of an ExecSync is not in it);
- `runc`: `runc exec <container> /bin/true`, runc's part alone;
- `http`: `curl http://localhost:9099/liveness`, the GET the kubelet makes for an httpGet probe
  (the kubelet's own GET is in-process, cheaper than a curl).
The shell's `time` gives each command's wall time and the CPU of it and its children. Printed per
machine and kind: the median wall and CPU seconds of the commands that succeeded, and how many
failed. Keep a lab with `--keep`; nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RUNC = "runc --root /run/containerd/runc/k8s.io"
KINDS = {"exec": f"{RUNC} exec $c /bin/calico-node -felix-live",
         "runc": f"{RUNC} exec $c /bin/true",
         "http": "curl -s -o /dev/null http://localhost:9099/liveness"}


def guest_loop(rounds: int) -> str:
    """The container's id, then `kind exit-status wall user sys` per command (bash's time, children
    included)."""
    body = "; ".join(f"s=0; {{ time {command} >/dev/null 2>&1 || s=$?; }} 2>$t; echo \"{kind} $s $(cat $t)\""
                     for kind, command in KINDS.items())
    return ("set -e; export PATH=/usr/local/bin:$PATH; TIMEFORMAT='%R %U %S'; t=$(mktemp); trap 'rm -f $t' EXIT; "
            "c=$(crictl ps --name '^calico-node$' --state running -q | head -n 1); "
            "[ -n \"$c\" ] || { echo 'no running calico-node container'; exit 3; }; "
            f"for i in $(seq {rounds}); do {body}; sleep 1; done")


def parse(text: str) -> tuple[dict[str, list[tuple[float, float]]], dict[str, int]]:
    """({kind: [(wall, cpu)]} of the commands that exited 0, {kind: how many failed})."""
    samples: dict[str, list[tuple[float, float]]] = {}
    failed: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 5 or parts[0] not in KINDS:
            continue
        if parts[1] != "0":
            failed[parts[0]] = failed.get(parts[0], 0) + 1
            continue
        wall, user, sys_ = map(float, parts[2:])
        samples.setdefault(parts[0], []).append((wall, user + sys_))
    return samples, failed


def summary(samples: dict[str, list[tuple[float, float]]], failed: dict[str, int]) -> str:
    parts = []
    for kind in KINDS:
        values = samples.get(kind, [])
        text = (f"{kind} {statistics.median(w for w, _ in values):.2f} s wall, "
                f"{statistics.median(c for _, c in values):.2f} s CPU (n={len(values)})" if values else f"{kind} -")
        parts.append(text + (f", {failed[kind]} failed" if failed.get(kind) else ""))
    return "   ".join(parts)


def main() -> int:
    from harness.lab import Lab
    from harness.remote.ssh import SshRemote

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lab", help="the lab (default: the only lab)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    lab = Lab.chosen(args.lab)
    for m in (m for m in lab.state["machines"] if m.get("ip")):
        remote = SshRemote(lab.ssh_target(m["name"]))
        try:
            result = remote.run(guest_loop(args.rounds), timeout=60 + args.rounds * 180)
        finally:
            remote.close()
        if not result.ok:
            print(f"{m['name']:<6} {result.stdout.strip() or result.stderr.strip()}", flush=True)
            continue
        print(f"{m['name']:<6} {summary(*parse(result.stdout))}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
