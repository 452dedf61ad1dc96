"""The kubeadm track on scripted machines: what it sends, in order, equals what dry-run
prints; captured values reach the join; the kubeadm config it writes is valid v1beta4."""

import json
import time
import tomllib
from dataclasses import replace
from functools import cached_property

import pytest
import yaml

from harness import tuning
from harness.artifacts import kit as kits
from harness.artifacts.versions import DEFAULT_KUBERNETES
from harness.probes.facts import COMMAND as FACTS_COMMAND
from harness.probes.facts import parse as parse_facts
from harness.remote.result import CommandResult
from harness.scenario import dryrun
from harness.scenario.engine import Engine, Options
from harness.scenario.files import all_files, find
from harness.scenario.load import load
from harness.scenario.plan import BOOT_ID
from tests.unit.test_cluster_probes import CONTROL_PLANE_PODS, FakeCluster, node, pod
from tests.unit.test_dryrun import assert_sent_as_printed
from tests.unit.host_commands import HostCommands
from tests.unit.test_engine import SID_FACTS, FakeClock

HASH = "sha256:" + "ab" * 32
INIT_OUT = ("Your Kubernetes control-plane has initialized successfully!\n\n"
            "kubeadm join 192.0.2.10:6443 --token abcdef.0123456789abcdef \\\n"
            f"\t--discovery-token-ca-cert-hash {HASH} \n")
KIT = {"kubernetes": f"v{DEFAULT_KUBERNETES}", "kubeadm_images": ["registry.k8s.io/pause:3.10.2"],
       "files": "/var/cache/kubelab/artifacts/files/test-kit"}  # a kit record, as artifacts.build writes it


class Machine:
    def __init__(self, name):
        self.name, self.calls, self.stdin, self.boots = name, [], {}, 0

    def run(self, command, timeout=60.0, check=False, stdin=None):
        self.calls.append(command)
        if stdin is not None:
            self.stdin[command] = stdin.decode()
        out = ""
        if command == FACTS_COMMAND:
            out = SID_FACTS[1]
        elif "kubeadm init" in command:
            out = INIT_OUT
        elif command.startswith("cat /etc/kubernetes/admin.conf"):
            out = "apiVersion: v1\nkind: Config\n"
        elif command == BOOT_ID:
            out = f"boot-{self.boots}\n"
        return CommandResult(self.name, command, 0, out, "", time.time(), 0.001)

    def close(self):
        pass


class TwoNodeLab:
    name = "fake-k8s"
    gateway = "192.0.2.1"

    def __init__(self):
        self.remotes = {"cp1": Machine("cp1"), "w1": Machine("w1")}

    @cached_property
    def host_commands(self):  # the host's side: under TCG the CNI is applied from there
        return HostCommands()

    machines = property(lambda self: list(self.remotes))
    remote = lambda self, m: self.remotes[m]  # noqa: E731
    ip = lambda self, m: {"cp1": "192.0.2.10", "w1": "192.0.2.11"}[m]  # noqa: E731
    role = lambda self, m: {"cp1": "control-plane", "w1": "worker"}[m]  # noqa: E731
    collect_logs = lambda self, m, dest: []  # noqa: E731

    accel = "qemu"  # the domain type, as measured

    def describe(self):
        return {"name": self.name, "suite": "sid", "backend": "fake", "image": "none", "accel": self.accel}

    def tuning(self):
        return tuning.decide(self.accel)

    def down(self, progress):
        pass


class Labs:
    def __init__(self, lab):
        self.lab = lab

    def up(self, *args):
        return self.lab


def healthy_cluster(kubeconfig):
    web = [pod("kubelab-web-a"), pod("kubelab-web-b", node_name="w1")]
    return FakeCluster(nodes=[node("cp1", "True", "10.244.0.0/24"), node("w1", "True", "10.244.1.0/24")],
                       pods=web + [pod("kubelab-probe"), pod("kube-scheduler-cp1", owner="Node")] + CONTROL_PLANE_PODS,
                       exec_out="kubelab-web-a\nkubelab-web-b\n")


def run(control, tmp_path):
    lab = TwoNodeLab()
    clock = FakeClock()
    result = Engine(load(find("kubeadm-baseline")), Options(runs_root=tmp_path / "runs", control=control),
                    Labs(lab), clock=clock, sleep=clock.sleep, cluster_client=healthy_cluster, kit=KIT, host_run=lab.host_commands).run()
    return result, lab


