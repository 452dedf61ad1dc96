"""Where an evidence book's time went, read from its run folders (nothing runs here).

    .venv/bin/python benchmarks/book.py BOOK_FOLDER [BOOK_FOLDER ...]
    .venv/bin/python benchmarks/book.py BEFORE AFTER    # and what changed between two books

A book folder is what `invoke evidence --out` wrote: book.json, runs/<n>/matrix.json and each
run's run.json. Printed for each book: its wall time; the time each phase took, summed over its
runs and per scenario; and the same time by kind of wait:

    lab up or restored   prepare: a lab made and booted, or a pooled one restored, and facts read
    guest rebooting      a recovery's reboot or power cycle, until SSH answers again
    installer            the install phase's commands (kubeadm, kubespray, the CNI)
    probe polling        a check polled until it held (`within`), or to its deadline
    back-off timer       the same, for a check that waits out a CrashLoopBackOff
    probe reads          a check read once
    commands             every other command on a guest (faults armed, recoveries)
    kubelab between      a phase's time no command or check accounts for (kubelab's own work)
    around the run       the matrix's time for a run outside its run.json (process start, a pool's first boot)
    nothing running      the book's wall time while no run of it was running (waves, scheduling)

Ratios are of the book's summed run time, measured in the runs themselves; nothing is asserted
(these hosts are shared and noisy). Then what the guests' CPU was doing, per phase, where the runs
recorded it (each phase's `guest_cpu_s`, libvirt's CPU time of each machine's emulator): CPU
seconds, and the host cores they kept busy on average against the host's cores; from them the
least wall time the guests' work alone needs on the host's cores (the book's CPU floor). Given two
books (before, after), a table of what changed between them follows.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

PHASES = ("prepare", "arm", "armed-check", "install", "expect", "recover", "verify", "collect", "teardown")
KINDS = ("lab up or restored", "guest rebooting", "installer", "probe polling", "back-off timer", "probe reads",
         "commands", "kubelab between", "around the run", "nothing running")


def _span(item: dict) -> float:
    return max(0.0, (item.get("finished_at") or 0) - (item.get("started_at") or 0))


def _check_kind(o: dict) -> str:
    said = f"{o.get('expected', '')} {o.get('matched', '')} {o.get('check', '')}".lower()
    if "crashloopbackoff" in said or "backoff" in said:
        return "back-off timer"
    return "probe polling" if (o.get("within") or 0) > 0 else "probe reads"


def _step_kind(step: dict) -> str:
    if step["phase"] == "install":
        return "installer"
    name = (step.get("name") or "").lower()
    return "guest rebooting" if "reboot" in name or "power" in name else "commands"


def run_breakdown(run: dict) -> tuple[dict[str, float], dict[str, float]]:
    """({phase: seconds}, {kind: seconds}) of one run.json; the kinds add up to the phases' sum."""
    phases = {p["name"]: _span(p) for p in run["phases"]}
    kinds: dict[str, float] = defaultdict(float)
    for phase in run["phases"]:
        total = _span(phase)
        if phase["name"] == "prepare":
            kinds["lab up or restored"] += total
            continue
        # each command and each check: from the end of what came before it in the phase to its own end
        items = [(s["started_at"] + (s.get("duration") or 0), _step_kind(s)) for s in run["steps"]
                 if s["phase"] == phase["name"] and s.get("started_at")]
        items += [(o["at"], _check_kind(o)) for o in run["observations"]
                  if o.get("phase") == phase["name"] and o.get("at") and o.get("kind") != "finding"]
        mark, counted = phase["started_at"], 0.0
        for end, kind in sorted(items):
            end = min(end, phase["started_at"] + total)
            took = max(0.0, end - mark)
            kinds[kind] += took
            counted += took
            mark = max(mark, end)
        kinds["kubelab between"] += max(0.0, total - counted)
    return phases, dict(kinds)


def guest_cpu(run: dict) -> dict[str, tuple[float, float]]:
    """{phase: (wall seconds, guest CPU seconds)} of the phases that recorded their guests' CPU."""
    return {p["name"]: (_span(p), sum(p["guest_cpu_s"].values())) for p in run["phases"] if p.get("guest_cpu_s")}


