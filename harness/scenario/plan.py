"""The one sequencer: (scenario, machine facts, mode) -> the ordered steps of a run.

The engine executes exactly this list and `--dry-run` prints it, so what runs
is what dry-run shows; the phase order lives here and nowhere else. Lab up
and the facts command (prepare) come before the plan, because the plan
depends on the facts (a fault's commands and a check's version gate follow
the containerd version in the guest); teardown comes after it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..faults import make as make_fault
from ..host_command import HOST, HostCommand
from ..model import CLUSTER, PHASES, ROLE_SELECTORS, TRACK_PREPARE, Check, Scenario
from ..probes import make as make_probe
from ..tracks import track_of
from .checks import applies, in_ranges

BOOT_ID = "cat /proc/sys/kernel/random/boot_id"
POWER_CYCLE_TIMEOUT = 600.0  # the backend's own boot allowance under TCG
# A Kubernetes node's reboot under TCG, measured on a kubespray worker (1 vCPU): 85 s to shut
# down (the kubelet's graceful node shutdown holds it up to kubespray's 1m grace period), the
# kernel again 27 s later, sshd 102 s after that, and commands answered only after about 4.5 min
# in all, past the 240 s this was: a reboot gets the same boot allowance.
REBOOT_TIMEOUT = POWER_CYCLE_TIMEOUT
CLUSTER_VERSIONS_TIMEOUT = 60.0  # an API server restarting under TCG answers within this


@dataclass(frozen=True)
class Step:
    phase: str
    machine: str
    action: str  # run | write | fetch | host-write | host-run | check | verify-layer | reboot | power-cycle | evidence | versions | not-applicable
    name: str
    command: str = ""  # run, write, fetch and evidence: the command; check: the probe's command; power-cycle: kernel args; host-write: the host path
    check: Check | None = None
    kind: str = ""  # for checks: armed | expect | observe | verify
    timeout: float = 120.0
    note: str = ""
    content: str = ""  # write: what goes on the command's stdin
    capture: tuple[tuple[str, str], ...] = ()  # (name, regex): values read from this step's output
    may_fail: bool = False  # a non-zero exit is recorded, not a harness failure (an init the fault stops)
    host: HostCommand | None = None  # host-run: the command run on the host (machine `host`), not in a guest

    def commands(self) -> list[str]:
        """What the machine receives, in order (a check repeats its one command while it polls)."""
        if self.action == "reboot":
            return [BOOT_ID, "systemctl reboot", BOOT_ID]
        if self.action in ("not-applicable", "power-cycle"):  # a power cycle goes through the backend
            return []
        if self.action in ("verify-layer", "host-run", "host-write"):  # read from the cluster / done on the host, not sent
            return []
        return [self.command]

    def line(self) -> str:
        if self.action == "not-applicable":
            return f"[{self.phase}] {self.machine}: (skipped: {self.note})"
        if self.action == "reboot":
            return f"[{self.phase}] {self.machine}: systemctl reboot    # {self.name}: then wait for a new boot id"
        if self.action == "verify-layer":
            return f"[{self.phase}] cluster: verify layer {self.name}    # reads {self.command}"
        if self.action == "host-write":
            return f"[{self.phase}] {HOST}: write {self.command}    # {self.name}, {len(self.content.splitlines())} lines"
        if self.action == "host-run":
            return f"[{self.phase}] {HOST}: {self.host.shown()}    # {self.note or self.name}, up to {self.timeout:g}s"
        if self.action == "power-cycle":
            args = f", once with kernel arguments `{self.command}`" if self.command else ""
            return f"[{self.phase}] {self.machine}: (backend) power off, boot{args}    # {self.name}: then wait for SSH"
        parts = [self.note or (self.name if self.action == "write" else "")]
        if self.may_fail:
            parts.append("may fail")
        if self.action == "write":
            parts.append(f"{len(self.content.splitlines())} lines on stdin")
        if self.capture:
            parts.append("reads " + ", ".join(f"@@{n}@@" for n, _ in self.capture) + " from its output")
        note = "; ".join(p for p in parts if p)
        return f"[{self.phase}] {self.machine}: {self.command}" + (f"    # {note}" if note else "")


def targets(selector: str, roles: dict[str, str]) -> list[str]:
    """The machines a selector names, in lab order; `cluster` names the cluster itself."""
    if selector == "@all":
        return list(roles)
    if selector in (CLUSTER, HOST):
        return [selector]
    if selector in ROLE_SELECTORS:
        return [m for m, role in roles.items() if role == ROLE_SELECTORS[selector]]
    return [selector[1:] if selector.startswith("@") else selector]


def with_release(scenario: Scenario, facts: dict[str, dict]) -> dict[str, dict]:
    """The machines' facts plus the Kubernetes release the scenario installs, which
    `versions: {kubernetes: ...}` gates read (no guest reports it before the install)."""
    if not scenario.install.installs_kubernetes:
        return facts
    return {m: {**f, "kubernetes": scenario.install.kubernetes} for m, f in facts.items()}


def cluster_facts(facts: dict[str, dict], roles: dict[str, str]) -> dict:
    """The cluster's versions, for its checks' gates: its control plane's."""
    return facts.get(next((m for m, r in roles.items() if r == "control-plane"), ""), {})