@pytest.mark.parametrize("control", [False, True], ids=["fault", "control"])
def test_each_machine_gets_exactly_what_dry_run_prints(control, tmp_path, monkeypatch):
    result, lab = run(control, tmp_path)
    facts = {"os": "x", "kernel": "x", "containerd": "2.1.9~ds1 2.1.9~ds1-1", "runc": "1.3.6", "systemd": "x",
             "pid1": "systemd", "cgroupfs": "cgroup2fs"}
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": facts)
    monkeypatch.setattr("harness.artifacts.kit.load_kit", lambda version: KIT)
    lines = dryrun.plan_lines(load(find("kubeadm-baseline")), "sid", control=control, tuned=lab.tuning())
    record = json.loads((result.directory / "run.json").read_text())
    for name, machine in lab.remotes.items():
        assert_sent_as_printed(machine.calls, lines, record, name)


def test_the_join_gets_the_hash_kubeadm_printed_and_the_config_is_v1beta4(tmp_path):
    result, lab = run(False, tmp_path)
    cp, w = lab.remotes["cp1"], lab.remotes["w1"]
    init_cfg = next(v for k, v in cp.stdin.items() if "kubeadm-config.yaml" in k)
    docs = list(yaml.safe_load_all(init_cfg))
    assert [d["kind"] for d in docs] == ["InitConfiguration", "ClusterConfiguration", "KubeletConfiguration"]
    assert docs[0]["localAPIEndpoint"]["advertiseAddress"] == "192.0.2.10"
    assert {"name": "node-ip", "value": "192.0.2.10"} in docs[0]["nodeRegistration"]["kubeletExtraArgs"]
    assert docs[1]["kubernetesVersion"] == f"v{DEFAULT_KUBERNETES}" and docs[1]["networking"]["podSubnet"] == "10.244.0.0/16"
    join_cfg = yaml.safe_load(next(v for k, v in w.stdin.items() if "kubeadm-join.yaml" in k))
    assert join_cfg["discovery"]["bootstrapToken"]["caCertHashes"] == [HASH]
    assert join_cfg["discovery"]["bootstrapToken"]["apiServerEndpoint"] == "192.0.2.10:6443"
    assert join_cfg["discovery"]["bootstrapToken"]["token"] == docs[0]["bootstrapTokens"][0]["token"]
    containerd = next(v for k, v in cp.stdin.items() if "containerd/config.toml" in k)
    assert "version = 3" in containerd and "SystemdCgroup = true" in containerd  # sid: containerd 2.x


def test_admin_conf_stays_private(tmp_path):
    result, _ = run(False, tmp_path)
    private = result.directory / "private" / "cp1-admin.conf"
    assert private.read_text().startswith("apiVersion: v1") and oct(private.stat().st_mode)[-3:] == "600"
    for report in ("report.md", "report.html"):
        assert "kind: Config" not in (result.directory / report).read_text()


def test_flannel_gets_the_pod_cidr_and_the_lab_interface(tmp_path):
    """No default route in the lab: flanneld is told its interface; under TCG (this fake lab's
    acceleration) its iptables check is also spaced out (test_tuning: only that differs from KVM),
    and the manifest is applied from the host, with the kit's kubectl and the run's admin.conf."""
    result, lab = run(False, tmp_path)
    assert not [k for k in lab.remotes["cp1"].stdin if "flannel" in k]
    folder = result.directory / "install"
    (apply,) = lab.host_commands.ran
    assert apply.cwd == folder and apply.path_prefix == f"{KIT['files']}/release/{KIT['kubernetes']}/bin/linux/amd64"
    assert "kubectl --kubeconfig ../private/cp1-admin.conf --cache-dir kubectl-cache apply -f kube-flannel.yml" \
        in apply.argv[2]
    assert (folder / "../private/cp1-admin.conf").resolve().read_text() == "apiVersion: v1\nkind: Config\n"
    docs = list(yaml.safe_load_all((folder / "kube-flannel.yml").read_text()))
    daemonset = next(d for d in docs if d and d["kind"] == "DaemonSet")
    assert daemonset["spec"]["template"]["spec"]["containers"][0]["args"] == [
        "--ip-masq", "--kube-subnet-mgr", "--iface=eth0", f"--iptables-resync={tuning.TCG_FLANNEL_IPTABLES_RESYNC}"]
    config = next(d for d in docs if d and d["kind"] == "ConfigMap")
    assert '"Network": "10.244.0.0/16"' in config["data"]["net-conf.json"]


