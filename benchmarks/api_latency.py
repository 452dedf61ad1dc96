"""How long a fresh API request takes from each machine of a running lab, and how that moves with
the workers' host CPU share (nothing is installed in the lab).

    .venv/bin/python benchmarks/api_latency.py [--lab NAME] [--requests 20] [--shares 512,1024,2048]

Why: calico-node's start gives each of its first API requests two seconds on a new connection
(`config.Timeout = 2 * time.Second`, node/pkg/lifecycle/startup/startup.go v3.31.7) and exits
when one runs out; on a loaded two-core TCG host it did, start after start, on the worker.

On each machine, `--requests` times: one curl of kube-system's kubeadm-config ConfigMap with the
machine's own kubelet credentials, to the server its /etc/kubernetes/kubelet.conf names (the
control plane itself; on a kubespray worker, its nginx proxy on localhost:6443), a new TCP and TLS
connection each time. kubeadm lets nodes read that ConfigMap (its `kubeadm:nodes-kubeadm-config`
Role, cmd/kubeadm/app/phases/uploadconfig), as calico-node's start reads it: measured, HTTP 200;
where a node may not, the 403 has still crossed the proxy, TLS, authentication and authorization.
curl's own clock splits each request: TCP connected, TLS done, first byte. With --shares the
lab's workers' host CPU shares are set to each value in turn (libvirt's cpu_shares), the requests
repeated, and the shares put back.

Printed per share and machine: the median, 90th percentile and slowest of each part, and how
many requests took over 2 s in all. Keep a lab with `--keep`, and run this while the cluster is
as loaded as the moment in question. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

LIMIT_S = 2.0  # calico-node's start: each request's client timeout
CONFIGMAP = "/api/v1/namespaces/kube-system/configmaps/kubeadm-config"


def guest_loop(requests: int) -> str:
    """One shell loop on the machine: its kubelet.conf's server and CA, its client certificate,
    then a curl per request printing `connect tls first-byte total http-code` (seconds)."""
    conf = "/etc/kubernetes/kubelet.conf"
    return (f"set -e; server=$(sed -n 's/^ *server: *//p' {conf} | head -n 1); "
            f"ca=$(mktemp); trap 'rm -f $ca' EXIT; "
            f"sed -n 's/^ *certificate-authority-data: *//p' {conf} | head -n 1 | base64 -d > $ca; "
            f"cert=$(sed -n 's/^ *client-certificate: *//p' {conf} | head -n 1); "
            f"key=$(sed -n 's/^ *client-key: *//p' {conf} | head -n 1); "
            f"for i in $(seq {requests}); do "
            f"curl -s -o /dev/null --max-time 30 --cacert $ca --cert $cert --key $key "
            f"-w '%{{time_connect}} %{{time_appconnect}} %{{time_starttransfer}} %{{time_total}} %{{http_code}}\\n' "
            f"\"$server{CONFIGMAP}\" || echo 'failed'; sleep 0.5; done")


@dataclass(frozen=True)
class Request:
    connect: float
    tls: float       # TLS done, from the start
    first_byte: float
    total: float
    code: str


def parse(text: str) -> tuple[list[Request], int]:
    """The loop's lines: (requests that answered, requests curl gave up on)."""
    out, failed = [], 0
    for line in text.splitlines():
        parts = line.split()
        if parts == ["failed"]:
            failed += 1
        elif len(parts) == 5:
            out.append(Request(*(float(p) for p in parts[:4]), parts[4]))
    return out, failed


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * 9 // 10) - 1)]


def summary(requests: list[Request], failed: int) -> str:
    if not requests:
        return f"no answer ({failed} failed)"
    parts = []
    for label, values in (("connect", [r.connect for r in requests]), ("tls", [r.tls for r in requests]),
                          ("first byte", [r.first_byte for r in requests])):
        parts.append(f"{label} {statistics.median(values):.2f}/{_p90(values):.2f}/{max(values):.2f}")
    over = sum(1 for r in requests if r.total > LIMIT_S) + failed
    codes = ",".join(sorted({r.code for r in requests}))
    return (f"{'; '.join(parts)} s (median/p90/max); over {LIMIT_S:.0f} s: {over} of {len(requests) + failed}; "
            f"HTTP {codes}")


def main() -> int:
    from harness.lab import Lab
    from harness.remote.ssh import SshRemote

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lab", help="the lab (default: the only lab)")
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--shares", default="", help="comma-separated cpu_shares for the workers, each in turn")
    args = ap.parse_args()
    lab = Lab.chosen(args.lab)
    machines = [m for m in lab.state["machines"] if m.get("ip")]
    shares = [int(s) for s in args.shares.split(",") if s.strip()] or [None]
    if shares != [None] and lab.state["backend"] != "libvirt":
        print(f"--shares: lab {lab.name} runs on {lab.state['backend']}, not libvirt", file=sys.stderr)
        return 2
    domains = _domains([m for m in machines if m.get("role") == "worker"]) if shares != [None] else {}
    before = {name: dom.schedulerParameters().get("cpu_shares") for name, dom in domains.items()}
    remotes = {m["name"]: SshRemote(lab.ssh_target(m["name"])) for m in machines}
    try:
        for share in shares:
            for dom in domains.values():
                dom.setSchedulerParameters({"cpu_shares": share})
            label = f"workers' cpu_shares {share}" if share else "shares as they are"
            for name, remote in remotes.items():
                result = remote.run(guest_loop(args.requests), timeout=60 + args.requests * 35, check=True)
                print(f"{label:<26} {name:<6} {summary(*parse(result.stdout))}", flush=True)
    finally:
        for name, dom in domains.items():
            if before.get(name) is not None:
                dom.setSchedulerParameters({"cpu_shares": before[name]})
        for remote in remotes.values():
            remote.close()
    return 0


def _domains(machines: list[dict]) -> dict:
    from harness.machines.libvirt import LibvirtBackend

    conn = LibvirtBackend().conn
    return {m["name"]: conn.lookupByName(m["domain"]) for m in machines}


if __name__ == "__main__":
    sys.exit(main())
