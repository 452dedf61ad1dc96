"""Running a scenario: prepare, arm, armed-check, install, expect, recover,
verify, collect, teardown; in that order, every step timed and recorded.

Exit codes: 0 every expectation and check met; 1 some were not; 2 the
harness or the infrastructure broke (a fault that did not take is one of
those, never a pass). A phase that errors stops the phases after it, which
are recorded as skipped with the reason; collect and teardown always run
(teardown unless --keep).
"""

from __future__ import annotations

import secrets
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import HarnessError, MachineTimeout
from ..evidence.record import RunRecord
from ..faults import make as make_fault
from ..probes import Context
from ..probes import make as make_probe
from ..probes.facts import COMMAND as FACTS_COMMAND
from ..probes.facts import parse as parse_facts
from ..progress import Progress
from ..remote.result import CommandResult
from .checks import Outcome, applies, evaluate
from .model import Check, Scenario

REBOOT_TIMEOUT = 240.0


@dataclass(frozen=True)
class Options:
    suite: str | None = None
    keep: bool = False
    control: bool = False
    runs_root: Path | None = None


@dataclass(frozen=True)
class RunResult:
    exit_code: int
    result: str
    reason: str
    directory: Path


class PhaseError(HarnessError):
    """A phase could not do its job (exit 2)."""


def targets(selector: str, machines: list[str]) -> list[str]:
    if selector == "@all":
        return list(machines)
    return [selector[1:] if selector.startswith("@") else selector]


def lab_name(scenario: str) -> str:
    stem = scenario[:14].rstrip("-")
    return f"{stem}-{secrets.token_hex(2)}"