def test_the_record_has_the_versions_the_running_cluster_reports(tmp_path):
    result, _ = run(False, tmp_path)
    record = json.loads((result.directory / "run.json").read_text())
    assert record["cluster"]["versions"]["api_server"] == KIT["kubernetes"]
    assert record["cluster"]["versions"]["kubelet"] == {"cp1": KIT["kubernetes"], "w1": KIT["kubernetes"]}
    assert record["cluster"]["versions"]["images"]["flannel"] == [kits.FLANNEL_CNI_IMAGE, kits.FLANNEL_IMAGE]
    versions = (result.directory / "report.md").read_text().split("## Versions")[1].split("\n## ")[0]
    assert f"| API server | {KIT['kubernetes']} | GET /version (gitVersion) |" in versions
    assert f"| kubelet on w1 | {KIT['kubernetes']} |" in versions
    assert "| etcd | 3.6.8-0 (registry.k8s.io/etcd:3.6.8-0) |" in versions


INIT_LOG = f"[init] Using Kubernetes version: v{DEFAULT_KUBERNETES}\n" + "".join(
    f"[preflight] line {i} of what kubeadm init printed\n" for i in range(57))


class LoggedInit(Machine):
    """A node of flannel-no-brnetfilter: br_netfilter blocked (modprobe fails), and on cp1
    kubeadm init's output in /root/kubeadm-init.log, as the track tees it."""

    def run(self, command, timeout=60.0, check=False, stdin=None):
        said = {"cat /root/kubeadm-init.log": (0, INIT_LOG), "modprobe br_netfilter": (1, "")}.get(command)
        if said:
            self.calls.append(command)
            return CommandResult(self.name, command, said[0], said[1], "", time.time(), 0.001)
        return super().run(command, timeout, check, stdin)


def test_an_absent_check_on_the_init_log_is_one_console_line_and_the_whole_log_in_the_record(tmp_path, capsys):
    lab, clock = TwoNodeLab(), FakeClock()
    lab.remotes = {m: LoggedInit(m) for m in lab.remotes}
    result = Engine(load(find("flannel-no-brnetfilter")), Options(runs_root=tmp_path / "runs"), Labs(lab),
                    clock=clock, sleep=clock.sleep, cluster_client=healthy_cluster, kit=KIT, host_run=lab.host_commands).run()
    console = [line for line in capsys.readouterr().err.splitlines() if "init-has-no-br-netfilter-check" in line]
    assert [line.split("] ", 1)[1] for line in console] == [
        "expect: init-has-no-br-netfilter-check on cp1: met: "
        f"[init] Using Kubernetes version: v{DEFAULT_KUBERNETES} (+57 lines in the record)"]
    record = json.loads((result.directory / "run.json").read_text())
    obs = next(o for o in record["observations"] if o["check"] == "init-has-no-br-netfilter-check")
    assert obs["met"] is True and obs["value"] == INIT_LOG
    assert INIT_LOG in (result.directory / obs["log"]).read_text()
    assert ("| init-has-no-br-netfilter-check | cp1 | ✔ met | no line matches 'bridge-nf-call-iptables' "
            f"(58 lines read) | [log]({obs['log']}) |") in (result.directory / "report.md").read_text()


class NoVersion(FakeCluster):
    def version(self):
        raise OSError("Connection refused")


def test_a_cluster_that_does_not_answer_is_recorded_as_not_read(tmp_path):
    lab, clock = TwoNodeLab(), FakeClock()
    healthy = healthy_cluster(None)
    result = Engine(load(find("kubeadm-baseline")), Options(runs_root=tmp_path / "runs"), Labs(lab),
                    clock=clock, sleep=clock.sleep, kit=KIT, host_run=lab.host_commands,
                    cluster_client=lambda kubeconfig: NoVersion(nodes=healthy._nodes, pods=healthy._pods,
                                                                exec_out=healthy._exec)).run()
    record = json.loads((result.directory / "run.json").read_text())
    assert record["cluster"]["error"] == "the API did not answer within 60s: OSError: Connection refused"
    assert {p["name"]: p["status"] for p in record["phases"]}["collect"] == "ok"  # a reading, not a check
    assert result.exit_code != 2 and "version" not in result.reason
    assert "Not read: the API did not answer within 60s" in (result.directory / "report.md").read_text()


