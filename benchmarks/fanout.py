"""Snapshot fan-out: a scenario run on a cell's restored pooled lab against the same run
on a freshly booted lab, measured in one sitting.

    .venv/bin/python benchmarks/fanout.py [--scenarios br-netfilter-missing,ip-forward-off] [--suite bookworm]

Runs the same one-cell matrix twice, with fan-out and with --no-fanout, and
prints each run's wall time and, for the second and later scenarios (those
that restore the snapshot), the ratio cold / restored.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def matrix(scenarios: str, suite: str, fanout: bool) -> dict:
    out = Path(tempfile.mkdtemp(prefix="kubelab-fanout-bench-"))
    cmd = [str(Path(sys.executable).with_name("invoke")), "matrix", "--scenario", scenarios, "--suite", suite,
           "--out", str(out)] + ([] if fanout else ["--no-fanout"])
    subprocess.call(cmd, cwd=ROOT)
    [cell] = json.loads((out / "matrix.json").read_text())["cells"]
    return cell["scenarios"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenarios", default="br-netfilter-missing,ip-forward-off,swap-on")
    ap.add_argument("--suite", default="bookworm")
    a = ap.parse_args()
    names = a.scenarios.split(",")
    pooled = matrix(a.scenarios, a.suite, fanout=True)
    cold = matrix(a.scenarios, a.suite, fanout=False)
    for i, n in enumerate(names):
        p, c = pooled[n], cold[n]
        ratio = f"ratio cold/restored {c['seconds'] / p['seconds']:.2f}" if i else "(first: boots the pool)"
        print(f"{n:<26} pooled {p['seconds']:7.1f} s ({p['status']})  cold {c['seconds']:7.1f} s ({c['status']})  {ratio}")
    later = names[1:]
    if later:
        total_p = sum(pooled[n]["seconds"] for n in later)
        total_c = sum(cold[n]["seconds"] for n in later)
        print(f"second and later scenarios: restored {total_p:.1f} s, cold {total_c:.1f} s, ratio {total_c / total_p:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