def host_idle(run: dict) -> dict[str, tuple[float, float]]:
    """{phase: (host busy CPU seconds, host idle CPU seconds)} of the phases that recorded them."""
    return {p["name"]: (p["host_cpu_s"]["busy"], p["host_cpu_s"]["idle"]) for p in run["phases"] if p.get("host_cpu_s")}


def _union(intervals: list[tuple[float, float]]) -> float:
    out, end = 0.0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            out += b - a
            end = b
        elif b > end:
            out += b - end
            end = b
    return out


def book_breakdown(folder: Path) -> dict:
    book = json.loads((folder / "book.json").read_text())
    by_phase: dict[str, float] = defaultdict(float)
    by_kind: dict[str, float] = defaultdict(float)
    per_scenario: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    intervals, runs, cores = [], 0, set()
    cpu: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])  # phase: [wall, guest CPU]
    idle: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])  # phase: [host busy, host idle]
    for matrix_file in sorted(folder.glob("runs/*/matrix.json")):
        matrix = json.loads(matrix_file.read_text())
        for cell in matrix["cells"]:
            for name, entry in cell["scenarios"].items():
                if not entry.get("run_dir"):
                    continue
                run = json.loads((matrix_file.parent / entry["run_dir"]).with_name("run.json").read_text())
                runs += 1
                cores.add(run.get("host", {}).get("cores"))
                for p, (wall_s, cpu_s) in guest_cpu(run).items():
                    cpu[p][0] += wall_s
                    cpu[p][1] += cpu_s
                for p, (busy_s, idle_s) in host_idle(run).items():
                    idle[p][0] += busy_s
                    idle[p][1] += idle_s
                phases, kinds = run_breakdown(run)
                inside = _span(run)
                kinds["around the run"] = max(0.0, (entry.get("seconds") or inside) - inside)
                intervals.append((run["started_at"], run.get("finished_at") or run["started_at"]))
                for p, s in phases.items():
                    by_phase[p] += s
                    per_scenario[name][p] += s
                for k, s in kinds.items():
                    by_kind[k] += s
                per_scenario[name]["total"] += (entry.get("seconds") or inside)
    wall = book.get("wall_s") or 0.0
    by_kind["nothing running"] = max(0.0, wall - _union(intervals))
    return {"wall": wall, "runs": runs, "by_phase": by_phase, "by_kind": by_kind, "per_scenario": per_scenario,
            "guest_cpu": dict(cpu), "host_cpu": dict(idle), "host_cores": ", ".join(str(c) for c in sorted(cores - {None}, key=str)) or "?"}


def report(folder: Path, b: dict) -> str:
    summed = sum(b["by_phase"].values()) or 1.0
    lines = [f"book {folder}: {b['wall']:.0f} s wall ({b['wall'] / 60:.1f} min), {b['runs']} runs, "
             f"{summed:.0f} s of runs summed", "", "by phase (summed over the runs)      s      share"]
    lines += [f"  {p:<30} {b['by_phase'].get(p, 0.0):8.0f}  {b['by_phase'].get(p, 0.0) / summed:6.1%}" for p in PHASES]
    lines += ["", "by kind of wait                      s      share of the runs"]
    for k in KINDS:
        s = b["by_kind"].get(k, 0.0)
        share = "(of the wall)" if k == "nothing running" else f"{s / summed:6.1%}"
        lines.append(f"  {k:<30} {s:8.0f}  {share}")
    lines += ["", "per scenario (s): " + "  ".join(p[:7] for p in PHASES) + "  total"]
    for name, per in sorted(b["per_scenario"].items(), key=lambda kv: -kv[1]["total"]):
        lines.append(f"  {name:<28}" + "".join(f"{per.get(p, 0.0):8.0f}" for p in PHASES) + f"{per['total']:8.0f}")
    lines += [""] + cpu_lines(b) + floor_lines(b)
    return "\n".join(lines)


