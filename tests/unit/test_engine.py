"""Engine sequencing against scripted machines: exact commands, in order, and verdicts."""

import json
import os
import textwrap

from harness.errors import BackendUnavailable
from harness.facts import NO_FAULT
from harness.probes.facts import COMMAND as FACTS
from tests.fake_remote import FakeRemote
from harness.scenario.engine import Engine, Options
from harness.scenario.load import load

BOOKWORM_FACTS = (0, "os=Debian GNU/Linux 12 (bookworm)\nkernel=6.1.0-50-cloud-amd64\n"
                     "containerd=containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3\n"
                     "runc=runc version 1.1.5+ds1\nsystemd=systemd 252 (252.39-1~deb12u2)\npid1=systemd\ncgroupfs=cgroup2fs\n")
SID_FACTS = (0, BOOKWORM_FACTS[1].replace("1.6.20~ds1 1.6.20~ds1-1+deb12u3", "2.1.9~ds1 2.1.9~ds1-1"))


class FakeLab:
    name = "fake-lab"

    def __init__(self, remotes):
        self.remotes = remotes
        self.downs = 0

    @property
    def machines(self):
        return list(self.remotes)

    def remote(self, name):
        return self.remotes[name]

    def ip(self, name):
        return "192.0.2.10"

    def role(self, name):
        return "node"

    gateway = "192.0.2.1"

    def collect_logs(self, name, dest):
        return []

    def describe(self):
        return {"name": self.name, "suite": "bookworm", "backend": "fake", "image": "none", "accel": "none"}

    def down(self, progress):
        self.downs += 1


class FakeLabs:
    def __init__(self, lab):
        self.lab = lab

    def up(self, scenario, suite, name, progress):
        return self.lab


class FakeClock:
    """Polls and reboots advance this clock instead of waiting."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def scenario_file(tmp_path, body):
    common = tmp_path / "_common.yaml"
    common.write_text("apiVersion: kubelab/v1\nkind: Scenario\nlab:\n  suite: bookworm\n  machines: [{name: node1}]\n")
    path = tmp_path / "demo.yaml"
    path.write_text("name: demo\nsummary: a demo\nimport: [_common.yaml]\n" + textwrap.dedent(body))
    return load(path)


IP_FORWARD = """
faults:
  - {kind: sysctl-value, params: {key: net.ipv4.ip_forward, value: "0", good: "1"}}
expect:
  - {name: ip-off, probe: {sysctl: {key: net.ipv4.ip_forward}}, equals: "0"}
recover:
  - {name: fix, recover_faults: true}
  - {name: again, reboot: true}
verify:
  - {name: ip-on, probe: {sysctl: {key: net.ipv4.ip_forward}}, equals: "1"}
evidence:
  - {file: /etc/sysctl.d/99-kubernetes.conf}