def faults_of(scenario: Scenario, roles: dict[str, str], facts: dict[str, dict]) -> list[tuple[str, object, str]]:
    """(machine, fault, fault phase) for every fault on every machine it targets."""
    return [(m, make_fault(f.kind, f.params, facts.get(m, {})), f.phase)
            for f in scenario.faults for m in targets(f.target, roles)]


def _check_steps(phase: str, kind: str, checks, machines: list[str], facts: dict[str, dict],
                 facts_known: bool, at: str = "") -> list[Step]:
    out = []
    for c in (c for c in checks if c.at == at):
        probe = make_probe(c.probe.kind, c.probe.args)
        for m in targets(c.target, machines):
            gate = ", ".join(f"{k} {v}" for k, v in c.versions.items())
            if facts_known and not applies(c, facts.get(m, {})):
                out.append(Step(phase, m, "not-applicable", c.name, check=c, kind=kind,
                                note=f"{c.name} applies to {gate}"))
                continue
            note = f"{c.name}: {c.expected() or 'record the value'}"
            if c.versions and not facts_known:
                note += f" when {gate}"
            if c.within:
                note += f", within {c.within:g}s"
            out.append(Step(phase, m, "check", c.name, probe.command(), c, kind, note=note))
    return out


def _fault_steps(faults, phase: str, when: str, inject_phase: str | None = None) -> list[Step]:
    """Inject each fault armed `when`, then prove it took (armed checks, named after their fault)."""
    chosen = [(m, f) for m, f, w in faults if w == when]
    out = [Step(inject_phase or phase, m, "run", f"{f.kind}: inject", cmd, note=f.kind)
           for m, f in chosen for cmd in f.inject()]
    out += [Step(phase, m, "check", f.kind, make_probe(c.probe.kind, c.probe.args).command(), c, "armed",
                 note=f"{c.name}: {c.expected()}") for m, f in chosen for c in f.armed_checks()]
    return out


def _track_step(phase: str):
    """The Step maker an install track builds its steps with, in `phase`."""
    def make(machine, action, name, command, **kw):
        capture = tuple(kw.pop("capture", {}).items())
        return Step(phase, machine, action, name, command, capture=capture, **kw)
    return make


