"""Run a matrix: cells side by side as admission allows, scenarios in turn inside each.

Every scenario run is `invoke scenario` in its own process (the one sequencer,
its own teardown and report), with its runs folder under the cell's folder and
its output in a log beside it. Exit 0 is met, 1 is FAIL; 2 (bad input,
harness, infrastructure) is retried once, then INFRA. A failing cell never
stops the others. The harness deadline stops what still runs (SIGTERM: the
scenario tears down and writes its incomplete report) and leaves the rest NOT
RUN, so a CI job's own timeout never hits first.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths, provenance
from ..progress import Progress
from ..tracks import track_of
from . import report, schedule
from .cells import HOST

TERM_GRACE_S = 300  # a stopped scenario's teardown (machines, networks, servers)


def estimate_min(scenario) -> int:
    """Rough wall time of a scenario under TCG on a 2-core host, for the plan only (each track's figure)."""
    return track_of(scenario.install).estimate_min(len(scenario.lab.machines))


def _figures() -> str:
    from ..tracks import TRACKS

    return ", ".join(f"{'host' if not t.installs_kubernetes else name} {t.estimate_min(1)}/{t.estimate_min(2)} min"
                     for name, t in TRACKS.items())


@dataclass
class Options:
    out: Path
    deadline_min: float | None = None
    max_vcpus: int = 4
    memory_budget_mib: int = 0
    resume: bool = False
    rerun: frozenset = frozenset()  # with resume: scenarios run again even where they finished
    run_unsupported: bool = False
    command: object = None  # (scenario name, cell) -> argv; default `invoke scenario` (tests give a stand-in)
    fanout: bool = False  # one pooled lab per lab shape in a cell, restored from its snapshot per scenario


@dataclass
class _State:
    matrix: dict
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    stop_reason: str = ""
    children: set = field(default_factory=set)
    pools: set = field(default_factory=set)  # pooled labs alive now (removed by their cell, or at the end)
    cells_now: int = 0  # cells running now
    peak: int = 1  # most cells running at once (matrix.json's concurrent_cells)
    side_by_side: dict = field(default_factory=dict)  # (cell, scenario) running -> most cells running meanwhile

    def cells_changed(self, running: int) -> None:
        with self.lock:
            self.cells_now = running
            self.peak = max(self.peak, running)
            for key, most in self.side_by_side.items():
                self.side_by_side[key] = max(most, running)


def plan_lines(cells, scenarios: dict, opts: Options) -> list[str]:
    runnable = [c for c in cells if c.supported or opts.run_unsupported]
    needs = [schedule.cell_need(c, scenarios) for c in runnable]
    lines = [f"matrix: {len(cells)} cell(s) ({len(cells) - len(runnable)} not run: unsupported), "
             f"{sum(len(c.scenarios) for c in runnable)} scenario runs; memory budget {opts.memory_budget_mib} MiB "
             f"(MemTotal less {schedule.HOST_RESERVE_MIB} MiB), vCPU cap {opts.max_vcpus}"]
    for c in cells:
        row = "host-only" if c.kubernetes == HOST else f"Kubernetes {c.kubernetes}"
        if not c.supported and not opts.run_unsupported:
            lines.append(f"  {c.id:<22} {row} x {c.column}: UNSUPPORTED, not run ({c.unsupported_why})")
            continue
        need = schedule.cell_need(c, scenarios)
        minutes = sum(estimate_min(scenarios[n]) for n in c.scenarios)
        flag = " (unsupported pair, run on demand)" if not c.supported else ""
        lines.append(f"  {c.id:<22} {row} x {c.column}{flag}: {', '.join(c.scenarios)}; "
                     f"{need.memory_mib} MiB, {need.vcpus} vCPU, ~{minutes} min")
        if schedule.too_big(need, opts.memory_budget_mib):
            lines.append(f"    needs more memory than the budget: it runs alone, and lab.up refuses it if the host cannot hold it")
        cores = os.cpu_count() or 1
        wide = max((m.cpus for n in c.scenarios for m in scenarios[n].lab.machines), default=0)
        if wide > cores:
            lines.append(f"    a machine asks for {wide} vCPUs and this host has {cores} core(s): "
                         "its runs are refused when they start (INFRA)")
    groups = schedule.waves(needs, opts.memory_budget_mib, opts.max_vcpus)
    total = sum(max(sum(estimate_min(scenarios[n]) for n in runnable[i].scenarios) for i in g) for g in groups)
    lines.append(f"estimate: ~{total} min in {len(groups)} wave(s) of at most {max((len(g) for g in groups), default=0)} "
                 f"cells side by side (per-scenario figures under TCG, for 1/2 machines: {_figures()})")
    if opts.fanout:
        lines.append("fan-out: in each cell, scenarios that ask for the same lab share one, booted once and "
                     "snapshotted before any fault or install; each run restores that snapshot")
    if opts.deadline_min:
        lines.append(f"deadline: {opts.deadline_min:g} min; what runs then is stopped and torn down, the rest is NOT RUN")
    return lines


def _latest_record(folder: Path) -> tuple[Path, dict] | None:
    found = sorted(folder.glob("*/run.json"))
    if not found:
        return None
    try:
        return found[-1].parent, json.loads(found[-1].read_text())
    except ValueError:
        return None


def _scenario_cmd(name: str, cell) -> list[str]:
    cmd = [str(Path(sys.executable).with_name("invoke")), "scenario", name, "--suite", cell.suite]
    if cell.kubernetes != HOST:
        cmd += ["--kubernetes", cell.kubernetes]
    if cell.built:
        cmd += ["--containerd", cell.built]
    return cmd


def in_cell(scenario, cell):
    """The scenario as the cell runs it: its Kubernetes row and containerd column."""
    if cell.kubernetes != HOST:
        scenario = scenario.with_kubernetes(cell.kubernetes)
    return scenario.with_containerd(cell.built) if cell.built else scenario


def _run_once(state: _State, cmd: list[str], folder: Path, log: Path, deadline: float | None) -> int | None:
    """The scenario's exit code, or None when the matrix stopped it."""
    env = dict(os.environ, KUBELAB_RUNS=str(folder))
    with log.open("a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        proc = subprocess.Popen(cmd, cwd=paths.project_root(), stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)  # the matrix forwards stop signals itself
        with state.lock:
            state.children.add(proc)
        try:
            while proc.poll() is None:
                if state.stop.is_set() or (deadline and time.time() > deadline):
                    if not state.stop.is_set():
                        state.stop_reason = state.stop_reason or "matrix deadline"
                        state.stop.set()
                    proc.send_signal(signal.SIGTERM)
                    try:
                        proc.wait(TERM_GRACE_S)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                    return None
                time.sleep(1)
            return proc.returncode
        finally:
            with state.lock:
                state.children.discard(proc)


def _pool(state: _State, pools: dict, scenario, cell, progress) -> str:
    """The cell's pooled lab for this scenario's lab shape, made (and snapshotted) on first use."""
    from ..scenario import labs

    spec = labs.lab_spec(scenario, cell.suite, f"pool-{secrets.token_hex(3)}")
    key = labs.shape(spec)
    if key not in pools:
        progress.note(f"{cell.id}: booting pooled lab {spec.name} for {', '.join(m.name for m in spec.machines)}")
        lab = labs.make_pool_lab(spec, progress)
        pools[key] = lab.name
        with state.lock:
            state.pools.add(lab.name)
    return pools[key]


def _shared(cell, scenarios: dict, scenario) -> bool:
    """Does another scenario of this cell ask for the same lab? Only then is a pool worth its snapshot."""
    from ..scenario import labs

    def key(s):
        return labs.shape(labs.lab_spec(s, cell.suite, "x"))

    return sum(1 for n in cell.scenarios if key(in_cell(scenarios[n], cell)) == key(scenario)) > 1


def _down_quietly(lab_name: str, progress) -> None:
    """A pooled lab removed; a failure is said with its fix and does not stop the matrix."""
    from .. import lifecycle
    from ..errors import HarnessError

    try:
        lifecycle.down(lab_name, progress)
    except HarnessError as exc:
        progress.note(f"pooled lab {lab_name}: teardown failed ({exc}); `invoke lab.down -n {lab_name}`")


def _drop_pool(state: _State, pools: dict, lab_name: str, progress) -> None:
    for key, name in list(pools.items()):
        if name == lab_name:
            del pools[key]
    _down_quietly(lab_name, progress)
    with state.lock:
        state.pools.discard(lab_name)


def _run_cell(state: _State, cell, scenarios: dict, opts: Options, progress: Progress, deadline: float | None) -> None:
    entry = next(c for c in state.matrix["cells"] if c["id"] == cell.id)
    pools: dict = {}
    try:
        for name in cell.scenarios:
            _run_scenario(state, cell, name, scenarios, opts, progress, deadline, entry, pools)
    finally:
        for lab_name in list(pools.values()):
            _drop_pool(state, pools, lab_name, progress)


def _run_scenario(state, cell, name, scenarios, opts, progress, deadline, entry, pools) -> None:
    from ..errors import HarnessError

    result = entry["scenarios"][name]
    if opts.resume and result["status"] in (report.MET, report.FAIL):
        if name not in opts.rerun:
            progress.note(f"{cell.id} {name}: kept from the previous run ({result['status']})")
            return
        kept = f" in {Path(result['run_dir']).parent}" if result.get("run_dir") else ""
        progress.note(f"{cell.id} {name}: run again (--rerun); the previous run ({result['status']}) stays{kept}")
    if state.stop.is_set():
        result.update(status=report.NOT_RUN, reason=state.stop_reason)
        return
    folder = opts.out / "cells" / cell.id
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"{name}.log"
    if result.get("run_dir") and log.exists():  # a rerun: the replaced run's console stays beside its folder
        log.rename(folder / f"{name}.{Path(result['run_dir']).parent.name}.log")
    log_rel = str(log.relative_to(opts.out))
    started = time.time()
    attempts, code, pooled, note = 0, None, None, ""
    scenario = in_cell(scenarios[name], cell)
    progress.note(f"{cell.id} {name}: started (log {log})")
    with state.lock:
        state.side_by_side[(cell.id, name)] = max(state.cells_now, 1)
        result.clear()
        result.update(status=report.RUNNING, log=log_rel)
        report.save(state.matrix, opts.out)
    while attempts < 2 and not state.stop.is_set():
        attempts += 1
        cmd = list((opts.command or _scenario_cmd)(name, cell))
        if track_of(scenario.install).takes_checkout and scenario.install.kubespray:
            cmd += ["--kubespray", scenario.install.kubespray]  # the checkout the matrix resolved
        if opts.fanout and _shared(cell, scenarios, scenario):
            try:
                pooled = _pool(state, pools, scenario, cell, progress)
            except HarnessError as exc:
                code, note = 2, f"pooled lab: {exc}"
                progress.note(f"{cell.id} {name}: {note}")
                continue
            cmd += ["--lab", pooled]
        code = _run_once(state, cmd, folder, log, deadline)
        if code != 2:
            break
        progress.note(f"{cell.id} {name}: exit 2 (infrastructure) on attempt {attempts}"
                      + ("; retrying once" if attempts < 2 else ""))
        if pooled:  # the pool may be what broke: the retry (and the next scenario) gets a fresh one
            _drop_pool(state, pools, pooled, progress)
            pooled = None
    status = {0: report.MET, 1: report.FAIL}.get(code, report.INFRA)
    with state.lock:  # what its timings were measured beside
        beside = state.side_by_side.pop((cell.id, name), 1)
    update = {"status": status, "exit_code": code, "attempts": attempts, "seconds": round(time.time() - started, 1),
              "log": log_rel, "pooled_lab": pooled or "", "cells_side_by_side": beside}
    if code is None:
        update["reason"] = f"stopped: {state.stop_reason}"
    elif note:
        update["reason"] = note
    latest = _latest_record(folder / name)
    if latest:
        run_dir, record = latest
        update["run_dir"] = str((run_dir / "report.md").relative_to(opts.out))
        update["facts"] = record.get("facts", {}) if status == report.MET else {}
        versions = [m.get("versions", {}).get("containerd") for m in record.get("machines", {}).values()]
        if versions and versions[0]:
            update["containerd_observed"] = versions[0]
        update["verdict"] = record.get("verdict", {})
    with state.lock:
        result.clear()
        result.update(update)
        report.save(state.matrix, opts.out)
    progress.note(f"{cell.id} {name}: {status} in {update['seconds']:.0f}s")


def run(cells, scenarios: dict, opts: Options, axes: dict, progress: Progress | None = None) -> dict:
    progress = progress or Progress()
    previous = None
    if opts.resume and (opts.out / "matrix.json").exists():
        previous = report.load(opts.out / "matrix.json")
    matrix = report.new(axes, commit=provenance.commit(), started_at=time.time())
    for cell in cells:
        entry = report.cell_entry(cell, runs=cell.supported or opts.run_unsupported)
        old = next((c for c in previous["cells"] if c["id"] == cell.id), None) if previous else None
        for name in entry["scenarios"]:
            if old and name in old["scenarios"]:
                entry["scenarios"][name] = old["scenarios"][name]
        matrix["cells"].append(entry)
    state = _State(matrix)
    report.save(matrix, opts.out)
    deadline = time.time() + opts.deadline_min * 60 if opts.deadline_min else None
    pending = [c for c in cells if c.supported or opts.run_unsupported]
    running: dict[str, tuple[threading.Thread, schedule.Need]] = {}
    started = time.time()
    watch = progress.activity(f"matrix: {sum(len(c.scenarios) for c in pending)} scenario run(s) in "
                              f"{len(pending)} cell(s)")
    with watch:  # the matrix's own line: what runs, what waits
        try:
            while pending or running:
                for cid, (thread, _) in list(running.items()):
                    if not thread.is_alive():
                        del running[cid]
                        state.cells_changed(len(running))
                progress.update(f"running {', '.join(running) or 'none'}; {len(pending)} cell(s) waiting")
                while pending and not state.stop.is_set():
                    need = schedule.cell_need(pending[0], scenarios)
                    if not schedule.admit([n for _, n in running.values()], need, opts.memory_budget_mib, opts.max_vcpus):
                        break
                    cell = pending.pop(0)
                    thread = threading.Thread(target=_run_cell, args=(state, cell, scenarios, opts, progress, deadline),
                                              name=f"cell-{cell.id}", daemon=True)
                    running[cell.id] = (thread, need)
                    state.cells_changed(len(running))
                    thread.start()
                if state.stop.is_set() and pending:
                    for cell in pending:
                        entry = next(c for c in matrix["cells"] if c["id"] == cell.id)
                        for result in entry["scenarios"].values():
                            if result["status"] == report.NOT_RUN:
                                result["reason"] = state.stop_reason
                    pending = []
                time.sleep(0.5)
        except KeyboardInterrupt as exc:
            state.stop_reason = f"interrupted ({exc})"
            state.stop.set()
            progress.note("matrix interrupted: stopping the running scenarios, which tear down their labs")
            for thread, _ in running.values():
                thread.join(TERM_GRACE_S + 30)
            raise
        finally:
            for lab_name in list(state.pools):  # a cell thread that did not finish its teardown in time
                _down_quietly(lab_name, progress)
            with state.lock:
                matrix["concurrent_cells"] = state.peak
                matrix["wall_s"] = round(time.time() - started, 1)  # this invocation's (a resume counts its own)
                matrix["finished_at"] = time.time()
                report.save(matrix, opts.out)
    return matrix