"""


def ip_forward_remote(armed=True, after_fix="1"):
    r = FakeRemote("node1")
    r.expect(FACTS, BOOKWORM_FACTS)
    r.expect("sysctl -w net.ipv4.ip_forward=0", (0, "net.ipv4.ip_forward = 0\n"))
    r.expect("sysctl net.ipv4.ip_forward", (0, f"net.ipv4.ip_forward = {0 if armed else 1}\n"),
             (0, f"net.ipv4.ip_forward = {0 if armed else 1}\n"), (0, f"net.ipv4.ip_forward = {after_fix}\n"))
    r.expect("printf '%s = %s\\n' net.ipv4.ip_forward 1 > /etc/sysctl.d/99-kubernetes.conf", (0, ""))
    r.expect("sysctl -p /etc/sysctl.d/99-kubernetes.conf", (0, "net.ipv4.ip_forward = 1\n"))
    r.expect("cat /proc/sys/kernel/random/boot_id", (0, "boot-a\n"), (0, "boot-b\n"))
    r.expect("systemctl reboot", (0, ""))
    r.expect("cat /etc/sysctl.d/99-kubernetes.conf", (0, "net.ipv4.ip_forward = 1\n"))
    return r


def run(scenario, remote, tmp_path, **opts):
    lab = FakeLab({"node1": remote})
    clock = FakeClock()
    result = Engine(scenario, Options(runs_root=tmp_path / "runs", **opts), FakeLabs(lab),
                    clock=clock, sleep=clock.sleep).run()
    record = json.loads((result.directory / "run.json").read_text())
    return result, record, lab


def test_fault_run_sends_exactly_these_commands_in_order(tmp_path):
    remote = ip_forward_remote()
    result, record, lab = run(scenario_file(tmp_path, IP_FORWARD), remote, tmp_path)
    assert remote.unscripted == []
    assert remote.calls == [
        FACTS,
        "sysctl -w net.ipv4.ip_forward=0",                      # arm
        "sysctl net.ipv4.ip_forward",                           # armed-check
        "sysctl net.ipv4.ip_forward",                           # expect
        "printf '%s = %s\\n' net.ipv4.ip_forward 1 > /etc/sysctl.d/99-kubernetes.conf",
        "sysctl -p /etc/sysctl.d/99-kubernetes.conf",           # recover
        "cat /proc/sys/kernel/random/boot_id", "systemctl reboot", "cat /proc/sys/kernel/random/boot_id",
        "sysctl net.ipv4.ip_forward",                           # verify: the scenario's check
        "sysctl net.ipv4.ip_forward",                           # verify: the fault's persistence check
        "cat /etc/sysctl.d/99-kubernetes.conf",                 # collect
    ]
    assert [o["check"] for o in record["observations"]] == [
        "net.ipv4.ip_forward is 0", "ip-off", "ip-on", "sysctl-value: net.ipv4.ip_forward is 1"]
    assert (result.exit_code, result.result) == (0, "met")
    assert [p["name"] for p in record["phases"]] == ["prepare", "arm", "armed-check", "install", "expect",
                                                   "recover", "verify", "collect", "teardown"]
    assert [p["status"] for p in record["phases"]] == ["ok", "ok", "ok", "skipped", "ok", "ok", "ok", "ok", "ok"]
    assert record["status"] == "complete" and lab.downs == 1
    assert record["machines"]["node1"]["versions"]["containerd"] == "1.6.20~ds1"
    for name in ("report.md", "report.html", "junit.xml"):
        assert (result.directory / name).exists()


def test_fault_that_did_not_take_is_an_infrastructure_failure(tmp_path):
    remote = ip_forward_remote(armed=False)
    result, record, lab = run(scenario_file(tmp_path, IP_FORWARD), remote, tmp_path)
    assert (result.exit_code, result.result) == (2, "error")
    assert "armed-check failed" in result.reason and "sysctl-value on node1" in result.reason
    status = {p["name"]: (p["status"], p["reason"]) for p in record["phases"]}
    for later in ("expect", "recover", "verify"):
        assert status[later] == ("skipped", "skipped: armed-check failed")
    assert status["collect"][0] == "ok" and status["teardown"][0] == "ok" and lab.downs == 1
    assert remote.unscripted == []


def test_expectation_not_met_still_recovers_and_verifies(tmp_path):
    body = IP_FORWARD.replace('{name: ip-off, probe: {sysctl: {key: net.ipv4.ip_forward}}, equals: "0"}',
                              '{name: ip-off, probe: {sysctl: {key: net.ipv4.ip_forward}}, pattern: "no such line"}')
    remote = ip_forward_remote()
    result, record, _ = run(scenario_file(tmp_path, body), remote, tmp_path)
    assert (result.exit_code, result.result) == (1, "not-met")
    assert result.reason == "1 check(s) not met: expect ip-off on node1"
    assert [o["met"] for o in record["observations"] if o["kind"] != "armed"] == [False, True, True]
    assert remote.unscripted == []


def test_control_run_injects_nothing_but_prepares_the_host(tmp_path):
    remote = ip_forward_remote(after_fix="1")
    remote.script["sysctl net.ipv4.ip_forward"] = [(0, "net.ipv4.ip_forward = 1\n")]
    timed = IP_FORWARD + "facts:\n  - {name: fixed_s, seconds: ip-on}\n  - {name: forward, value: ip-on}\n"
    result, record, _ = run(scenario_file(tmp_path, timed), remote, tmp_path, control=True)
    assert "sysctl -w net.ipv4.ip_forward=0" not in remote.calls
    assert "sysctl -p /etc/sysctl.d/99-kubernetes.conf" in remote.calls
    status = {p["name"]: (p["status"], p["reason"]) for p in record["phases"]}
    assert status["arm"] == status["armed-check"] == ("skipped", "control run: no faults")
    assert [o["kind"] for o in record["observations"]] == ["verify", "verify"]
    assert record["mode"] == "control" and result.exit_code == 0
    assert result.directory.name.endswith("-control")
    # no fix happened, so nothing is timed from one; what was read is still a fact
    assert record["facts"] == {"fixed_s": NO_FAULT, "forward": "1"}


DROPIN_BY_VERSION = """
expect:
  - name: old-path
    probe: {containerd-config: {key: 'plugins."io.containerd.grpc.v1.cri".cni.bin_dir'}}
    equals: /opt/cni/bin
    versions: {containerd: "<2.0"}
  - name: new-path
    probe: {containerd-config: {key: 'plugins."io.containerd.cri.v1.runtime".cni.bin_dir'}}
    equals: /usr/lib/cni
    versions: {containerd: ">=2.0"}