class Engine:
    def __init__(self, scenario: Scenario, options: Options, labs, progress: Progress | None = None,
                 clock=time.monotonic, sleep=time.sleep):
        self.scenario = scenario
        self.options = options
        self.labs = labs  # provider: up(scenario, suite, name, progress) -> lab handle
        self.progress = progress or Progress()
        self.suite = options.suite or scenario.lab.suite
        self.lab = None
        self.facts: dict[str, dict] = {}
        self.faults: list[tuple[str, object]] = []  # (machine, Fault)
        self.since = 0.0
        self.failed_phase: str | None = None
        self.record: RunRecord | None = None
        self.clock, self.sleep = clock, sleep  # injectable: tests run polls and reboots on a fake clock

    # -- the run -------------------------------------------------------------
    def run(self) -> RunResult:
        mode = "control" if self.options.control else "fault"
        self.record = rec = RunRecord.create(self.scenario, mode, self.suite, self.options.runs_root)
        self.progress.note(f"scenario {self.scenario.name} ({mode}, {self.suite}): record in {rec.directory}")
        interrupted = False
        try:
            self._phase("prepare", self._prepare)
            if self.options.control:
                for p in ("arm", "armed-check"):
                    rec.phase_skipped(p, "control run: no faults")
            else:
                self._phase("arm", self._arm)
                self._phase("armed-check", self._armed_check)
            rec.phase_skipped("install", f"install track `{self.scenario.install}`")
            self._phase("expect", self._expect)
            self._phase("recover", self._recover)
            self._phase("verify", self._verify)
        except KeyboardInterrupt:
            interrupted = True
            self.progress.note("interrupted: collecting what there is and tearing down")
        finally:
            interrupted = self._finally_phases() or interrupted
        return self._verdict(interrupted)

    def _finally_phases(self) -> bool:
        """Collect and teardown, whatever happened before. True if interrupted here."""
        rec = self.record
        interrupted = False
        try:
            self._phase("collect", self._collect, always=True)
        except KeyboardInterrupt:
            interrupted = True
        if self.options.keep:
            rec.phase_skipped("teardown", "--keep: the lab stays up")
            if self.lab is not None:
                self.progress.note(f"lab `{self.lab.name}` kept: `invoke lab.down -n {self.lab.name}` removes it")
        else:
            try:
                self._phase("teardown", self._teardown, always=True)
            except KeyboardInterrupt:  # a second Ctrl-C: finish tearing down all the same
                self._teardown(None)
                interrupted = True
        return interrupted

    def _phase(self, name: str, fn, always: bool = False) -> None:
        rec = self.record
        if self.failed_phase and not always:
            rec.phase_skipped(name, f"skipped: {self.failed_phase} failed")
            return
        entry = rec.phase_start(name)
        started = time.monotonic()
        self.progress.update(f"{name} ...")
        try:
            fn(entry)
        except KeyboardInterrupt:
            rec.phase_end(entry, "failed", "interrupted")
            self.failed_phase = self.failed_phase or name
            raise
        except Exception as exc:  # noqa: BLE001 - any failure still gets collect, teardown and a report
            if isinstance(exc, (HarnessError, OSError, TimeoutError)):
                why = str(exc)
            else:  # a bug in kubelab: keep the traceback with the run
                log = rec.write_file(f"steps/{name}-internal-error.log", traceback.format_exc())
                why = f"internal error: {type(exc).__name__}: {exc} (traceback in {log})"
            rec.phase_end(entry, "failed", why)
            self.failed_phase = self.failed_phase or name
            self.progress.note(f"{name}: FAILED after {time.monotonic() - started:.1f}s: {str(exc).splitlines()[0]}")
            return
        rec.phase_end(entry, "ok")
        self.progress.note(f"{name}: ok in {time.monotonic() - started:.1f}s")

    def _verdict(self, interrupted: bool) -> RunResult:
        rec = self.record
        obs = rec.data["observations"]
        failed = [o for o in obs if o["met"] is False and o["kind"] in ("expect", "verify")]
        if interrupted:
            result, code, reason = "interrupted", 2, "interrupted before the run finished"
        elif self.failed_phase:
            phase = next(p for p in rec.data["phases"] if p["name"] == self.failed_phase)
            result, code = "error", 2
            reason = f"{self.failed_phase} failed (harness or infrastructure): {phase['reason'].splitlines()[0] if phase['reason'] else ''}"
        elif failed:
            result, code = "not-met", 1
            reason = f"{len(failed)} check(s) not met: " + "; ".join(f"{o['kind']} {o['check']} on {o['machine']}" for o in failed)
        else:
            result, code, reason = "met", 0, "every expectation and check was met"
        complete = not interrupted
        rec.finish(result, code, reason, complete)
        self.progress.note(f"verdict: {result} (exit {code}): {reason}")
        self.progress.note(f"report: {rec.directory / 'report.md'}")
        return RunResult(code, result, reason, rec.directory)

    # -- phases --------------------------------------------------------------
    def _prepare(self, entry) -> None:
        self.lab = self.labs.up(self.scenario, self.suite, lab_name(self.scenario.name), self.progress)
        rec = self.record
        rec.data["lab"].update(self.lab.describe())
        rec.save()
        for name in self.lab.machines:
            result = self.lab.remote(name).run(FACTS_COMMAND, timeout=60, check=True)
            self.facts[name] = parse_facts(result)
            rec.data["machines"][name] = {"ip": self.lab.ip(name), "role": self.lab.role(name),
                                         "versions": {k: self.facts[name][k] for k in ("os", "kernel", "containerd", "runc", "systemd")},
                                         "pid1": self.facts[name]["pid1"], "cgroupfs": self.facts[name]["cgroupfs"]}
        rec.save()
        self.since = time.time()
        self.faults = [(m, make_fault(f.kind, f.params, self.facts[m]))
                       for f in self.scenario.faults for m in targets(f.target, list(self.lab.machines))]

    def _run_step(self, phase: str, name: str, machine: str, command: str, timeout: float = 120.0) -> None:
        result = self.lab.remote(machine).run(command, timeout=timeout)
        self.record.step(phase, name, machine, result)
        if not result.ok:
            raise PhaseError(f"{phase}: `{command}` on {machine} exited {result.exit_code}" + result.tail_block(8))

    def _arm(self, entry) -> None:
        self.since = time.time()
        for machine, fault in self.faults:
            for command in fault.inject():
                self._run_step("arm", f"{fault.kind}: inject", machine, command)

    def _armed_check(self, entry) -> None:
        not_armed = []
        for machine, fault in self.faults:
            for check in fault.armed_checks():
                entry_obs = self._observe("armed", "armed-check", check, machine, entry)
                if not entry_obs["met"]:
                    not_armed.append(f"{fault.kind} on {machine}: {check.name} (saw {entry_obs['value']!r})")
        if not_armed:
            raise PhaseError("fault not in effect, so nothing after this would prove anything: " + "; ".join(not_armed))

    def _expect(self, entry) -> None:
        if not self.options.control:
            self._checks("expect", self.scenario.expect, entry)
        self._checks("observe", self.scenario.observe, entry, phase="expect")

    def _recover(self, entry) -> None:
        for step in self.scenario.recover:
            for machine in targets(step.target, list(self.lab.machines)):
                if step.action == "run":
                    self._run_step("recover", step.name, machine, step.run, step.timeout)
                elif step.action == "reboot":
                    self._reboot("recover", step.name, machine, step.timeout if step.timeout > 120 else REBOOT_TIMEOUT)
                else:
                    # in a control run the faults were never injected, yet their recovery is the
                    # host preparation the healthy checks expect, so it runs all the same
                    for m, fault in self.faults:
                        if m == machine:
                            for command in fault.recover():
                                self._run_step("recover", f"{fault.kind}: recover", machine, command, step.timeout)

    def _verify(self, entry) -> None:
        rebooted: set[str] = set()
        for check in self.scenario.verify:
            if check.after_reboot:
                for machine in targets(check.target, list(self.lab.machines)):
                    if machine not in rebooted:
                        self._reboot("verify", "reboot before check", machine, REBOOT_TIMEOUT)
                        rebooted.add(machine)
        self._checks("verify", self.scenario.verify, entry)
        # each fault's own proof that the healthy state holds (after the scenario's reboot, if any)
        for machine, fault in self.faults:
            for check in fault.persistence_checks():
                self._observe("verify", "verify", replace(check, name=f"{fault.kind}: {check.name}"), machine, entry)
        self._checks("observe", self.scenario.observe, entry, phase="verify")

    def _collect(self, entry) -> None:
        if self.lab is None:
            return
        rec = self.record
        for ev in self.scenario.evidence:
            for machine in targets(ev.target, list(self.lab.machines)):
                command = ev.command
                try:
                    result = self.lab.remote(machine).run(command, timeout=60)
                except HarnessError as exc:
                    rel = rec.write_file(f"evidence/{machine}-{ev.kind}-{_safe(ev.what)}.txt", f"could not collect: {exc}\n")
                else:
                    rel = rec.write_file(f"evidence/{machine}-{ev.kind}-{_safe(ev.what)}.txt",
                                         f"$ {command}\n{result.stdout}{result.stderr}")
                rec.evidence(ev.kind, ev.what, machine, rel)
        for machine in self.lab.machines:
            for path in self.lab.collect_logs(machine, rec.directory / "evidence"):
                kind = "serial" if path.name.endswith("serial.log") else "domain"
                rec.evidence(kind, "serial console" if kind == "serial" else "machine definition", machine,
                             str(path.relative_to(rec.directory)))

    def _teardown(self, entry) -> None:
        if self.lab is not None:
            self.lab.down(self.progress)

    # -- helpers ---------------------------------------------------------------
    def _checks(self, kind: str, checks: tuple[Check, ...], entry, phase: str | None = None) -> None:
        for check in checks:
            for machine in targets(check.target, list(self.lab.machines)):
                if not applies(check, self.facts[machine]):
                    self.record.not_applicable(kind, phase or kind, check, machine, self.facts[machine])
                    continue
                self._observe(kind, phase or kind, check, machine, entry)

    def _observe(self, kind: str, phase: str, check: Check, machine: str, entry) -> dict:
        probe = make_probe(check.probe.kind, check.probe.args)
        outcome: Outcome = evaluate(check, self.lab.remote(machine), Context(since=self.since), probe=probe,
                                    clock=self.clock, sleep=self.sleep)
        obs = self.record.observation(kind, phase, check, machine, outcome, entry["started_at"], probe.describe())
        mark = "recorded" if obs["met"] is None else ("met" if obs["met"] else "NOT met")
        self.progress.note(f"{phase}: {check.name} on {machine}: {mark} ({obs['matched'][:80] or obs['value']!r})")
        return obs

    def _reboot(self, phase: str, name: str, machine: str, timeout: float) -> None:
        """Reboot and wait until the machine answers with a new boot id."""
        remote = self.lab.remote(machine)
        before = remote.run("cat /proc/sys/kernel/random/boot_id", timeout=30, check=True).stdout.strip()
        started_wall, started = time.time(), self.clock()
        remote.run("systemctl reboot", timeout=30)
        remote.close()
        deadline = started + timeout
        last = ""
        while self.clock() < deadline:
            self.sleep(1.0)
            try:
                now = remote.run("cat /proc/sys/kernel/random/boot_id", timeout=10).stdout.strip()
            except HarnessError as exc:
                last = str(exc).splitlines()[0]
                remote.close()
                continue
            if now and now != before:
                took = self.clock() - started
                self.record.step(phase, name, machine, CommandResult(
                    machine, "systemctl reboot  # then wait for a new boot id", 0,
                    f"boot id {before} -> {now}; answered after {took:.1f}s\n", "", started_wall, took))
                return
        raise MachineTimeout(f"{machine} did not come back from reboot within {timeout:g}s; last: {last}")


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in ".-_" else "-" for ch in text).strip("-")[:60]