PREFLIGHT_OUT = ("[preflight] Running pre-flight checks\n[preflight] Some fatal errors occurred:\n"
                 "\t[ERROR FileContent--proc-sys-net-ipv4-ip_forward]: /proc/sys/net/ipv4/ip_forward contents are not set to 1\n"
                 "[preflight] If you know what you are doing, you can make a check non-fatal with "
                 "`--ignore-preflight-errors=...`\nerror: error execution phase preflight: preflight checks failed\n")


class PreflightStops(Machine):
    """cp1 of ip-forward-preflight: the first init stops at preflight, the one after the fix succeeds."""

    def __init__(self, name):
        super().__init__(name)
        self.inits, self.forward = 0, "0"

    def run(self, command, timeout=60.0, check=False, stdin=None):
        if "kubeadm init" in command:
            self.inits += 1
            self.calls.append(command)
            if self.inits == 1:
                self.log, self.rc = PREFLIGHT_OUT, 1
                return CommandResult(self.name, command, 1, PREFLIGHT_OUT, "", time.time(), 0.001)
            self.log, self.rc = INIT_OUT, 0
            return CommandResult(self.name, command, 0, INIT_OUT, "", time.time(), 0.001)
        files = {"cat /root/kubeadm-init.log": lambda: self.log, "cat /root/kubeadm-init.log.exit": lambda: f"{self.rc}\n",
                 "ls /etc/kubernetes/manifests 2>/dev/null | wc -l": lambda: "0\n" if self.inits < 2 else "4\n",
                 "sysctl net.ipv4.ip_forward": lambda: f"net.ipv4.ip_forward = {self.forward}\n"}
        if command in files:
            self.calls.append(command)
            return CommandResult(self.name, command, 0, files[command](), "", time.time(), 0.001)
        if command.startswith("sysctl -p"):
            self.forward = "1"
        return super().run(command, timeout, check, stdin)


class OneNodeLab(TwoNodeLab):
    def __init__(self):
        self.remotes = {"cp1": PreflightStops("cp1")}


class OneNodeCluster(FakeCluster):
    def exec(self, namespace, pod_name, argv, timeout=30):
        self.execs.append(argv)
        if "nslookup" in " ".join(argv):
            return "Server: 10.96.0.10\n\nName: kubernetes.default.svc.cluster.local\nAddress: 10.96.0.1\n"
        return "kubelab-web-a\nkubelab-web-b\n"


def one_node_cluster(kubeconfig):
    web = [pod("kubelab-web-a"), pod("kubelab-web-b")]
    return OneNodeCluster(nodes=[node("cp1", "True", "10.244.0.0/24")], pods=web + [pod("kubelab-probe")])


def test_an_init_the_fault_stops_is_an_expected_failure_then_the_reinstall_recovers(tmp_path, monkeypatch, capsys):
    lab, clock = OneNodeLab(), FakeClock()
    scenario = load(find("ip-forward-preflight"))
    result = Engine(scenario, Options(runs_root=tmp_path / "runs"), Labs(lab), clock=clock, sleep=clock.sleep,
                    cluster_client=one_node_cluster, kit=KIT, host_run=lab.host_commands).run()
    assert result.exit_code == 0, result.reason
    console = capsys.readouterr().err.splitlines()
    # a step that did not exit 0 has its own line (a quick one that did, only the live line)
    assert any(line.endswith("] install: kubeadm init on cp1: exit 1 in 0.0s") for line in console)
    assert not any("kubeadm config on cp1" in line for line in console)
    cp = lab.remotes["cp1"]
    assert cp.inits == 2
    reset = cp.calls.index("kubeadm reset -f")
    assert [c for c in cp.calls if "kubeadm init" in c] and cp.calls.index(next(c for c in cp.calls if "kubeadm init" in c)) < reset
    assert any(c.startswith("sysctl -p") for c in cp.calls[:reset])  # the fix comes before the reset
    # and what ran is what dry-run prints
    facts = {"os": "x", "kernel": "x", "containerd": "2.1.9~ds1 2.1.9~ds1-1", "runc": "1.3.6", "systemd": "x",
             "pid1": "systemd", "cgroupfs": "cgroup2fs"}
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": facts)
    monkeypatch.setattr("harness.artifacts.kit.load_kit", lambda version: KIT)
    record = json.loads((result.directory / "run.json").read_text())
    assert_sent_as_printed(cp.calls, dryrun.plan_lines(scenario, "sid", tuned=lab.tuning()), record, "cp1")


