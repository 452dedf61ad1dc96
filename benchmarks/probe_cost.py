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
machine and kind: the median wall and CPU seconds. Keep a lab with `--keep`; nothing is asserted.
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
    """The container's id, then `kind wall user sys` per command (bash's time, children included)."""
    body = "; ".join(f"{{ time {command} >/dev/null 2>&1; }} 2>&1 | sed 's/^/{kind} /'"
                     for kind, command in KINDS.items())
    return ("set -e; export PATH=/usr/local/bin:$PATH; TIMEFORMAT='%R %U %S'; "
            "c=$(crictl ps --name '^calico-node$' --state running -q | head -n 1); "
            "[ -n \"$c\" ] || { echo 'no running calico-node container'; exit 3; }; "
            f"for i in $(seq {rounds}); do {body}; sleep 1; done")


def parse(text: str) -> dict[str, list[tuple[float, float]]]:
    """{kind: [(wall, cpu)]} from the loop's `kind wall user sys` lines."""
    out: dict[str, list[tuple[float, float]]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] in KINDS:
            wall, user, sys_ = map(float, parts[1:])
            out.setdefault(parts[0], []).append((wall, user + sys_))
    return out


def summary(samples: dict[str, list[tuple[float, float]]]) -> str:
    return "   ".join(f"{kind} {statistics.median(w for w, _ in values):.2f} s wall, "
                       f"{statistics.median(c for _, c in values):.2f} s CPU (n={len(values)})"
                       for kind, values in samples.items() if values)


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
        if result.returncode != 0:
            print(f"{m['name']:<6} {result.stdout.strip() or result.stderr.strip()}", flush=True)
            continue
        print(f"{m['name']:<6} {summary(parse(result.stdout))}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
