"""A kubespray run, phase by phase, and its ratio to kubeadm-baseline on the same host.

    .venv/bin/python benchmarks/kubespray.py RUN_DIR [--baseline KUBEADM_RUN_DIR]

RUN_DIR: a run folder of a kubespray scenario (runs/kubespray-layer-check/<id>).
The baseline is a kubeadm-baseline run folder (the newest complete one under
runs/kubeadm-baseline when not given; make one with `invoke scenario
kubeadm-baseline`). Both are read from their run.json and step logs: nothing
runs here. Printed: the phases, each play's wall time, tasks per minute, time
by role and the slowest tasks (from the profile_tasks lines kubespray's
ansible.cfg enables), then kubespray's wall time over kubeadm's, against the
target of a one-control-plane, one-worker kubespray install here: 45 min for
kubespray's default cluster (calico, nodelocaldns, dns-autoscaler); give
--target 40 for the flannel variant's. Nothing is asserted: these hosts are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

TARGET_MIN = 45.0  # kubespray's default cluster, 1+1, on a 2-core TCG host
BANNER = re.compile(r"^(?:TASK|RUNNING HANDLER) \[(.*)\] \*+$")
RECAP = re.compile(r"^PLAY RECAP \*+$")  # its profile line ends the last task
# profile_tasks: `Saturday 05 December 2026  08:59:29 +0000 (0:00:08.866)       0:10:43.057 *****`,
# the previous task's time in brackets, then the time since the play started
PROFILE = re.compile(r"\((\d+):(\d\d):(\d\d\.\d+)\)\s+(\d+):(\d\d):(\d\d\.\d+) \*+\s*$")


def load(run_dir: Path) -> dict:
    path = run_dir / "run.json"
    if not path.is_file():
        sys.exit(f"{run_dir}: no run.json; give a run folder, e.g. runs/kubespray-layer-check/<id>")
    return json.loads(path.read_text())


def span(p: dict) -> float:
    return (p["finished_at"] - p["started_at"]) if p.get("finished_at") else 0.0


def task_times(log: str) -> list[tuple[str, float]]:
    """(task, seconds) from the profile_tasks line after each banner: a task's time is the
    next banner's `since start` minus its own."""
    starts: list[tuple[str, float]] = []
    pending = None
    for line in log.splitlines():
        b = BANNER.match(line)
        if b or RECAP.match(line):
            pending = b.group(1) if b else ""
            continue
        m = PROFILE.search(line)
        if m and pending is not None:
            h, mi, s = m.group(4), m.group(5), m.group(6)
            starts.append((pending, int(h) * 3600 + int(mi) * 60 + float(s)))
            pending = None
    return [(name, round(nxt - at, 3)) for (name, at), (_, nxt) in zip(starts, starts[1:])]


def role(task: str) -> str:
    return task.split(" : ", 1)[0] if " : " in task else "(playbook tasks)"


def baseline_dir(given: str | None) -> Path | None:
    if given:
        return Path(given)
    runs = sorted(Path("runs/kubeadm-baseline").glob("*/run.json"), reverse=True)
    for r in runs:
        if json.loads(r.read_text()).get("status") == "complete":
            return r.parent
    return None


def result(run: dict) -> str:
    return run.get("verdict", {}).get("result", run.get("status"))


def target_verdict(run: dict, wall: float, target_min: float) -> str:
    """Met or not, for a run whose scenario was met: a run that stopped early is no measure of the target."""
    if result(run) != "met":
        return f"no figure: the run ended {result(run)} after {wall / 60:.1f} min"
    return f"{'met' if wall / 60 < target_min else 'not met'} ({wall / 60:.1f} min)"


def lab_shape(run: dict) -> str:
    """"1+1" for one control plane and one worker (the shape the target is for), else the count."""
    roles = [v.get("role") for v in run["machines"].values()]
    planes, workers = roles.count("control-plane"), roles.count("worker")
    return f"{planes}+{workers}" if workers else f"{planes} machine(s), no worker"


def target_line(run: dict, wall: float, target_min: float) -> str:
    shape = lab_shape(run)
    if shape != "1+1":
        return f"target: none for this lab ({shape}); the {target_min:.0f} min target is a 1+1 lab's"
    return f"target: kubespray 1+1 under {target_min:.0f} min here: {target_verdict(run, wall, target_min)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir")
    ap.add_argument("--baseline", help="a kubeadm-baseline run folder")
    ap.add_argument("--target", type=float, default=TARGET_MIN, metavar="MIN",
                    help=f"the wall-time target in minutes (default {TARGET_MIN:.0f}: kubespray's default cluster)")
    args = ap.parse_args()
    run_dir = Path(args.run_dir)
    run = load(run_dir)
    wall = run["finished_at"] - run["started_at"] if run.get("finished_at") else 0.0
    kubespray = (run.get("install") or {}).get("kubespray", {})
    print(f"{run['scenario']['name']}: {result(run)}, wall {wall:.0f} s "
          f"({wall / 60:.1f} min), kubespray {kubespray.get('version', '?')} {kubespray.get('commit', '')[:12]}, "
          f"{run['lab'].get('accel', '?')}")
    for p in run["phases"]:
        if p.get("status") != "skipped":
            print(f"  {p['name']:<12} {span(p):8.1f} s  {p.get('status', '')}")
    for step in (s for s in run["steps"] if s.get("ansible")):
        a = step["ansible"]
        print(f"  {step['name']} ({step['phase']}): {a['seconds']:.0f} s, {a['tasks']} tasks, "
              f"{a['tasks_per_minute']} tasks/min, exit {step.get('exit_code')}")
        times = task_times((run_dir / step["log"]).read_text(errors="replace")) if step.get("log") else []
        by_role: dict[str, float] = defaultdict(float)
        for name, seconds in times:
            by_role[role(name)] += seconds
        for name, seconds in sorted(by_role.items(), key=lambda kv: -kv[1])[:12]:
            print(f"    {seconds:7.1f} s  {name}")
        for name, seconds in sorted(times, key=lambda t: -t[1])[:10]:
            print(f"    slowest: {seconds:6.1f} s  {name}")
    found = baseline_dir(args.baseline)
    if found is None:
        print("  no kubeadm-baseline run to compare with: `invoke scenario kubeadm-baseline`, or --baseline DIR")
        return
    base = load(found)
    base_wall = base["finished_at"] - base["started_at"]
    print(f"kubeadm-baseline ({found}): wall {base_wall:.0f} s, {base['lab'].get('accel', '?')}")
    shape = lambda r: sorted((m, v.get("role")) for m, v in r["machines"].items())  # noqa: E731
    if shape(base) != shape(run):
        print(f"  machines differ: {shape(run)} against {shape(base)}")
    print(f"  ratio kubespray / kubeadm wall: {wall / base_wall:.2f}")
    install = lambda r: sum(span(p) for p in r["phases"] if p["name"] in ("install", "recover"))  # noqa: E731
    if install(base):
        print(f"  ratio of install time (install + recover phases): {install(run) / install(base):.2f}")
    print(f"  {target_line(run, wall, args.target)}")


if __name__ == "__main__":
    main()