def test_an_init_that_fails_unexpectedly_is_still_a_harness_failure(tmp_path):
    class InitBreaks(Machine):
        def run(self, command, timeout=60.0, check=False, stdin=None):
            if "kubeadm init" in command:
                self.calls.append(command)
                return CommandResult(self.name, command, 1, "error: boom\n", "", time.time(), 0.001)
            return super().run(command, timeout, check, stdin)

    lab, clock = TwoNodeLab(), FakeClock()
    lab.remotes["cp1"] = InitBreaks("cp1")
    result = Engine(load(find("kubeadm-baseline")), Options(runs_root=tmp_path / "runs"), Labs(lab), clock=clock,
                    sleep=clock.sleep, cluster_client=healthy_cluster, kit=KIT, host_run=lab.host_commands).run()
    assert result.exit_code == 2 and "kubeadm init" in result.reason


def test_tcg_runtime_settings_reach_every_go_component(tmp_path):
    """Under TCG: Go runtime settings for containerd, the kubelet and the static pods, the
    kubelet's housekeeping, etcd without fsync; all of it also in run.json."""
    from harness.tuning import TCG_GO_ENV

    result, lab = run(False, tmp_path)
    env_line = "Environment=" + " ".join(f"{k}={v}" for k, v in TCG_GO_ENV.items())
    for machine in lab.remotes.values():
        dropins = {k: v for k, v in machine.stdin.items() if "20-kubelab-tcg.conf" in k}
        assert sorted(k.split("/etc/systemd/system/")[1].split(".service.d")[0] for k in dropins) == \
            ["containerd", "kubelet"], machine.name
        assert all(env_line in v for v in dropins.values())
        restart = next(c for c in machine.calls if "systemctl restart containerd" in c)
        assert machine.calls.index(restart) > max(machine.calls.index(k) for k in dropins)  # read by the restart
    cp = lab.remotes["cp1"]
    docs = list(yaml.safe_load_all(next(v for k, v in cp.stdin.items() if "kubeadm-config.yaml" in k)))
    assert {"name": "housekeeping-interval", "value": "30s"} in docs[0]["nodeRegistration"]["kubeletExtraArgs"]
    assert {"name": "unsafe-no-fsync", "value": "true"} in docs[1]["etcd"]["local"]["extraArgs"]
    patches = {k.rsplit("/", 1)[1]: yaml.safe_load(v) for k, v in cp.stdin.items() if "kubelab-patches" in k}
    assert sorted(patches) == ["corednsdeployment+strategic.yaml", "etcd+strategic.yaml",
                               "kube-apiserver+strategic.yaml", "kube-controller-manager+strategic.yaml",
                               "kube-scheduler+strategic.yaml"]
    coredns = patches.pop("corednsdeployment+strategic.yaml")["spec"]["template"]["spec"]["containers"][0]
    assert coredns["name"] == "coredns" and coredns["readinessProbe"]["timeoutSeconds"] == 10
    for name, patch in patches.items():
        env = {e["name"]: e["value"] for e in patch["spec"]["containers"][0]["env"]}
        assert env == TCG_GO_ENV, name
    # the two static pods whose kubeadm manifests probe readiness every second (v1.36.3): every 10 s
    readiness = {name.split("+")[0]: patch["spec"]["containers"][0].get("readinessProbe")
                 for name, patch in patches.items()}
    assert readiness == {"etcd": None, "kube-apiserver": {"periodSeconds": 10},
                         "kube-controller-manager": None, "kube-scheduler": {"periodSeconds": 10}}
    recorded = json.loads((result.directory / "run.json").read_text())["install"]
    assert recorded["go_runtime"] == TCG_GO_ENV and recorded["kubelet_args"] == {"housekeeping-interval": "30s"}
    assert recorded["containerd_cri"]["stats_collect_period"] == "30s"


def planned(name, containerd, kubernetes=""):
    from harness.model import CLUSTER
    from harness.scenario.dryrun import install_context
    from harness.scenario.plan import plan

    scenario = load(find(name))
    scenario = scenario.with_kubernetes(kubernetes) if kubernetes else scenario
    facts = {"containerd": containerd, "runc": "1.3.6", "os": "x", "kernel": "x", "systemd": "x"}
    roles = scenario.lab.roles()
    return plan(scenario, roles, {m: facts for m in roles},
                install=install_context(scenario, facts, tuning.decide("qemu"))), CLUSTER