"""


def test_expectations_are_chosen_by_the_machines_versions(tmp_path):
    remote = FakeRemote("node1")
    remote.expect(FACTS, SID_FACTS)
    remote.expect("containerd config dump", (0, "version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dir = '/usr/lib/cni'\n"))
    result, record, _ = run(scenario_file(tmp_path, DROPIN_BY_VERSION), remote, tmp_path)
    old, new = record["observations"]
    assert old["check"] == "old-path" and old["met"] is None
    assert old["matched"] == "not applicable: versions containerd <2.0 (machine has containerd 2.1.9~ds1)"
    assert new["met"] is True and new["matched"] == "/usr/lib/cni"
    assert result.exit_code == 0 and remote.unscripted == []


def test_a_failing_command_in_recovery_stops_the_run_with_exit_2(tmp_path):
    remote = ip_forward_remote()
    remote.script["sysctl -p /etc/sysctl.d/99-kubernetes.conf"] = [(255, "", "sysctl: permission denied on key 'x'\n")]
    result, record, lab = run(scenario_file(tmp_path, IP_FORWARD), remote, tmp_path)
    assert result.exit_code == 2
    recover = next(p for p in record["phases"] if p["name"] == "recover")
    assert recover["status"] == "failed"
    assert "`sysctl -p /etc/sysctl.d/99-kubernetes.conf` on node1 exited 255" in recover["reason"]
    assert "permission denied" in recover["reason"]
    assert lab.downs == 1


def test_keep_leaves_the_lab_up(tmp_path):
    remote = ip_forward_remote()
    result, record, lab = run(scenario_file(tmp_path, IP_FORWARD), remote, tmp_path, keep=True)
    assert lab.downs == 0
    assert record["phases"][-1] == {**record["phases"][-1], "name": "teardown", "status": "skipped",
                                    "reason": "--keep: the lab stays up"}


def test_interrupt_leaves_an_incomplete_record_and_tears_down(tmp_path):
    remote = ip_forward_remote()
    calls = {"n": 0}
    real_run = remote.run

    def interrupting_run(command, **kw):
        if command == "sysctl net.ipv4.ip_forward":
            calls["n"] += 1
            if calls["n"] == 2:  # the first poll of the expect phase
                raise KeyboardInterrupt
        return real_run(command, **kw)

    remote.run = interrupting_run
    result, record, lab = run(scenario_file(tmp_path, IP_FORWARD), remote, tmp_path)
    assert (result.exit_code, result.result) == (2, "interrupted")
    assert record["status"] == "incomplete"
    expect = next(p for p in record["phases"] if p["name"] == "expect")
    assert (expect["status"], expect["reason"]) == ("failed", "interrupted")
    assert [p["name"] for p in record["phases"]][-2:] == ["collect", "teardown"] and lab.downs == 1
    assert "incomplete" in (result.directory / "report.md").read_text().lower()


def test_after_reboot_check_reboots_first(tmp_path):
    body = IP_FORWARD.replace("  - {name: again, reboot: true}\n", "").replace(
        '{name: ip-on, probe: {sysctl: {key: net.ipv4.ip_forward}}, equals: "1"}',
        '{name: ip-on, probe: {sysctl: {key: net.ipv4.ip_forward}}, equals: "1", after_reboot: true}')
    remote = ip_forward_remote()
    result, record, _ = run(scenario_file(tmp_path, body), remote, tmp_path)
    assert result.exit_code == 0 and remote.unscripted == []
    i = remote.calls.index("systemctl reboot")
    assert remote.calls[i - 2] == "sysctl -p /etc/sysctl.d/99-kubernetes.conf"   # recover, then
    assert remote.calls[i + 2] == "sysctl net.ipv4.ip_forward"                  # a new boot id, then the check
    reboot = next(s for s in record["steps"] if s["phase"] == "verify")
    assert reboot["name"] == "reboot before check" and "boot id boot-a -> boot-b" in (
        result.directory / reboot["log"]).read_text()


def test_a_bug_is_an_error_with_its_traceback_kept(tmp_path):
    remote = ip_forward_remote()
    del remote.script["sysctl -w net.ipv4.ip_forward=0"]  # the engine sends a command nobody scripted
    result, record, lab = run(scenario_file(tmp_path, IP_FORWARD), remote, tmp_path)
    assert remote.unscripted == ["sysctl -w net.ipv4.ip_forward=0"]
    assert result.exit_code == 2 and lab.downs == 1
    arm = next(p for p in record["phases"] if p["name"] == "arm")
    assert arm["reason"].startswith("internal error: UnscriptedCommand: node1: unscripted command")
    assert "Traceback" in (result.directory / "steps" / "arm-internal-error.log").read_text()


def test_a_run_whose_every_expectation_was_gated_out_is_not_met(tmp_path):
    only_new = DROPIN_BY_VERSION.split("  - name: new-path")[0]  # keep only the containerd <2.0 expectation
    remote = FakeRemote("node1")
    remote.expect(FACTS, SID_FACTS)
    result, record, _ = run(scenario_file(tmp_path, only_new), remote, tmp_path)
    assert [o["met"] for o in record["observations"]] == [None]
    assert result.exit_code == 1 and record["verdict"]["result"] == "not-met"
    assert record["verdict"]["reason"].startswith("no expectation was evaluated on these machines: old-path")


POWER_CYCLE = IP_FORWARD.replace("  - {name: again, reboot: true}\n", """\
  - {name: console, power_cycle: {kernel_args: systemd.mask=kubelet.service}}
  - {name: plain, power_cycle: true}
  - {name: only-old, run: "echo old", versions: {containerd: "<1.6"}}