def cpu_floor(b: dict) -> dict | None:
    """The guests' CPU, scaled from the phases that recorded it to all the runs' summed time, over
    the host's cores: no schedule can finish the book's guest work in less wall time than that."""
    wall_s = sum(w for w, _ in b["guest_cpu"].values())
    cpu_s = sum(c for _, c in b["guest_cpu"].values())
    summed = sum(b["by_phase"].values())
    if not wall_s or not summed or not str(b["host_cores"]).isdigit():
        return None
    estimated = cpu_s / wall_s * summed
    return {"recorded_cpu_s": cpu_s, "recorded_wall_s": wall_s, "summed_s": summed, "cpu_s": estimated,
            "cores": int(b["host_cores"]), "floor_s": estimated / int(b["host_cores"])}


def floor_lines(b: dict) -> list[str]:
    f = cpu_floor(b)
    if not f:
        return []
    return ["", f"CPU floor: the guests used {f['recorded_cpu_s']:.0f} CPU s in {f['recorded_wall_s']:.0f} s of "
                f"recorded phases ({f['recorded_wall_s'] / f['summed_s']:.0%} of the runs' {f['summed_s']:.0f} s); "
                f"at that rate all the runs need about {f['cpu_s']:.0f} CPU s, so at least {f['floor_s']:.0f} s "
                f"({f['floor_s'] / 60:.1f} min) of wall on {f['cores']} cores, against the book's "
                f"{b['wall']:.0f} s ({b['wall'] / 60:.1f} min)"]


def _row(label: str, before: float, after: float) -> str:
    change = f"{(after - before) / before:+7.1%}" if before else f"{'-':>7}"
    return f"  {label:<30} {before:8.0f} {after:8.0f} {after - before:+8.0f}  {change}"


def compare(before: dict, after: dict) -> str:
    """Before and after, side by side: the wall, each phase, each kind of wait and each scenario."""
    lines = [f"{'what changed':<32} {'before':>8} {'after':>8} {'s':>8}  {'change':>7}",
             _row("book wall", before["wall"], after["wall"])]
    floors = cpu_floor(before), cpu_floor(after)
    if all(floors):
        lines.append(_row("CPU floor", floors[0]["floor_s"], floors[1]["floor_s"]))
    lines.append("by phase")
    lines += [_row(p, before["by_phase"].get(p, 0.0), after["by_phase"].get(p, 0.0)) for p in PHASES]
    lines.append("by kind of wait")
    lines += [_row(k, before["by_kind"].get(k, 0.0), after["by_kind"].get(k, 0.0)) for k in KINDS]
    lines.append("per scenario")
    names = sorted(set(before["per_scenario"]) | set(after["per_scenario"]),
                   key=lambda n: -before["per_scenario"].get(n, {}).get("total", 0.0))
    lines += [_row(n, before["per_scenario"].get(n, {}).get("total", 0.0),
                   after["per_scenario"].get(n, {}).get("total", 0.0)) for n in names]
    return "\n".join(lines)


def cpu_lines(b: dict) -> list[str]:
    """Per phase: the guests' CPU as host cores kept busy, and the host's idle share meanwhile
    (whatever else ran: a cell beside, the harness); summed over the runs, so a phase in runs that
    overlapped counts the host's time once per run."""
    if not b["guest_cpu"] and not b.get("host_cpu"):
        return ["guests' CPU: not in these runs' records (kept from this kubelab on)"]
    lines = [f"CPU by phase (phases that recorded it)  wall s  guest CPU s  cores busy  host idle "
             f"(host: {b['host_cores']} cores)"]
    for p in PHASES:
        wall_s, cpu_s = b["guest_cpu"].get(p, (0.0, 0.0))
        busy_s, idle_s = b.get("host_cpu", {}).get(p, (0.0, 0.0))
        if not wall_s and not busy_s + idle_s:
            continue
        cores = f"{cpu_s / wall_s:10.2f}" if wall_s else f"{'-':>10}"
        share = f"{idle_s / (busy_s + idle_s):9.1%}" if busy_s + idle_s else f"{'-':>9}"
        lines.append(f"  {p:<36} {wall_s:8.0f}  {cpu_s:11.0f}  {cores}  {share}")
    return lines


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    books = []
    for arg in argv:
        folder = Path(arg)
        if not (folder / "book.json").is_file():
            print(f"{folder}: no book.json; give a folder `invoke evidence --out` wrote", file=sys.stderr)
            return 2
        books.append(book_breakdown(folder))
        print(report(folder, books[-1]))
        print()
    if len(books) == 2:
        print(compare(*books))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
