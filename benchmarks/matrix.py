"""Matrix wall time against the sum of its scenario runs one after another.

    .venv/bin/python benchmarks/matrix.py [--scenario containerd-dropin-merge] [--suite bookworm,trixie,sid]
    .venv/bin/python benchmarks/matrix.py --in-turn [...]         # also in turn: the honest gain
    .venv/bin/python benchmarks/matrix.py --read MATRIX_DIR     # a finished matrix instead (a test's, say)

Runs `invoke matrix` once (cells side by side as admission allows) and prints,
from its matrix.json, the wall time, the sum of the runs' own times, and their
ratio. That ratio overstates the gain wherever the cells slow each other down
(under TCG on few cores they do: each run's own time grows). `--in-turn` first
runs the same matrix one cell at a time (`--max-vcpus 1`: admission still lets a
lone cell in) and prints in-turn wall over side-by-side wall, both from this run.
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
    ap.add_argument("--in-turn", action="store_true", help="first run it one cell at a time, for the real gain")
    ap.add_argument("--read", metavar="MATRIX_DIR", help="report a finished matrix; run nothing")
    a = ap.parse_args()
    if a.read:
        report(json.loads((Path(a.read) / "matrix.json").read_text()), "matrix")
        return 0
    code, in_turn = 0, None
    if a.in_turn:
        code, in_turn = run(a, max_vcpus="1")
        report(in_turn, "in turn")
    side_code, side = run(a, max_vcpus=a.max_vcpus)
    report(side, "side by side")
    if in_turn:
        print(f"in turn {in_turn['wall_s']:.1f} s / side by side {side['wall_s']:.1f} s: "
              f"gain {in_turn['wall_s'] / side['wall_s']:.2f}x")
    return code or side_code


def run(a, max_vcpus: str) -> tuple[int, dict]:
    out = Path(tempfile.mkdtemp(prefix="kubelab-matrix-bench-"))
    cmd = [str(Path(sys.executable).with_name("invoke")), "matrix", "--scenario", a.scenario, "--suite", a.suite,
           "--out", str(out)]
    cmd += ["--kubernetes", a.kubernetes] if a.kubernetes else []
    cmd += ["--max-vcpus", max_vcpus] if max_vcpus else []
    cmd += ["--unsupported"] if a.unsupported else []
    code = subprocess.call(cmd, cwd=ROOT)
    return code, json.loads((out / "matrix.json").read_text())


def report(matrix: dict, label: str) -> None:
    runs = [(c["id"], n, r) for c in matrix["cells"] for n, r in c["scenarios"].items() if "seconds" in r]
    for cid, name, r in runs:
        print(f"{label}: {cid:<20} {name:<28} {r['status']:<8} {r['seconds']:8.1f} s")
    total = sum(r["seconds"] for _, _, r in runs)
    print(f"{label}: matrix wall {matrix['wall_s']:.1f} s; the runs' own times add up to {total:.1f} s; "
          f"ratio {total / matrix['wall_s']:.2f} (up to {matrix['concurrent_cells']} cells at once; "
          "overstated where they slowed each other)")


if __name__ == "__main__":
    sys.exit(main())