def plan(scenario: Scenario, roles: dict[str, str], facts: dict[str, dict], control: bool = False,
         facts_known: bool = True, install=None) -> list[Step]:
    """Every step from arm to collect, in run order. `facts_known` False (dry-run before
    the image exists) shows version-gated checks with their condition instead of deciding.
    `install`: the track's InstallContext (addresses, images, token) when it has one."""
    machines = roles  # selectors resolve against names and roles
    facts = with_release(scenario, facts)
    facts = {**facts, CLUSTER: cluster_facts(facts, roles)}
    facts[HOST] = facts[CLUSTER]  # what the host steps ran against: the cluster's versions
    faults = faults_of(scenario, roles, facts)
    armed = [] if control else faults
    # an init the fault is meant to stop (where its version range holds: unknown facts count as held)
    init_stops = (scenario.install.expected_to_stop and not control
                  and (not facts_known or in_ranges(scenario.install.init_fails_versions, facts[CLUSTER])))
    steps: list[Step] = _fault_steps(armed, "armed-check", "before-install", inject_phase="arm")
    # what a scenario leaves out of the install (host preparation, the version in the config) is
    # part of its fault: a control run installs in full
    track = replace(scenario.install, prepare=TRACK_PREPARE, kubernetes_version_in_config=True, refused_versions=()) \
        if control else scenario.install
    installer = track_of(scenario.install)

    def at_point(when):
        out = _fault_steps(armed, "install", when)
        if not control:
            out += _check_steps("install", "expect", scenario.expect, machines, facts, facts_known, at=when)
        return out + _check_steps("install", "observe", scenario.observe, machines, facts, facts_known, at=when)

    steps += installer.steps(track, install, _track_step("install"), at_point, init_may_fail=init_stops)
    if not control:
        steps += _check_steps("expect", "expect", scenario.expect, machines, facts, facts_known)
    steps += _check_steps("expect", "observe", scenario.observe, machines, facts, facts_known)
    for s in scenario.recover:
        # a version-gated step: decided per machine (a reinstall: by the control plane's versions)
        gated = lambda m: facts_known and not in_ranges(s.versions, facts.get(m, {}))  # noqa: E731
        skipped = Step("recover", "", "not-applicable", s.name,
                       note=f"{s.name} applies to " + ", ".join(f"{k} {v}" for k, v in s.versions.items()))
        if s.action == "reinstall" and gated(CLUSTER):
            steps.append(replace(skipped, machine=CLUSTER))
            continue
        for m in targets(s.target, machines):
            if s.action != "reinstall" and gated(m):
                steps.append(replace(skipped, machine=m))
            elif s.action == "run":
                steps.append(Step("recover", m, "run", s.name, s.run, timeout=s.timeout, note=s.name))
            elif s.action == "reboot":
                steps.append(Step("recover", m, "reboot", s.name, timeout=max(s.timeout, REBOOT_TIMEOUT)))
            elif s.action == "power-cycle":
                steps.append(Step("recover", m, "power-cycle", s.name, s.kernel_args,
                                  timeout=max(s.timeout, POWER_CYCLE_TIMEOUT), note=s.name))
            elif s.action == "reinstall":
                continue  # once for the cluster, below
            else:
                # in a control run the faults were never injected, yet their recovery is the
                # host preparation the healthy checks expect, so it runs all the same
                steps += [Step("recover", m, "run", f"{fault.kind}: recover", cmd, timeout=s.timeout,
                               note=f"{s.name}: {fault.kind}")
                          for fm, fault, _ in faults if fm == m for cmd in fault.recover()]
        if s.action == "reinstall" and not control:  # a control run's install went through
            # after an init that stopped: the track's reset on; after a built cluster: a rebuild
            steps += installer.reinstall_steps(replace(track, **s.networks), install, _track_step("recover"),
                                               rebuild=not init_stops, new_ranges=bool(s.networks))
    rebooted: list[str] = []
    for c in scenario.verify:
        if c.after_reboot:
            for m in targets(c.target, machines):
                if m not in rebooted:
                    steps.append(Step("verify", m, "reboot", "reboot before check", timeout=REBOOT_TIMEOUT))
                    rebooted.append(m)
    steps += _check_steps("verify", "verify", scenario.verify, machines, facts, facts_known)
    if scenario.verify_layers:
        from .. import verify as layers_of

        steps += [Step("verify", CLUSTER, "verify-layer", name, layers_of.layer(name).READS, kind="verify",
                       timeout=layers_of.TIMEOUT) for name in scenario.verify_layers]
    for m, fault, _ in faults:  # each fault's own proof that the healthy state holds
        for c in fault.persistence_checks():
            named = replace(c, name=f"{fault.kind}: {c.name}")
            steps.append(Step("verify", m, "check", named.name, make_probe(c.probe.kind, c.probe.args).command(),
                              named, "verify", note=f"{named.name}: {c.expected()}"))
    steps += _check_steps("verify", "observe", scenario.observe, machines, facts, facts_known)
    for ev in scenario.evidence:
        for m in targets(ev.target, machines):
            steps.append(Step("collect", m, "evidence", f"{ev.kind} {ev.what}", ev.command, timeout=60,
                              note=f"evidence: {ev.kind}"))
    if installer.replaces_runtime:
        from ..probes.facts import COMMAND as FACTS_COMMAND

        steps += [Step("collect", m, "machine-versions", "versions after the install", FACTS_COMMAND, timeout=60,
                       note="containerd and runc as the install left them (the install replaced the guest's)")
                  for m in machines]
    # the versions the cluster reports, after the evidence: a reading that breaks cannot cost it
    if scenario.install.installs_kubernetes:
        from ..cluster_versions import api

        steps.append(Step("collect", CLUSTER, "versions", "cluster versions", api(scenario.install.cni),
                          timeout=CLUSTER_VERSIONS_TIMEOUT,
                          note="the versions the running cluster reports"))
    order = [PHASES.index(s.phase) for s in steps]
    assert order == sorted(order), "steps out of phase order"
    return steps
