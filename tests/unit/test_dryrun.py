"""--dry-run: every command for every machine, in run order, nothing created."""

import json
import time

import pytest

from harness.artifacts.versions import DEFAULT_KUBERNETES
from harness.model import PHASES
from harness.verify import layer
from harness.probes.facts import COMMAND as FACTS_COMMAND
from harness.probes.facts import parse as parse_facts
from harness.remote.result import CommandResult
from harness.scenario import dryrun
from harness.scenario.engine import Engine, Options
from harness.scenario.files import all_files, find
from harness.scenario.load import load
from harness.scenario.plan import BOOT_ID
from tests.unit.test_engine import BOOKWORM_FACTS, SID_FACTS, FakeClock, FakeLab, FakeLabs

BOOKWORM = {"os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0-50-cloud-amd64",
            "containerd": "1.6.20~ds1-1+deb12u3", "runc": "1.1.5+ds1-1+deb12u1", "systemd": "252.39-1~deb12u2",
            "pid1": "systemd", "cgroupfs": "cgroup2fs"}


def commands(lines):
    return [l.split("    #")[0] for l in lines if l.startswith("[")]


def test_ip_forward_off_in_run_order(monkeypatch):
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": BOOKWORM)
    lines = dryrun.plan_lines(load(find("ip-forward-off")), "bookworm")
    assert commands(lines)[1:] == [
        "[arm] node1: sysctl -w net.ipv4.ip_forward=0",
        "[armed-check] node1: sysctl net.ipv4.ip_forward",
        "[install] (skipped: install track `none`)",
        "[expect] node1: sysctl net.ipv4.ip_forward",  # the expectation
        "[expect] node1: cat /proc/sys/net/ipv4/ip_forward",
        "[expect] node1: sysctl net.ipv4.ip_forward",  # the observation, recorded in expect
        "[recover] node1: printf '%s = %s\\n' net.ipv4.ip_forward 1 > /etc/sysctl.d/99-kubernetes.conf",
        "[recover] node1: sysctl -p /etc/sysctl.d/99-kubernetes.conf",
        "[recover] node1: systemctl reboot",
        "[verify] node1: sysctl net.ipv4.ip_forward",
        "[verify] node1: cat /etc/sysctl.d/99-kubernetes.conf",
        "[verify] node1: sysctl net.ipv4.ip_forward",  # the fault's own persistence check
        "[verify] node1: sysctl net.ipv4.ip_forward",  # the observation, recorded again in verify
        "[collect] node1: cat /etc/sysctl.d/99-kubernetes.conf",
        "[collect] node1: journalctl --no-pager -o short-iso -b -u systemd-sysctl",
        "[teardown] lab: remove machines, disks, network and servers",
    ]
    assert commands(lines)[0].startswith("[prepare] node1: . /etc/os-release;")


def test_version_dependent_checks_follow_the_image(monkeypatch):
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": BOOKWORM)
    lines = dryrun.plan_lines(load(find("containerd-dropin-merge")), "bookworm")
    assert any(l.startswith("[expect] node1: (skipped: v2-config-toml-table-kept applies to containerd >=2.0)") for l in lines)
    assert any("v1-config-toml-table-replaced: equals 16384" in l for l in lines)


def test_without_an_image_conditions_are_shown(monkeypatch):
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": None)
    lines = dryrun.plan_lines(load(find("cgroup-driver-host")), "sid")
    assert "# facts from the image manifest: none (image not built yet)" in lines[2]
    assert any("v2-runc-uses-cgroupfs: equals False when containerd >=2.0" in l for l in lines)


def test_control_run_has_no_fault_commands(monkeypatch):
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": BOOKWORM)
    lines = commands(dryrun.plan_lines(load(find("swap-on")), "bookworm", control=True))
    assert not any(l.startswith(("[arm]", "[armed-check]", "[expect]")) for l in lines)
    assert "[recover] node1: swapoff -a" in lines


@pytest.mark.parametrize("name, left_out", [("ip-forward-preflight", "sysctl -w net.ipv4.ip_forward=1"),
                                             ("flannel-no-brnetfilter", "modprobe br_netfilter")])
def test_a_control_run_prepares_what_the_fault_run_leaves_out(name, left_out, monkeypatch):
    """`install.prepare` narrows the track's host preparation as part of the fault; without
    the fault the host is prepared in full (a guest forwards nothing by default)."""
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": None)
    scenario = load(find(name))
    fault = [l for l in commands(dryrun.plan_lines(scenario, "sid")) if l.startswith("[install] cp1: ")]
    control = [l for l in commands(dryrun.plan_lines(scenario, "sid", control=True)) if l.startswith("[install] cp1: ")]
    assert not any(left_out in l for l in fault)
    assert any(left_out in l for l in control)


