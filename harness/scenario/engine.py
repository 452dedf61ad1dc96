"""Running a scenario: prepare, arm, armed-check, install, expect, recover,
verify, collect, teardown; in that order, every step timed and recorded.

Exit codes: 0 every expectation and check met; 1 some were not; 2 the
harness or the infrastructure broke (a fault that did not take is one of
those, never a pass). A phase that errors stops the phases after it, which
are recorded as skipped with the reason; collect and teardown always run
(teardown unless --keep).
"""

from __future__ import annotations

import json
import secrets
import time
import traceback
import re
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from .. import host, host_command, signals
from ..errors import HarnessError, MachineTimeout, PhaseError
from ..facts import derive as derive_facts
from ..evidence.record import RunRecord, fetched_name
from ..model import CLUSTER, PHASES, Scenario
from ..probes import Context
from ..probes import make as make_probe
from ..probes.facts import COMMAND as FACTS_COMMAND
from ..probes.facts import parse as parse_facts
from ..progress import Progress, one_line
from ..host_command import HOST
from ..remote.result import CommandResult
from ..tracks import track_of
from .checks import Outcome, evaluate
from .plan import BOOT_ID, Step, cluster_facts, plan, with_release
from .watch import MachineWatch


# what the record keeps of a machine's facts: containerd is the real version (probes/facts.py),
# with what the binary printed and Debian's package beside it
MACHINE_VERSIONS = ("os", "kernel", "containerd", "containerd_reported", "containerd_package", "runc", "systemd")


STEP_NOTE_S = 2.0  # a step that took this long gets its own console line; quicker ones only the live line


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


def lab_name(scenario: str) -> str:
    stem = scenario[:14].rstrip("-")
    return f"{stem}-{secrets.token_hex(2)}"


