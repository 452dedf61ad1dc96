"""The Kubernetes fault scenarios: wall time by phase and the measured recovery waits.

    .venv/bin/python benchmarks/kubeadm_faults.py [SCENARIO ...]        # runs each (default: flannel-no-brnetfilter)
    .venv/bin/python benchmarks/kubeadm_faults.py --runs RUN_DIR ...     # reads finished runs instead

TCG slows everything, so absolute seconds are not comparable with the course
notes' hardware; the ratios within one run are. For flannel-no-brnetfilter the
seed figures are Ready 8 s after the CNI and 74 s of extra CrashLoopBackOff
wait after the fix: a ratio of 9.25. Printed, nothing asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from tempfile import TemporaryDirectory

SEED_READY_S, SEED_CRASHLOOP_S = 8.0, 74.0


def _span(item: dict):
    return item["finished_at"] - item["started_at"] if item.get("finished_at") and item.get("started_at") else None


def _s(value) -> str:
    return f"{value:8.1f} s" if isinstance(value, (int, float)) else f"{str(value):>10}"


def summarize(run: dict) -> None:
    name = run["scenario"]["name"]
    print(f"{name}: verdict {run['verdict']['result']}, wall {_s(_span(run)).strip()}")
    for p in run["phases"]:
        print(f"  {p['name']:<12} {p['status']:<8} {_s(_span(p))}")
    for s in run["steps"]:
        if s["name"] in ("kubeadm init", "kubeadm join", "kubeadm reset"):
            print(f"  step {s['name']:<13} exit {s['exit_code']:<3} {_s(s['duration'])}")
    facts = run.get("facts", {})
    for k, v in facts.items():
        print(f"  fact {k:<22} {v}")
    ready = next((o["after"] for o in run["observations"] if o["check"] in ("both-nodes-ready", "nodes-ready-anyway")
                  and o["met"]), None)
    wait = facts.get("crashloop_wait_s")
    if isinstance(ready, (int, float)) and ready > 0 and isinstance(wait, (int, float)):
        print(f"  ratio: fix->flannel Running / CNI->Ready = {wait / ready:.2f} "
              f"(seed: {SEED_CRASHLOOP_S:.0f} s / {SEED_READY_S:.0f} s = {SEED_CRASHLOOP_S / SEED_READY_S:.2f})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("scenarios", nargs="*", default=["flannel-no-brnetfilter"])
    ap.add_argument("--runs", nargs="+", metavar="RUN_DIR", help="finished run folders to read instead of running")
    args = ap.parse_args()
    if args.runs:
        for d in args.runs:
            summarize(json.loads((Path(d) / "run.json").read_text()))
        return
    from harness import host, signals
    from harness.progress import Progress
    from harness.scenario.engine import Engine, Options
    from harness.scenario.labs import BackendLabs
    from harness.scenario.files import find
    from harness.scenario.load import load

    host.prepare(log=lambda m: None)
    with TemporaryDirectory() as runs:
        for name in args.scenarios:
            result = Engine(load(find(name)), Options(runs_root=Path(runs)), BackendLabs(), Progress()).run()
            signals.stop_if_signalled()  # it tore its lab down; make nothing more
            summarize(json.loads((result.directory / "run.json").read_text()))


if __name__ == "__main__":
    from harness import signals

    sys.exit(signals.run(main))