def test_a_control_run_pins_the_version_a_fault_run_leaves_out(monkeypatch):
    from harness import tuning
    from harness.provisioners import kubeadm
    from harness.scenario import plan as plans

    scenario = load(find("airgap-unset-version"))
    tcg = tuning.decide("qemu")
    assert kubeadm.cluster_spec(scenario.install, tcg).kubernetes == ""
    seen = []
    monkeypatch.setattr(kubeadm, "steps", lambda install, *a, **kw: seen.append(install) or [])
    monkeypatch.setattr(kubeadm, "reinstall_steps", lambda *a, **kw: [])
    plans.plan(scenario, {"cp1": "control-plane"}, {"cp1": {}}, control=True, facts_known=False)
    plans.plan(scenario, {"cp1": "control-plane"}, {"cp1": {}}, control=False, facts_known=False)
    assert [kubeadm.cluster_spec(i, tcg).kubernetes for i in seen] == [f"v{DEFAULT_KUBERNETES}", ""]


def test_after_reboot_checks_show_their_reboot(monkeypatch, tmp_path):
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": BOOKWORM)
    path = tmp_path / "rebooting.yaml"
    path.write_text("apiVersion: kubelab/v1\nkind: Scenario\nname: rebooting\nsummary: s\n"
                    "lab: {suite: bookworm, machines: [{name: node1}]}\n"
                    "verify:\n  - {name: up, probe: {unit-state: {unit: ssh}}, equals: active, after_reboot: true}\n")
    verify = [l for l in commands(dryrun.plan_lines(load(path), "bookworm")) if l.startswith("[verify]")]
    assert verify[0] == "[verify] node1: systemctl reboot" and verify[1].endswith(" ssh")


# -- what dry-run prints is what the engine sends ---------------------------------------------
class AnswerEverything:
    """A remote that answers any command with success (and a new boot id after each reboot)."""

    def __init__(self, host, facts_output):
        self.host, self.facts_output, self.calls, self.boots = host, facts_output, [], 0

    def run(self, command, timeout=60.0, check=False, stdin=None):
        self.calls.append(command)
        out = ""
        if command == FACTS_COMMAND:
            out = self.facts_output
        elif command == "systemctl reboot":
            self.boots += 1
        elif command == BOOT_ID:
            out = f"boot-{self.boots}\n"
        return CommandResult(self.host, command, 0, out, "", time.time(), 0.001)

    def close(self):
        pass


def expected_calls(lines, observations, machine="node1") -> tuple[list[str], list[dict]]:
    """What `machine` must receive for the printed plan, step by step, nothing merged: each
    printed command once, a reboot as boot id / reboot / boot id, and a check's command as many
    times as that check polled (its observation in the run record, taken in order). Returns
    that list and the observations no printed line accounted for."""
    polled = [o for o in observations if o["machine"] == machine and o["polls"]]
    out = []
    for line in lines:
        if not line.startswith("["):
            continue
        head, _, note = line.partition("    # ")
        target, _, command = head.split("] ", 1)[1].partition(": ")
        if target != machine or command.startswith("(skipped"):
            continue
        if command == "systemctl reboot":
            out += [BOOT_ID, command, BOOT_ID]
        elif polled and polled[0]["command"] == command and note.startswith(f"{polled[0]['check']}: "):
            out += [command] * polled.pop(0)["polls"]
        else:
            out.append(command)
    return out, polled


def assert_sent_as_printed(calls, lines, record, machine="node1"):
    """A step dropped or sent twice fails this, even where identical steps are neighbours."""
    expected, unprinted = expected_calls(lines, record["observations"], machine)
    assert unprinted == [], f"{machine}: checks the printed plan does not have: {[o['check'] for o in unprinted]}"
    assert calls == expected, machine


# every scenario under scenarios/, found there (what `invoke scenario.lint` checks)
SCENARIOS = {p.stem: load(p) for p in all_files()}
HOST_SCENARIOS = sorted(n for n, s in SCENARIOS.items() if s.install.track == "none")  # kubeadm: test_kubeadm_track.py
IMAGE_FACTS = {"no image": None, "containerd-1.6": BOOKWORM_FACTS[1], "containerd-2.1": SID_FACTS[1]}


RUNS = [pytest.param(n, control, id=f"{n}-{'control' if control else 'fault'}")
        for n, s in SCENARIOS.items() for control in (False, True) if not (control and s.control_problem())]