""")


def test_a_power_cycle_goes_through_the_backend_and_a_gated_step_is_recorded_as_skipped(tmp_path):
    class PoweredLab(FakeLab):
        def __init__(self, remotes):
            super().__init__(remotes)
            self.cycles = []

        def power_cycle(self, machine, kernel_args, timeout):
            self.cycles.append((machine, kernel_args))
            return f"booted with `{kernel_args}`" if kernel_args else "booted"

    remote = ip_forward_remote()
    lab = PoweredLab({"node1": remote})
    clock = FakeClock()
    result = Engine(scenario_file(tmp_path, POWER_CYCLE), Options(runs_root=tmp_path / "runs"), FakeLabs(lab),
                    clock=clock, sleep=clock.sleep).run()
    record = json.loads((result.directory / "run.json").read_text())
    assert result.exit_code == 0, result.reason
    assert lab.cycles == [("node1", "systemd.mask=kubelet.service"), ("node1", "")]
    assert "systemctl reboot" not in remote.calls and "echo old" not in remote.calls
    recover = [s for s in record["steps"] if s["phase"] == "recover"]
    assert [s["name"] for s in recover][-3:] == ["console", "plain", "only-old"]
    assert "booted with `systemd.mask=kubelet.service`" in (result.directory / recover[-3]["log"]).read_text()
    assert recover[-1]["command"] == "(skipped: only-old applies to containerd <1.6)" and recover[-1]["exit_code"] is None


def test_host_steps_write_their_file_then_run_on_the_host_and_both_are_recorded(tmp_path):
    import sys

    from harness.evidence.record import RunRecord
    from harness.host_command import HostCommand
    from harness.progress import Progress
    from harness.scenario.plan import Step

    scenario = scenario_file(tmp_path, "")
    engine = Engine(scenario, Options(runs_root=tmp_path / "runs"), FakeLabs(None), Progress(quiet=True))
    engine.record = RunRecord.create(scenario, "fault", "bookworm", tmp_path / "runs")
    inventory = engine.record.directory / "install" / "inventory.yml"
    reads = HostCommand(argv=(sys.executable, "-c", "import sys; print('PLAY [all]'); print(open(sys.argv[1]).read())",
                              str(inventory)), cwd=tmp_path)
    engine._act(Step("install", "host", "host-write", "kubespray: inventory.yml", str(inventory),
                     content="all:\n  hosts: {cp1: {}}\n"))
    engine._act(Step("install", "host", "host-run", "kubespray: cluster.yml", host=reads, timeout=60))
    assert inventory.read_text() == "all:\n  hosts: {cp1: {}}\n" and inventory.stat().st_mode & 0o777 == 0o600
    written, ran = engine.record.data["steps"]
    assert (written["machine"], written["command"], written["exit_code"]) == ("host", f"write {inventory}", 0)
    assert "all:\n  hosts: {cp1: {}}" in (engine.record.directory / written["log"]).read_text()
    assert (ran["machine"], ran["exit_code"]) == ("host", 0)
    assert "PLAY [all]\nall:\n  hosts: {cp1: {}}" in (engine.record.directory / ran["log"]).read_text()


def test_a_host_check_reads_the_plays_the_host_steps_recorded(tmp_path):
    from harness.evidence.record import RunRecord
    from harness.model import Check, ProbeRef
    from harness.progress import Progress
    from harness.scenario.plan import Step

    from .test_host_probes import plays

    scenario = scenario_file(tmp_path, "")
    engine = Engine(scenario, Options(runs_root=tmp_path / "runs"), FakeLabs(None), Progress(quiet=True))
    engine.record = RunRecord.create(scenario, "fault", "bookworm", tmp_path / "runs")
    engine.record.data["steps"].append({"name": "kubespray: cluster.yml", "machine": "host", "ansible": plays()[0]})
    check = Check(name="download-404", probe=ProbeRef("ansible-failure", {"task": "^download :", "host": "node1"}),
                  target="host", pattern="HTTP Error 404")
    step = Step("expect", "host", "check", check.name, "", check, "expect")
    obs = engine._observe(step, {"started_at": 0.0})
    assert obs["met"] is True and obs["machine"] == "host"
    assert '"response": "HTTP Error 404: File not found"' in obs["matched"]


def test_versions_read_again_after_an_install_that_replaces_the_runtime_keep_both(tmp_path):
    from harness.evidence.record import RunRecord
    from harness.progress import Progress
    from harness.scenario.plan import Step

    remote = FakeRemote("node1")
    remote.expect(FACTS, (0, "os=Debian GNU/Linux forky/sid\nkernel=7.2\n"
                            "containerd=containerd github.com/containerd/containerd/v2 v2.3.4 abc\n"
                            "containerd_package=\nrunc=runc version 1.4.3\nsystemd=systemd 262 (262.1-1)\n"
                            "pid1=systemd\ncgroupfs=cgroup2fs\n"))
    scenario = scenario_file(tmp_path, "")
    engine = Engine(scenario, Options(runs_root=tmp_path / "runs"), FakeLabs(None), Progress(quiet=True))
    engine.lab = FakeLab({"node1": remote})
    engine.record = RunRecord.create(scenario, "fault", "sid", tmp_path / "runs")
    engine.record.data["machines"]["node1"] = {"versions": {"containerd": "2.1.9+ds1-5", "runc": "1.3.6+ds1"}}
    engine._machine_versions(Step("collect", "node1", "machine-versions", "versions after the install", FACTS))
    node = json.loads((engine.record.directory / "run.json").read_text())["machines"]["node1"]
    assert node["versions"] == {"containerd": "2.1.9+ds1-5", "runc": "1.3.6+ds1"}  # as the image had them
    assert (node["versions_after_install"]["containerd"], node["versions_after_install"]["runc"]) == ("2.3.4", "1.4.3")
    assert node["versions_after_install"]["containerd_package"] == ""  # Debian's package is gone


class CountingLab(FakeLab):
    """A lab whose emulators report CPU time: node1 7 s more at each read; node2 power-cycled into a
    new emulator (domain ID 2) before the fifth read, which has by then used more than the old one."""

    def __init__(self, remotes, fails_at=None):
        super().__init__(remotes)
        self.reads = 0
        self.fails_at = fails_at

    def cpu_seconds(self):
        self.reads += 1
        if self.reads == self.fails_at:
            raise BackendUnavailable("libvirtd is not answering")
        return {"node1": (1, 7.0 * self.reads), "node2": (1, 100.0 + self.reads) if self.reads < 5 else (2, 500.0)}


def test_each_phase_records_the_cpu_seconds_each_guest_used_during_it(tmp_path):
    lab = CountingLab({"node1": ip_forward_remote()})
    clock = FakeClock()
    result = Engine(scenario_file(tmp_path, IP_FORWARD), Options(runs_root=tmp_path / "runs"), FakeLabs(lab),
                    clock=clock, sleep=clock.sleep).run()
    phases = {p["name"]: p for p in json.loads((result.directory / "run.json").read_text())["phases"]}
    assert "guest_cpu_s" not in phases["prepare"]  # no lab before it: nothing to take a difference from
    assert phases["arm"]["guest_cpu_s"] == {"node1": 7.0, "node2": 1.0}
    assert "guest_cpu_s" not in phases["armed-check"]  # node2's emulator was replaced: no partial count
    assert phases["expect"]["guest_cpu_s"] == {"node1": 7.0, "node2": 0.0}
    assert all(p["host_cpu_s"]["busy"] >= 0 for p in phases.values() if p["status"] == "ok")


def test_a_backend_that_cannot_answer_costs_the_phase_nothing(tmp_path):
    lab = CountingLab({"node1": ip_forward_remote()}, fails_at=3)  # arm's last read
    clock = FakeClock()
    result = Engine(scenario_file(tmp_path, IP_FORWARD), Options(runs_root=tmp_path / "runs"), FakeLabs(lab),
                    clock=clock, sleep=clock.sleep).run()
    record = json.loads((result.directory / "run.json").read_text())
    arm = next(p for p in record["phases"] if p["name"] == "arm")
    assert arm["status"] == "ok" and "guest_cpu_s" not in arm
    assert record["verdict"]["result"] == "met" and lab.downs == 1


def test_a_lab_that_cannot_tell_its_cpu_records_none_but_the_hosts_cpu_is_recorded(tmp_path):
    _, record, _ = run(scenario_file(tmp_path, IP_FORWARD), ip_forward_remote(), tmp_path)
    assert not any("guest_cpu_s" in p for p in record["phases"])
    ran = [p for p in record["phases"] if p["status"] == "ok"]
    assert ran and all(sorted(p["host_cpu_s"]) == ["busy", "idle"] and min(p["host_cpu_s"].values()) >= 0
                       for p in ran)


def test_the_hosts_cpu_times_are_read_from_proc_stat():
    from harness import host

    tick = os.sysconf("SC_CLK_TCK")
    # user nice system idle iowait irq softirq steal guest guest_nice
    busy, idle = host.cpu_times(f"cpu  {5 * tick} 0 {tick} {10 * tick} {2 * tick} 0 0 {4 * tick} {3 * tick} 0\n"
                                "cpu0 1 2 3\n")
    assert (busy, idle) == (6.0, 12.0)  # guest time is inside user already; steal was never the host's
    busy, idle = host.cpu_times()
    assert busy > 0 and idle >= 0
