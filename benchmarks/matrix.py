"""Matrix wall time against the sum of its scenario runs one after another.

    .venv/bin/python benchmarks/matrix.py [--scenario containerd-dropin-merge] [--suite bookworm,trixie,sid]
    .venv/bin/python benchmarks/matrix.py --read MATRIX_DIR     # a finished matrix instead (a test's, say)

Runs `invoke matrix` once (cells side by side as admission allows) and prints,
from its matrix.json, the wall time, the sum of the runs' own times, and their
ratio (above 1: running cells side by side paid off; under TCG each run also
gets slower, which the per-run figures show).
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", default="containerd-dropin-merge")
    ap.add_argument("--suite", default="bookworm,trixie,sid")
    ap.add_argument("--kubernetes", default="")
    ap.add_argument("--max-vcpus", default="")
    ap.add_argument("--unsupported", action="store_true", help="also run pairs upstream does not support")
    ap.add_argument("--read", metavar="MATRIX_DIR", help="report a finished matrix; run nothing")
    a = ap.parse_args()
    if a.read:
        out, code = Path(a.read), 0
    else:
        out = Path(tempfile.mkdtemp(prefix="kubelab-matrix-bench-"))
        cmd = [str(Path(sys.executable).with_name("invoke")), "matrix", "--scenario", a.scenario, "--suite", a.suite,
               "--out", str(out)]
        cmd += ["--kubernetes", a.kubernetes] if a.kubernetes else []
        cmd += ["--max-vcpus", a.max_vcpus] if a.max_vcpus else []
        cmd += ["--unsupported"] if a.unsupported else []
        code = subprocess.call(cmd, cwd=ROOT)
    matrix = json.loads((out / "matrix.json").read_text())
    runs = [(c["id"], n, r) for c in matrix["cells"] for n, r in c["scenarios"].items() if "seconds" in r]
    for cid, name, r in runs:
        print(f"{cid:<20} {name:<28} {r['status']:<8} {r['seconds']:8.1f} s")
    total = sum(r["seconds"] for _, _, r in runs)
    print(f"matrix wall {matrix['wall_s']:.1f} s; runs one after another {total:.1f} s; "
          f"ratio {total / matrix['wall_s']:.2f} (up to {matrix['concurrent_cells']} cells side by side)")
    return code


if __name__ == "__main__":
    sys.exit(main())