@pytest.mark.parametrize("facts_output", list(IMAGE_FACTS.values()), ids=list(IMAGE_FACTS))
@pytest.mark.parametrize("name, control", RUNS)
def test_every_scenario_dry_runs_showing_each_fault_and_check_in_phase_order(name, control, facts_output,
                                                                              monkeypatch):
    scenario = SCENARIOS[name]
    facts = facts_output and parse_facts(CommandResult("m", FACTS_COMMAND, 0, facts_output, "", 0, 0))
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": facts)
    lines = dryrun.plan_lines(scenario, scenario.lab.suite, control=control)
    assert lines[0] == f"# scenario {name} ({'control' if control else 'fault'} run) on {scenario.lab.suite}"
    phases = [PHASES.index(l[1:].split("]", 1)[0]) for l in lines if l.startswith("[")]
    assert phases == sorted(phases) and phases[0] == 0 and phases[-1] == len(PHASES) - 1
    if control:
        assert not any(l.startswith(("[arm]", "[armed-check]")) for l in lines)
    else:  # each fault's injection, named by its kind, in arm or inside the install track
        injected = {l.rsplit("    # ", 1)[-1] for l in lines if l.startswith(("[arm] ", "[install] "))}
        assert {f.kind for f in scenario.faults} <= injected
    checks = scenario.verify + scenario.observe + (() if control else scenario.expect)
    unshown = [c.name for c in checks if not any(f"    # {c.name}: " in l or f"(skipped: {c.name} applies to " in l
                                                  for l in lines)]
    assert unshown == [], f"checks the dry-run does not show: {unshown}"
    assert [l for l in lines if l.startswith("[verify] cluster: verify layer ")] == \
        [f"[verify] cluster: verify layer {n}    # reads {layer(n).READS}" for n in scenario.verify_layers]


@pytest.mark.parametrize("name", HOST_SCENARIOS)
@pytest.mark.parametrize("facts_output", [BOOKWORM_FACTS[1], SID_FACTS[1]], ids=["containerd-1.6", "containerd-2.1"])
def test_a_control_run_sends_exactly_what_dry_run_prints(name, facts_output, tmp_path, monkeypatch):
    """Every shipped scenario, both containerd lines: in a control run nothing stops early,
    so the whole plan executes against a remote that answers everything."""
    scenario = load(find(name))
    remote = AnswerEverything("node1", facts_output)
    clock = FakeClock()
    result = Engine(scenario, Options(runs_root=tmp_path / "runs", control=True),
                    FakeLabs(FakeLab({"node1": remote})), clock=clock, sleep=clock.sleep).run()
    facts = parse_facts(CommandResult("node1", FACTS_COMMAND, 0, facts_output, "", 0, 0))
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": facts)
    record = json.loads((result.directory / "run.json").read_text())
    assert_sent_as_printed(remote.calls, dryrun.plan_lines(scenario, "bookworm", control=True), record)


def test_a_fault_run_sends_exactly_what_dry_run_prints(tmp_path, monkeypatch):
    """A fault run, every phase, against a machine scripted to show the fault and the fix."""
    from tests.unit.test_engine import IP_FORWARD, ip_forward_remote, run, scenario_file

    scenario = scenario_file(tmp_path, IP_FORWARD)
    remote = ip_forward_remote()
    result, record, _ = run(scenario, remote, tmp_path)
    assert result.exit_code == 0 and remote.unscripted == []
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": BOOKWORM)
    assert_sent_as_printed(remote.calls, dryrun.plan_lines(scenario, "bookworm"), record)


def _merge_runs(commands_):
    """The comparison this file used to make: repeats merged on both sides."""
    return [c for i, c in enumerate(commands_) if i == 0 or c != commands_[i - 1]]


@pytest.mark.parametrize("change", ["doubled", "dropped"])
@pytest.mark.parametrize("step", ["check", "run"])
def test_a_step_doubled_or_dropped_is_caught_even_between_identical_neighbours(change, step, tmp_path,
                                                                                monkeypatch):
    """ip-forward-off's verify ends with `sysctl net.ipv4.ip_forward` twice in a row (the fault's
    own persistence check, then the observation): an engine that sent the check twice, or
    skipped it, looked right when repeats were merged. A run step too (the recovery's `sysctl -p`)."""
    from harness.scenario import engine
    from harness.scenario.plan import plan

    def changed(*args, **kwargs):
        steps = plan(*args, **kwargs)
        if step == "check":
            i = next(i for i, s in enumerate(steps) if s.phase == "verify" and s.name.startswith("sysctl-value: "))
            assert steps[i].command == steps[i + 1].command  # an identical neighbour
        else:
            i = next(i for i, s in enumerate(steps) if s.command.startswith("sysctl -p "))
        return steps[:i] + [steps[i]] * (2 if change == "doubled" else 0) + steps[i + 1:]

    monkeypatch.setattr(engine, "plan", changed)
    scenario = load(find("ip-forward-off"))
    remote = AnswerEverything("node1", BOOKWORM_FACTS[1])
    clock = FakeClock()
    result = Engine(scenario, Options(runs_root=tmp_path / "runs", control=True),
                    FakeLabs(FakeLab({"node1": remote})), clock=clock, sleep=clock.sleep).run()
    record = json.loads((result.directory / "run.json").read_text())
    facts = parse_facts(CommandResult("node1", FACTS_COMMAND, 0, BOOKWORM_FACTS[1], "", 0, 0))
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": facts)
    lines = dryrun.plan_lines(scenario, "bookworm", control=True)
    each_once, _ = expected_calls(lines, [], "node1")
    if step == "check" or change == "doubled":  # what merging repeats hid (a lone run step dropped it saw)
        assert _merge_runs(remote.calls) == _merge_runs(each_once)
    with pytest.raises(AssertionError):
        assert_sent_as_printed(remote.calls, lines, record)