@pytest.mark.parametrize(("containerd", "stops"), [("1.7.24~ds1-6+deb13u1", True), ("2.1.9~ds1-1", False)])
def test_where_the_fault_breaks_init_only_on_some_versions_the_track_follows_the_version(containerd, stops):
    steps, cluster = planned("cgroup-driver-mismatch", containerd)
    install = [s for s in steps if s.phase == "install"]
    init = next(s for s in install if s.name == "kubeadm init")
    assert init.may_fail is stops
    assert any(s.name == "apply flannel" for s in install) is not stops  # on 1.x the track ends at init
    recover = {s.name: s for s in steps if s.phase == "recover"}
    assert ("kubeadm reset" in recover) is stops
    assert recover["restart-the-kubelet"].action == ("not-applicable" if stops else "run")
    if not stops:
        assert recover["reset-and-init-again"].action == "not-applicable"
        assert recover["reset-and-init-again"].machine == cluster


@pytest.mark.parametrize(("kubernetes", "stops_at"), [("1.35.4", "kubelet-never-healthy"),
                                                      ("1.36.3", "admin-bootstrap-finds-no-api-server")])
def test_swap_stops_init_where_that_release_waits_first(kubernetes, stops_at):
    """kubeadm 1.36 bootstraps the admin user before it waits for the kubelet: the expectation
    follows the release, and the stopped init alone has kubeadm's 1m kubernetesAPICall."""
    steps, _ = planned("swap-kubelet", "2.1.9~ds1-1", kubernetes)
    gated = {"kubelet-never-healthy", "admin-bootstrap-finds-no-api-server"}
    assert {s.name: s.action for s in steps if s.phase == "expect" and s.name in gated} == {
        stops_at: "check", **{g: "not-applicable" for g in gated - {stops_at}}}

    def api_call(step):
        init = next(d for d in yaml.safe_load_all(step.content) if d["kind"] == "InitConfiguration")
        return init["timeouts"]["kubernetesAPICall"], init["timeouts"]["kubeletHealthCheck"]

    configs = [s for s in steps if s.name == "kubeadm config"]
    assert [(s.phase, api_call(s)) for s in configs] == [("install", ("1m0s", "1m0s")), ("recover", ("10m0s", "1m0s"))]
    recover = [s.name for s in steps if s.phase == "recover"]
    assert recover.index("kubeadm reset") < recover.index("kubeadm config") < recover.index("kubeadm init")


def test_the_swap_stop_on_1_36_is_matched_whichever_way_the_last_retry_ended():
    """The kubeadm chapter's book (2026-12-06) ended init on client-go's throttle at the deadline,
    where earlier runs ended on the closed port; the next book (2026-12-07) on the throttle refusing
    a wait that would pass the deadline: all three are the admin bootstrap finding no API server."""
    import re

    check = next(c for c in load(find("swap-kubelet")).expect if c.name == "admin-bootstrap-finds-no-api-server")
    head = ("error: error execution phase wait-control-plane: cannot obtain client without bootstrap: could not "
            "bootstrap the admin user in file admin.conf: unable to create ClusterRoleBinding: ")
    book_run = head + "client rate limiter Wait returned an error: context deadline exceeded"  # verbatim
    closed_port = head + ('Post "https://192.168.101.10:6443/apis/rbac.authorization.k8s.io/v1/clusterrolebindings'
                          '?timeout=10s": dial tcp 192.168.101.10:6443: connect: connection refused')
    assert re.search(check.pattern, book_run) and re.search(check.pattern, closed_port)
    # verbatim, the 2026-12-07 book's run 20261207T154200Z
    assert re.search(check.pattern, head + "client rate limiter Wait returned an error: rate: Wait(n=1) would exceed "
                                           "context deadline")
    assert not re.search(check.pattern, head + "clusterrolebindings.rbac.authorization.k8s.io is forbidden")