class Engine:
    def __init__(self, scenario: Scenario, options: Options, labs, progress: Progress | None = None,
                 clock=time.monotonic, sleep=time.sleep, cluster_client=None, kit=None, host_run=None):
        self.scenario = scenario
        # injectable for tests: the cluster's API client (built from admin.conf), the kit record,
        # and what runs a host step's command
        self.cluster_client_factory = cluster_client
        self.kit = kit
        self.host_run = host_run or host_command.run
        self.options = options
        self.labs = labs  # provider: up(scenario, suite, name, progress) -> lab handle
        self.progress = progress or Progress()
        self.suite = options.suite or scenario.lab.suite
        self.lab = None
        self.facts: dict[str, dict] = {}
        self.steps: list[Step] = []  # the plan, made once the machines' facts are known
        self.captured: dict[str, str] = {}  # @@name@@ values read from step output
        self.kubeconfig = None  # admin.conf, once the install track fetched it
        self._cluster = None
        self.since = 0.0
        self.failed_phase: str | None = None
        self.record: RunRecord | None = None
        self.watch: MachineWatch | None = None  # the host taking a machine away under the run
        self.clock, self.sleep = clock, sleep  # injectable: tests run polls and reboots on a fake clock

    # -- the run -------------------------------------------------------------
    def run(self) -> RunResult:
        mode = "control" if self.options.control else "fault"
        self.record = rec = RunRecord.create(self.scenario, mode, self.suite, self.options.runs_root)
        self.progress.note(f"scenario {self.scenario.name} ({mode}, {self.suite}): record in {rec.directory}")
        interrupted = False
        try:
            self._phase("prepare", self._prepare)
            for phase in PHASES[1:PHASES.index("collect")]:
                skipped = self._skip_reason(phase)
                if skipped:
                    rec.phase_skipped(phase, skipped)
                else:
                    self._phase(phase, self._run_phase)
        except KeyboardInterrupt:
            interrupted = True
            signals.handled()
            self.progress.note("interrupted: collecting what there is and tearing down")
        finally:
            interrupted = self._finally_phases() or interrupted
        return self._verdict(interrupted)

    def _skip_reason(self, phase: str) -> str:
        if phase in ("arm", "armed-check") and self.options.control:
            return "control run: no faults"
        if phase == "install" and not self.scenario.install.installs_kubernetes:
            return "install track `none`"
        return ""

    def _finally_phases(self) -> bool:
        """Collect and teardown, whatever happened before. True if interrupted here."""
        rec = self.record
        interrupted = False
        if self.watch is not None:
            self.watch.stop()
            self.watch.look()  # a machine lost while the last phase was failing for it
            self._record_lost()
        try:
            self._phase("collect", self._collect, always=True)
        except KeyboardInterrupt:
            interrupted = True
        if self.options.keep:
            rec.phase_skipped("teardown", "--keep: the lab stays up")
            if hasattr(self.lab, "release"):  # the lab stays, and no run owns it
                self.lab.release()
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
        cpu = self._cpu_now()
        self.progress.update(f"{name} ...")
        try:
            fn(entry)
        except KeyboardInterrupt:
            self._record_cpu(entry, cpu)
            rec.phase_end(entry, "failed", "interrupted")
            self.failed_phase = self.failed_phase or name
            raise
        except Exception as exc:  # noqa: BLE001 - any failure still gets collect, teardown and a report
            if isinstance(exc, (HarnessError, OSError, TimeoutError)):
                why = str(exc)
            else:  # a bug in kubelab: keep the traceback with the run
                log = rec.write_file(f"steps/{name}-internal-error.log", traceback.format_exc())
                why = f"internal error: {type(exc).__name__}: {exc} (traceback in {log})"
            if self.watch is not None and not always:
                self.watch.look()  # did the host take a machine away? then that is why
                if self.watch.lost:
                    why = f"{self.watch.cause()} (then: {why.splitlines()[0] if why else ''})"
            self._record_cpu(entry, cpu)
            rec.phase_end(entry, "failed", why)
            self.failed_phase = self.failed_phase or name
            self.progress.note(f"{name}: FAILED: {why.splitlines()[0]}")
            return
        self._record_cpu(entry, cpu)
        rec.phase_end(entry, "ok")
        self.progress.note(f"{name}: ok in {time.monotonic() - started:.1f}s")

    def _cpu_now(self) -> tuple[dict[str, tuple[int, float]], tuple[float, float] | None]:
        """The guests' emulator CPU so far ({} before the lab exists or when the backend cannot tell)
        and the host's (busy, idle). A measurement only: a backend that cannot answer now (libvirtd
        restarting) must not cost the phase its outcome or the run its teardown."""
        read = getattr(self.lab, "cpu_seconds", None)
        try:
            guests = read() if read is not None else {}
        except HarnessError:
            guests = {}
        try:
            return guests, host.cpu_times()
        except OSError:
            return guests, None

    def _record_cpu(self, entry: dict, before) -> None:
        """The phase's `guest_cpu_s`: CPU seconds each machine used during it, when every machine's
        emulator is the one it started with (a power cycle starts a new one, counting from zero);
        and `host_cpu_s`: the whole host's busy and idle CPU seconds meanwhile, whatever ran beside.
        benchmarks/book.py sets both against the phase's wall time."""
        (guests, host_before), (after, host_after) = before, self._cpu_now()
        same = {m for m in after if m in guests and after[m][0] == guests[m][0] and after[m][1] >= guests[m][1]}
        if after and same == set(after) == set(guests):
            entry["guest_cpu_s"] = {m: round(after[m][1] - guests[m][1], 1) for m in sorted(after)}
        if host_before and host_after:
            entry["host_cpu_s"] = {"busy": round(host_after[0] - host_before[0], 1),
                                   "idle": round(host_after[1] - host_before[1], 1)}

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
        elif self.scenario.expect and not self.options.control and \
                not any(o["kind"] == "expect" and o["met"] is True for o in obs):
            # every expectation gated out (by versions, say): nothing was shown, so nothing is met
            result, code = "not-met", 1
            reason = "no expectation was evaluated on these machines: " + "; ".join(
                f"{o['check']} ({o['matched']})" for o in obs if o["kind"] == "expect")
        else:
            result, code, reason = "met", 0, "every expectation and check was met"
        if self.watch is not None and self.watch.lost and not interrupted:
            # nothing seen after the host failed can be the product's: no verdict of met or not-met
            result, code = "error", 2
            reason = f"the host failed under the run: {self.watch.cause()}" + (
                f" ({self.failed_phase} failed then)" if self.failed_phase else "")
        complete = not interrupted
        rec.data["facts"] = derive_facts(self.scenario.facts, obs,
                                         control=self.options.control and bool(self.scenario.faults))
        rec.finish(result, code, reason, complete)
        self.progress.note(f"verdict: {result} (exit {code}): {reason}")
        self.progress.note(f"report: {rec.directory / 'report.md'}")
        return RunResult(code, result, reason, rec.directory)

    # -- phases --------------------------------------------------------------
    def _record_lost(self) -> None:
        if self.watch is not None and self.watch.lost:
            self.record.data["machines_lost"] = [{"machine": m, "cause": cause, "at": at}
                                                 for m, (cause, at) in sorted(self.watch.lost.items())]
            self.record.save()

    def _prepare(self, entry) -> None:
        self.lab = self.labs.up(self.scenario, self.suite, lab_name(self.scenario.name), self.progress)
        rec = self.record
        if hasattr(self.lab, "claim"):  # a real lab: this run's, until it ends (lab.status names an orphan)
            self.lab.claim(rec.directory)
        if hasattr(self.lab, "health"):  # a real backend can say when the host took a machine away
            self.watch = MachineWatch(self.lab, note=self.progress.note).start()
        rec.data["lab"].update(self.lab.describe())
        rec.save()
        for name in self.lab.machines:
            result = self.lab.remote(name).run(FACTS_COMMAND, timeout=60, check=True)
            self.facts[name] = parse_facts(result)
            rec.data["machines"][name] = {"ip": self.lab.ip(name), "role": self.lab.role(name),
                                         "versions": {k: self.facts[name][k] for k in MACHINE_VERSIONS},
                                         "pid1": self.facts[name]["pid1"], "cgroupfs": self.facts[name]["cgroupfs"]}
        rec.save()
        self.since = time.time()
        roles = {m: self.lab.role(m) for m in self.lab.machines}
        install = None
        track = track_of(self.scenario.install)
        if track.installs_kubernetes:
            tuned = self.lab.tuning()  # decided by the lab's measured acceleration (harness/tuning.py)
            install = track.context(self.scenario, self.lab, roles, self.facts, self.kit, tuned,
                                    workdir=rec.directory / "install")
            rec.data["install"] = track.record(self.scenario, tuned)
            rec.save()
        self.steps = plan(self.scenario, roles, self.facts, self.options.control, install=install)

    def _run_phase(self, entry) -> None:
        """Execute the plan's steps of the phase that is running, in order."""
        phase = entry["name"]
        if phase == "arm":
            self.since = time.time()  # journal probes read from here on
        not_armed = []
        for step in (s for s in self.steps if s.phase == phase):
            if not_armed and phase != "armed-check":  # a fault armed inside install did not take: stop here
                break
            step = self._filled(step)
            if step.action in ("run", "write", "fetch", "host-write", "host-run", "reboot", "power-cycle"):
                with self._doing(step):
                    self._act(step)
            elif step.action == "not-applicable" and step.check is None:
                self.record.skipped_step(phase, step.name, step.machine, step.note)
            elif step.action == "not-applicable":
                self.record.not_applicable(step.kind, phase, step.check, step.machine, self._facts_of(step.machine))
            elif step.action == "verify-layer":
                with self.progress.activity(f"{phase}: verify layer {step.name} on the cluster"):
                    self._verify_layer(step, entry)
            elif step.action == "check":
                obs = self._observe(step, entry)
                if step.kind == "armed" and not obs["met"]:
                    not_armed.append(f"{step.name} on {step.machine}: {step.check.name} (saw {obs['value']!r})")
        if not_armed:
            raise PhaseError("fault not in effect, so nothing after this would prove anything: " + "; ".join(not_armed))

    def _act(self, step: Step) -> None:
        if step.action in ("run", "write"):
            self._run_step(step)
        elif step.action == "fetch":
            self._fetch(step)
        elif step.action == "host-run":
            self._host_run(step)
        elif step.action == "host-write":
            self._host_write(step)
        elif step.action == "reboot":
            self._reboot(step)
        elif step.action == "power-cycle":
            started_wall, started = time.time(), self.clock()
            said = self.lab.power_cycle(step.machine, step.command, step.timeout)
            self.record.step(step.phase, step.name, step.machine, CommandResult(
                step.machine, step.line().split(": ", 1)[1], 0, said + "\n", "", started_wall,
                self.clock() - started))

    @contextmanager
    def _doing(self, step: Step):
        """A step's progress: live while it runs (a minute's heartbeat in a log), then a line
        with its exit code and time if it took a while or did not exit 0 (the record has every step)."""
        what = f"{step.phase}: {step.name} on {step.machine}"
        started, recorded = time.monotonic(), len(self.record.data["steps"])
        with self.progress.activity(f"{what} (up to {step.timeout:g}s)"):
            yield
        done = self.record.data["steps"][recorded:]
        code = done[-1]["exit_code"] if done else None
        took = time.monotonic() - started
        if took >= STEP_NOTE_S or code not in (0, None):
            self.progress.note(f"{what}: {'exit ' + str(code) if code not in (0, None) else 'done'} in {took:.1f}s")

    def _run_step(self, step: Step) -> None:
        stdin = step.content.encode() if step.action == "write" else None
        result = self.lab.remote(step.machine).run(step.command, timeout=step.timeout, stdin=stdin)
        self.record.step(step.phase, step.name, step.machine, result, content=step.content)
        if not result.ok and step.may_fail:
            return  # recorded; the expectations judge it
        if not result.ok:
            raise PhaseError(f"{step.phase}: `{step.command}` on {step.machine} exited {result.exit_code}"
                             + result.tail_block(8))
        for name, pattern in step.capture:
            m = re.search(pattern, result.stdout + result.stderr)
            if not m:
                raise PhaseError(f"{step.phase}: `{step.command}` on {step.machine}: its output has no "
                                 f"{pattern!r} (for @@{name}@@)" + result.tail_block(8))
            self.captured[name] = m.group(1)

    def _host_write(self, step: Step) -> None:
        """A file on the host the next host step reads (kubespray's inventory and vars), kept in the
        run's folder with the record."""
        started_wall, started = time.time(), self.clock()
        path = Path(step.command)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(step.content)
        path.chmod(0o600)
        self.record.step(step.phase, step.name, HOST, CommandResult(
            HOST, f"write {path}", 0, "", "", started_wall, self.clock() - started), content=step.content)

    def _host_run(self, step: Step) -> None:
        """A command on the host (kubespray's ansible-playbook): its play and task names as the
        live detail, its whole output in the record; stopped with its children at the timeout."""
        play = None
        if step.host.output == "ansible":  # the play, the task and each host's counts as the live line
            from ..kubespray.play_log import PlayLog

            play = PlayLog(self.clock)

        def said(line: str) -> None:
            if play is not None and play.feed(line):
                self.progress.update(play.live())

        result = self.host_run(step.host, step.timeout, on_line=said)
        self.record.step(step.phase, step.name, HOST, result)
        if play is not None:  # per-task times, the recap and each failure with its host and message
            play.finish()
            self.record.data["steps"][-1]["ansible"] = play.summary()
            self.record.save()
        if result.exit_code is None:
            raise PhaseError(f"{step.phase}: {step.name} on the host did not finish within {step.timeout:g}s "
                             "(stopped with its children)" + result.tail_block(8))
        if not result.ok and not step.may_fail:
            raise PhaseError(f"{step.phase}: {step.name} on the host exited {result.exit_code}"
                             + result.tail_block(12))

    def _filled(self, step: Step) -> Step:
        """@@name@@ in a command or file content, filled with what an earlier step printed."""
        if "@@" not in step.command + step.content:
            return step
        command, content = step.command, step.content
        for name, value in self.captured.items():
            command, content = command.replace(f"@@{name}@@", value), content.replace(f"@@{name}@@", value)
        return replace(step, command=command, content=content)

    def _filled_check(self, check):
        """@@name@@ in a check's expected value: what an earlier step printed (the CA hash of the join)."""
        if not self.captured:
            return check
        def fill(value):
            if isinstance(value, str):
                for name, captured in self.captured.items():
                    value = value.replace(f"@@{name}@@", captured)
            return value
        return replace(check, equals=fill(check.equals), pattern=fill(check.pattern), absent=fill(check.absent))

    def _fetch(self, step: Step) -> None:
        """A file the harness needs (admin.conf): kept private in the run folder, never in a report."""
        result = self.lab.remote(step.machine).run(step.command, timeout=step.timeout)
        if not result.ok and step.may_fail:  # an init that stopped before writing it
            self.record.step(step.phase, step.name, step.machine, result)
            return
        if not result.ok:
            raise PhaseError(f"{step.phase}: `{step.command}` on {step.machine} exited {result.exit_code}"
                             + result.tail_block(4))
        path = self.record.write_private(fetched_name(step.machine, step.command), result.stdout)
        self.record.step(step.phase, step.name, step.machine, replace(result, stdout=f"(kept in {path}, mode 600)\n"))
        if step.name == "admin.conf":  # a rebuilt cluster has a new CA: a new client
            self.kubeconfig, self._cluster = path, None

    def _collect(self, entry) -> None:
        if self.lab is None:
            return
        rec = self.record
        try:
            for step in (s for s in self.steps if s.phase == "collect"):
                if step.action == "versions":
                    self._cluster_versions(step)
                    continue
                if step.action == "machine-versions":
                    self._machine_versions(step)
                    continue
                kind, what = step.name.split(" ", 1)
                rel_name = f"evidence/{step.machine}-{kind}-{_safe(what)}.txt"
                try:
                    result = self.lab.remote(step.machine).run(step.command, timeout=step.timeout)
                except HarnessError as exc:
                    rel = rec.write_file(rel_name, f"could not collect: {exc}\n")
                else:
                    rel = rec.write_file(rel_name, f"$ {step.command}\n{result.stdout}{result.stderr}")
                rec.evidence(kind, what, step.machine, rel)
        finally:  # the machines' serial consoles, whatever happened above
            for machine in self.lab.machines:
                for path in self.lab.collect_logs(machine, rec.directory / "evidence"):
                    kind = "serial" if path.name.endswith("serial.log") else "domain"
                    rec.evidence(kind, "serial console" if kind == "serial" else "machine definition", machine,
                                 str(path.relative_to(rec.directory)))

    def _machine_versions(self, step: Step) -> None:
        """The machine's versions again, after an install that replaces the runtime: run.json keeps
        both (`versions` as the image had them, `versions_after_install`)."""
        entry = self.record.data["machines"][step.machine]
        try:
            after = parse_facts(self.lab.remote(step.machine).run(step.command, timeout=step.timeout, check=True))
        except HarnessError as exc:
            entry["versions_after_install"] = {"error": one_line(exc)}
            self.progress.note(f"collect: {step.machine}'s versions after the install not read: {one_line(exc)}")
        else:
            entry["versions_after_install"] = {k: after[k] for k in MACHINE_VERSIONS}
            changed = [f"{k} {entry['versions'][k] or '(none)'} -> {after[k] or '(none)'}" for k in ("containerd", "runc")
                       if after[k] != entry["versions"].get(k)]
            self.progress.note(f"collect: {step.machine} after the install: "
                               + ("; ".join(changed) if changed else "containerd and runc as before"))
        self.record.save()

    def _cluster_versions(self, step: Step) -> None:
        """What the running cluster says it runs, into run.json (`cluster`); a cluster that
        cannot be read is recorded with the reason, not guessed."""
        from ..cluster import ClusterError
        from ..cluster_versions import read
        from ..probes.cluster import not_answering

        deadline, found = self.clock() + step.timeout, None
        with self.progress.activity(f"collect: versions the cluster reports (up to {step.timeout:g}s)"):
            while found is None:
                try:
                    versions = read(self._cluster_client(), self.scenario.install.cni)
                    found = {"versions": versions, "read_at": time.time()}
                except PhaseError as exc:  # no admin.conf: the install stopped before the cluster existed
                    found = {"error": str(exc)}
                except (ClusterError,) + not_answering() as exc:  # not answering (yet)
                    last = f"{type(exc).__name__}: {one_line(exc)}"
                    if self.clock() >= deadline:
                        found = {"error": f"the API did not answer within {step.timeout:g}s: {last}"}
                    else:
                        self.progress.update(last)
                        self.sleep(5.0)
        self.record.data["cluster"] = {**found, "api": step.command}
        self.record.save()
        if "error" in found:
            self.progress.note(f"collect: cluster versions not read: {one_line(found['error'])}")
        else:
            self.progress.note(f"collect: the cluster reports API server {versions['api_server']}, kubelet "
                               + ", ".join(f"{v} on {n}" for n, v in versions["kubelet"].items()))

    def _teardown(self, entry) -> None:
        if self.lab is not None:
            self.lab.down(self.progress)

    # -- helpers ---------------------------------------------------------------
    def _observe(self, step: Step, entry) -> dict:
        check = self._filled_check(step.check)
        probe = make_probe(check.probe.kind, check.probe.args)
        if step.machine == HOST:  # what the host steps recorded: their plays so far
            reader = [s["ansible"] for s in self.record.data["steps"] if s.get("ansible")]
        else:
            reader = self._cluster_client() if step.machine == CLUSTER else self.lab.remote(step.machine)
        budget = f", up to {check.within:g}s" if check.within else ""
        with self.progress.activity(f"{step.phase}: waiting for {check.name} on {step.machine} "
                                    f"({check.expected() or 'a reading'}{budget})"):
            outcome: Outcome = evaluate(check, reader, Context(since=self.since), probe=probe,
                                        clock=self.clock, sleep=self.sleep,
                                        on_poll=lambda n, reading: self.progress.update(
                                            f"poll {n}, last: {one_line(reading.text)}"))
        obs = self.record.observation(step.kind, step.phase, check, step.machine, outcome, entry["started_at"],
                                      probe.describe())
        self.progress.note(observation_line(obs))
        return obs

    def _verify_layer(self, step: Step, entry) -> None:
        """One of harness/verify's layers against this lab's cluster; its findings are verify
        observations (a `does not hold` is a check not met). verify's own pods go after the last."""
        from ..verify.access import Access, match_nodes
        from ..verify.run import run_layers

        rec = self.record
        cluster = self._cluster_client()
        # by address: a node's name is whatever its kubelet registered
        remotes, _ = match_nodes(cluster.nodes(), {self.lab.ip(m): self.lab.remote(m) for m in self.lab.machines})
        access = Access(cluster, remotes, on_read=lambda node, result: rec.step(
            step.phase, f"verify {step.name}", node, result), on_wait=self.progress.update)
        if step.name == next(s for s in self.steps if s.action == "verify-layer").name:
            access.prestart(self.scenario.verify_layers)

        def on_finding(f):
            obs = rec.finding(step.phase, f, entry["started_at"])
            self.progress.note(f"verify: {f.layer}: {f.check}: {f.verdict} ({f.value[:80]})")
            return obs

        with self.progress.activity(f"verify layer {step.name}: {step.command[:100]}"):
            run_layers(access, (step.name,), on_finding,
                       lambda name, text: rec.write_file(f"steps/verify-{name}-error.log", text))
        if step.name == next(s for s in reversed(self.steps) if s.action == "verify-layer").name:
            removed = access.cleanup()
            if removed:
                self.progress.note(f"verify: removed {', '.join(removed)}")

    def _facts_of(self, machine: str) -> dict:
        """What the plan's version gates read for this machine (the release installed too)."""
        facts = with_release(self.scenario, self.facts)
        if machine in (CLUSTER, HOST):
            return cluster_facts(facts, {m: self.lab.role(m) for m in self.lab.machines})
        return facts.get(machine, {})

    def _cluster_client(self):
        if self._cluster is None:
            if self.kubeconfig is None:
                raise PhaseError("a cluster check needs the cluster's admin.conf; the install track did not fetch it "
                                 "(an install that stopped before writing it: check the machines, not the cluster)")
            from ..cluster import ClusterClient

            self._cluster = (self.cluster_client_factory or ClusterClient)(self.kubeconfig)
        return self._cluster

    def _reboot(self, step: Step) -> None:
        """Reboot and wait until the machine answers with a new boot id."""
        machine, timeout = step.machine, step.timeout
        remote = self.lab.remote(machine)
        before = remote.run(BOOT_ID, timeout=30, check=True).stdout.strip()
        started_wall, started = time.time(), self.clock()
        remote.run("systemctl reboot", timeout=30)
        remote.close()
        deadline = started + timeout
        last = ""
        while self.clock() < deadline:
            self.sleep(1.0)
            try:
                now = remote.run(BOOT_ID, timeout=10).stdout.strip()
            except HarnessError as exc:
                last = str(exc).splitlines()[0]
                remote.close()
                continue
            if now and now != before:
                took = self.clock() - started
                self.record.step(step.phase, step.name, machine, CommandResult(
                    machine, "systemctl reboot  # then wait for a new boot id", 0,
                    f"boot id {before} -> {now}; answered after {took:.1f}s\n", "", started_wall, took))
                return
        raise MachineTimeout(f"{machine} did not come back from reboot within {timeout:g}s; last: {last}")


def observation_line(obs: dict) -> str:
    """One console line for an observation: its verdict and the first line of what decided it;
    the full reading is in the record (run.json and the check's log)."""
    mark = "recorded" if obs["met"] is None else ("met" if obs["met"] else "NOT met")
    shown = obs["matched"] or obs["value"]
    if not isinstance(shown, str):
        shown = json.dumps(shown, sort_keys=True, default=str)
    return (f"{obs['phase']}: {obs['check']} on {obs['machine']}: {mark}: "
            + (one_line(shown, "in the record") or "(empty)"))


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in ".-_" else "-" for ch in text).strip("-")[:60]
