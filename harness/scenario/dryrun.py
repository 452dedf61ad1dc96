"""`--dry-run`: every command a run would send to every machine, in order.

Nothing is created. Machine facts come from the suite's image manifest when
the image is built (so version-dependent commands are exact); otherwise
version-dependent checks are listed with their condition.
"""

from __future__ import annotations

from ..faults import make as make_fault
from ..images import store
from ..images.recipe import Recipe
from ..probes import make as make_probe
from ..probes.facts import COMMAND as FACTS_COMMAND
from .checks import applies
from .engine import targets
from .model import Check, Scenario


def image_facts(suite: str) -> dict | None:
    image = store.find(Recipe.debian(suite))
    if image is None:
        return None
    v = image.versions
    return {"os": v["os"], "kernel": v["kernel"], "containerd": v["containerd"], "runc": v["runc"],
            "systemd": v["systemd"], "pid1": "systemd", "cgroupfs": "cgroup2fs"}


def plan_lines(scenario: Scenario, suite: str, control: bool = False) -> list[str]:
    facts = image_facts(suite)
    machines = [m.name for m in scenario.lab.machines]
    known = facts or {}
    out = [f"# scenario {scenario.name} ({'control' if control else 'fault'} run) on {suite}"]
    out.append("# machines: " + ", ".join(f"{m.name} ({m.cpus} vCPU, {m.memory} MiB)" for m in scenario.lab.machines))
    out.append("# facts from the image manifest: " + (
        ", ".join(f"{k} {facts[k]}" for k in ("containerd", "runc", "kernel")) if facts
        else "none (image not built yet): version-dependent steps are shown with their condition"))

    def emit(phase, machine, command, note=""):
        out.append(f"[{phase}] {machine}: {command}" + (f"    # {note}" if note else ""))

    def checks(phase, items: tuple[Check, ...]):
        for c in items:
            probe = make_probe(c.probe.kind, c.probe.args)
            for m in targets(c.target, machines):
                if facts and not applies(c, known):
                    out.append(f"[{phase}] {m}: (skipped: {c.name} applies to " + ", ".join(f"{k} {v}" for k, v in c.versions.items()) + ")")
                    continue
                cond = (" when " + ", ".join(f"{k} {v}" for k, v in c.versions.items())) if c.versions and not facts else ""
                expect = c.expected() or "record the value"
                emit(phase, m, probe.command(), f"{c.name}: {expect}{cond}" + (f", within {c.within:g}s" if c.within else ""))

    for m in machines:
        emit("prepare", m, FACTS_COMMAND, "facts: versions")
    faults = [(m, make_fault(f.kind, f.params, known)) for f in scenario.faults for m in targets(f.target, machines)]
    if not facts and faults:
        out.append(f"# fault commands below assume containerd 1.x; `invoke images.build --suite {suite}` makes them exact")
    if not control:
        for m, fault in faults:
            for command in fault.inject():
                emit("arm", m, command, fault.kind)
        for m, fault in faults:
            for c in fault.armed_checks():
                emit("armed-check", m, make_probe(c.probe.kind, c.probe.args).command(), f"{c.name}: {c.expected()}")
        out.append(f"[install] (skipped: install track `{scenario.install}`)")
        checks("expect", scenario.expect)
    checks("observe", scenario.observe)
    for step in scenario.recover:
        for m in targets(step.target, machines):
            if step.action == "run":
                emit("recover", m, step.run, step.name)
            elif step.action == "reboot":
                emit("recover", m, "systemctl reboot", f"{step.name}: then wait for a new boot id")
            else:
                for fm, fault in faults:
                    if fm == m:
                        for command in fault.recover():
                            emit("recover", m, command, f"{step.name}: {fault.kind}")
    checks("verify", scenario.verify)
    for ev in scenario.evidence:
        for m in targets(ev.target, machines):
            emit("collect", m, ev.command, f"evidence: {ev.kind}")
    return out