def test_a_rebuild_resets_every_node_and_installs_the_new_ranges():
    steps, _ = planned("cidr-overlap-10-244", "2.1.9~ds1-1")
    recover = [s for s in steps if s.phase == "recover"]
    cycles = [(s.machine, s.command) for s in recover if s.action == "power-cycle"]
    assert cycles == [("cp1", "systemd.mask=kubelet.service"), ("cp1", "")]
    assert all(s.commands() == [] for s in recover if s.action == "power-cycle")  # the backend does it
    rebuild = recover[[s.name for s in recover].index("boot-normally") + 1:]
    assert [(s.machine, s.command) for s in rebuild if s.name == "kubeadm reset"] == [("cp1", "kubeadm reset -f"),
                                                                                      ("w1", "kubeadm reset -f")]
    assert {s.machine for s in rebuild if s.name == "remove CNI state"} == {"cp1", "w1"}
    assert [s.command for s in rebuild if s.name == "route to the Service network"] == \
        ["ip route replace 172.21.0.0/16 dev eth0"] * 2
    config = yaml.safe_load_all(next(s.content for s in rebuild if s.name == "kubeadm config"))
    networking = next(d for d in config if d["kind"] == "ClusterConfiguration")["networking"]
    assert networking["podSubnet"] == "172.20.0.0/16" and networking["serviceSubnet"] == "172.21.0.0/16"
    def network(manifest):
        cfg = next(d for d in yaml.safe_load_all(manifest) if d and d["kind"] == "ConfigMap")
        return json.loads(cfg["data"]["net-conf.json"])["Network"]

    assert network(next(s.content for s in rebuild if s.name == "flannel manifest")) == "172.20.0.0/16"
    # the first install kept flannel's default: that is the fault
    assert network(next(s.content for s in steps if s.phase == "install" and s.name == "flannel manifest")) \
        == "10.244.0.0/16"
    assert [s.name for s in rebuild if s.machine == "w1"][-2:] == ["kubeadm join config", "kubeadm join"]


DUMP_1X = """version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = {}
"""


def test_a_gated_cluster_check_is_decided_by_the_control_planes_versions(tmp_path):
    """cgroup-driver-mismatch on containerd 1.7, through the engine: the cluster checks meant
    for 2.x are recorded as not applicable with cp1's version, and the track ends at init."""
    trixie = SID_FACTS[1].replace("2.1.9~ds1 2.1.9~ds1-1", "1.7.24~ds1 1.7.24~ds1-6+deb13u1")

    class Trixie(Machine):
        def run(self, command, timeout=60.0, check=False, stdin=None):
            out = {FACTS_COMMAND: trixie, "cat /proc/1/comm": "systemd\n", "containerd config dump": DUMP_1X.format(
                "true" if any("SystemdCgroup = true/" in c for c in self.calls) else "false")}.get(command)
            if out is not None:
                self.calls.append(command)
                return CommandResult(self.name, command, 0, out, "", time.time(), 0.001)
            return super().run(command, timeout, check, stdin)

    lab, clock = TwoNodeLab(), FakeClock()
    lab.remotes = {"cp1": Trixie("cp1")}
    result = Engine(load(find("cgroup-driver-mismatch")), Options(runs_root=tmp_path / "runs"), Labs(lab),
                    clock=clock, sleep=clock.sleep, cluster_client=one_node_cluster, kit=KIT, host_run=lab.host_commands).run()
    record = json.loads((result.directory / "run.json").read_text())
    assert result.exit_code != 2, result.reason
    gated = next(o for o in record["observations"] if o["check"] == "node-stays-ready-on-cgroupfs")
    assert gated["machine"] == "cluster" and gated["met"] is None
    assert gated["matched"] == "not applicable: versions containerd >=2.0 (machine has containerd 1.7.24~ds1)"
    assert [s["name"] for s in record["steps"]].count("kubeadm init") == 2  # stopped at init, then the reinstall


def test_a_reinstall_after_a_stopped_init_takes_new_ranges_too():
    """Only new ranges rewrite the kubeadm config: airgap-unset-version's recovery edits it itself."""
    from dataclasses import replace

    from harness.scenario.dryrun import install_context
    from harness.scenario.plan import plan

    scenario = load(find("ip-forward-preflight"))
    facts = {"containerd": "2.1.9~ds1-1", "runc": "1.3.6", "os": "x", "kernel": "x", "systemd": "x"}
    roles = scenario.lab.roles()

    def recovery(s):
        return [x for x in plan(s, roles, {m: facts for m in roles},
                                install=install_context(s, facts, tuning.decide("qemu")))
                if x.phase == "recover"]

    assert not [x for x in recovery(scenario) if x.name == "kubeadm config"]
    moved = replace(scenario, recover=tuple(replace(r, networks={"pod_cidr": "172.20.0.0/16"}) if r.reinstall else r
                                            for r in scenario.recover))
    steps = recovery(moved)
    assert [x.machine for x in steps if x.name == "kubeadm reset"] == ["cp1"]  # not a rebuild: init had stopped
    config = next(x.content for x in steps if x.name == "kubeadm config")
    assert "podSubnet: 172.20.0.0/16" in config


class ScenarioLab(TwoNodeLab):
    """The machines a scenario asks for, each answering everything (its kubeadm init succeeds)."""

    def __init__(self, scenario):
        self.remotes = {m.name: Machine(m.name) for m in scenario.lab.machines}
        self.roles = scenario.lab.roles()

    ip = lambda self, m: f"192.0.2.{10 + list(self.remotes).index(m)}"  # noqa: E731
    role = lambda self, m: self.roles[m]  # noqa: E731

    def power_cycle(self, machine, kernel_args, timeout):
        return "powered off; booted"


# every scenario with the kubeadm track under scenarios/, found there; each that has a control run
CLUSTER_SCENARIOS = [p.stem for p in all_files() if load(p).install.track == "kubeadm"]


@pytest.mark.parametrize("name", [n for n in CLUSTER_SCENARIOS if not load(find(n)).control_problem()])
def test_a_control_run_of_each_cluster_scenario_sends_exactly_what_dry_run_prints(name, tmp_path, monkeypatch):
    """In a control run nothing stops early, so every machine gets the whole plan. verify's
    layers are left out: what they read on a node follows what the cluster says, so dry-run
    prints one line per layer and no node command (plan.Step.commands)."""
    scenario = replace(load(find(name)), verify_layers=())
    if scenario.install.cni == "calico":  # upstream's manifest is read from the built tag; its shape here
        from harness.cni import calico
        from tests.unit.test_cni import UPSTREAM_SHAPE
        monkeypatch.setattr(calico, "upstream_manifest", lambda version=calico.VERSION: UPSTREAM_SHAPE)
    lab, clock = ScenarioLab(scenario), FakeClock()
    result = Engine(scenario, Options(runs_root=tmp_path / "runs", control=True), Labs(lab), clock=clock,
                    sleep=clock.sleep, cluster_client=healthy_cluster, kit=KIT, host_run=lab.host_commands).run()
    record = json.loads((result.directory / "run.json").read_text())
    assert [p["status"] for p in record["phases"] if p["status"] not in ("ok", "skipped")] == [], result.reason
    facts = parse_facts(CommandResult("cp1", FACTS_COMMAND, 0, SID_FACTS[1], "", 0, 0))
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": facts)
    monkeypatch.setattr("harness.artifacts.kit.load_kit", lambda version: KIT)
    lines = dryrun.plan_lines(scenario, scenario.lab.suite, control=True)
    for machine, remote in lab.remotes.items():
        assert_sent_as_printed(remote.calls, lines, record, machine)


def test_every_cluster_scenario_is_found():
    assert {"kubeadm-baseline", "flannel-no-brnetfilter"} <= set(CLUSTER_SCENARIOS)


def test_a_bug_in_a_cluster_probe_is_an_internal_error_not_an_api_that_is_down(tmp_path):
    """A probe that raises AttributeError (a bug) must end the run at once as exit 2, not
    poll "API not answering" until its timeout and end as not met."""
    class BrokenCluster(FakeCluster):
        def nodes(self):
            raise AttributeError("'NoneType' object has no attribute 'conditions'")

    lab, clock = TwoNodeLab(), FakeClock()
    result = Engine(load(find("kubeadm-baseline")), Options(runs_root=tmp_path / "runs"), Labs(lab),
                    clock=clock, sleep=clock.sleep, cluster_client=lambda kubeconfig: BrokenCluster(),
                    kit=KIT, host_run=lab.host_commands).run()
    assert (result.exit_code, result.result) == (2, "error"), result.reason
    assert "internal error: AttributeError" in result.reason
    record = json.loads((result.directory / "run.json").read_text())
    assert not any(o["kind"] in ("expect", "verify") and o["met"] is False for o in record["observations"])
    assert clock.now - 1000.0 < 60  # it stopped at the first poll, not after the check's timeout


@pytest.mark.parametrize(("containerd", "period"), [("2.1.9~ds1-1", None), ("v2.3.4", "30s"), ("v2.4.2", "30s")])
def test_under_tcg_a_containerd_with_the_stats_collector_reads_cpu_as_seldom_as_the_kubelet(containerd, period):
    """containerd 2.3 and later read every container's CPU through its shim each second; under TCG
    the track's config says 30 s, the kubelet's housekeeping; an older containerd gets no such key."""
    steps, _ = planned("kubeadm-baseline", containerd)
    configs = [s for s in steps if s.name == "containerd config"]
    assert configs and {s.machine for s in configs} == {"cp1", "w1"}
    for step in configs:
        runtime = tomllib.loads(step.content)["plugins"]["io.containerd.cri.v1.runtime"]
        assert runtime.get("stats_collect_period") == period
        assert ("CPU stats every 30s (TCG)" in step.note) is (period is not None)
