"""The acceleration decides every TCG setting, in one place (harness/tuning.py): a kubeadm
scenario's plan under KVM and under TCG differs in exactly those settings, a forced domain
type does not change the timings, and the record says which profile was used and why."""

import json
import re

import pytest
import yaml

from harness import tuning
from harness.host_command import HOST
from harness.machines import accel
from harness.remote.retried import retried
from harness.scenario import dryrun
from harness.scenario.engine import Engine, Options
from harness.scenario.files import find
from harness.scenario.load import load
from harness.scenario.plan import plan
from tests.unit.test_engine import FakeClock
from tests.unit.test_dryrun import assert_sent_as_printed
from tests.unit.test_kubeadm_track import KIT, Labs, TwoNodeLab, healthy_cluster

FACTS = {"containerd": "2.1.9~ds1-1", "runc": "1.3.6", "os": "x", "kernel": "x", "systemd": "x",
         "pid1": "systemd", "cgroupfs": "cgroup2fs"}
TCG, KVM = tuning.decide("qemu"), tuning.decide("kvm")


def planned(name: str, tuned: tuning.Tuning) -> list:
    scenario = load(find(name))
    roles = scenario.lab.roles()
    return plan(scenario, roles, {m: FACTS for m in roles}, install=dryrun.install_context(scenario, FACTS, tuned))


def flat(value, path=()) -> dict:
    """A YAML document as {path: leaf}; a list of {name, value} pairs (kubeadm's args) by name."""
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in flat(item, path + (key,)).items()}
    if isinstance(value, list) and value and all(isinstance(i, dict) and set(i) == {"name", "value"} for i in value):
        return {path + (i["name"],): i["value"] for i in value}
    return {path: value}


def config_fields(step) -> dict:
    return {(doc["kind"],) + k: v for doc in yaml.safe_load_all(step.content) for k, v in flat(doc).items()}


def differing(a: dict, b: dict) -> set:
    return {k for k in a.keys() | b.keys() if a.get(k, None) != b.get(k, None)}


# What the TCG profile adds to upstream's kubeadm configuration, field for field.
TCG_INIT_FIELDS = {
    *(("InitConfiguration", "timeouts", k) for k in tuning.TCG_TIMEOUTS),
    ("InitConfiguration", "patches", "directory"),
    ("InitConfiguration", "nodeRegistration", "kubeletExtraArgs", "housekeeping-interval"),
    *(("ClusterConfiguration", c, "extraArgs", k) for c in ("controllerManager", "scheduler")
      for k in tuning.TCG_LEADER_ELECTION),
    *(("ClusterConfiguration", "etcd", "local", "extraArgs", k) for k in tuning.TCG_ETCD),
    ("ClusterConfiguration", "encryptionAlgorithm"),
}
TCG_JOIN_FIELDS = {
    *(("JoinConfiguration", "timeouts", k) for k in ("kubernetesAPICall", "tlsBootstrap", "discovery",
                                                      "kubeletHealthCheck")),
    ("JoinConfiguration", "nodeRegistration", "kubeletExtraArgs", "housekeeping-interval"),
}


def flanneld_args(manifest: str) -> list[str]:
    daemonset = next(d for d in yaml.safe_load_all(manifest) if d and d["kind"] == "DaemonSet")
    return daemonset["spec"]["template"]["spec"]["containers"][0]["args"]


@pytest.mark.parametrize("name", ["kubeadm-baseline", "flannel-no-brnetfilter"])
def test_the_plans_under_kvm_and_tcg_differ_in_exactly_the_tcg_settings(name):
    tcg, kvm = planned(name, TCG), planned(name, KVM)
    # TCG applies flannel from the host: the same manifest but for flanneld's --iptables-resync,
    # and the same retried apply, with the kit's kubectl and the run's copy of admin.conf
    cni = lambda steps: [s for s in steps if s.name in ("flannel manifest", "apply flannel")]  # noqa: E731
    (tcg_write, tcg_apply), (kvm_write, kvm_apply) = cni(tcg), cni(kvm)
    assert [(s.machine, s.action) for s in (tcg_write, tcg_apply)] == [(HOST, "host-write"), (HOST, "host-run")]
    assert [(s.machine, s.action) for s in (kvm_write, kvm_apply)] == [("cp1", "write"), ("cp1", "run")]
    tcg_args, kvm_args = (flanneld_args(s.content) for s in (tcg_write, kvm_write))
    assert tcg_args == kvm_args + [f"--iptables-resync={tuning.TCG_FLANNEL_IPTABLES_RESYNC}"]
    assert re.sub(r"\n *- --iptables-resync=\d+", "", tcg_write.content) == kvm_write.content
    assert tcg_write.command == "<run folder>/install/kube-flannel.yml"
    assert kvm_apply.command == retried("kubectl --kubeconfig /etc/kubernetes/admin.conf apply -f /root/kube-flannel.yml")
    assert tcg_apply.host.argv == ("sh", "-c", retried(
        "kubectl --kubeconfig ../private/cp1-admin.conf --cache-dir kubectl-cache apply -f kube-flannel.yml"))
    assert (str(tcg_apply.host.cwd), tcg_apply.timeout) == ("<run folder>/install", kvm_apply.timeout)
    assert tcg_apply.host.path_prefix.endswith("/bin/linux/amd64")
    tcg, kvm = [s for s in tcg if s not in cni(tcg)], [s for s in kvm if s not in cni(kvm)]
    key = lambda s: (s.phase, s.machine, s.name, s.command)  # noqa: E731
    only_tcg = [s for s in tcg if key(s) not in {key(k) for k in kvm}]
    assert not [s for s in kvm if key(s) not in {key(t) for t in tcg}]  # KVM adds nothing
    # TCG adds the Go runtime drop-ins on every machine and kubeadm's patch files
    machines = list(load(find(name)).lab.roles())
    assert sorted((s.machine, s.name) for s in only_tcg) == sorted(
        [(m, f"{u} Go runtime settings") for m in machines for u in ("containerd", "kubelet")]
        + [("cp1", "kubeadm patch")] * len(tuning.tcg_patches()))
    assert {s.content for s in only_tcg if s.name == "kubeadm patch"} == set(tuning.tcg_patches().values())
    assert all("GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1" in s.content for s in only_tcg if "Go runtime" in s.name)
    # every other step is the same step; only the kubeadm configs' content differs
    shared_tcg = [s for s in tcg if s not in only_tcg]
    assert [key(s) for s in shared_tcg] == [key(s) for s in kvm]
    changed = [(t, k) for t, k in zip(shared_tcg, kvm) if (t.content, t.note) != (k.content, k.note)]
    assert sorted({t.name for t, _ in changed}) == ["kubeadm config", "kubeadm join config"]
    for t, k in changed:
        fields = TCG_INIT_FIELDS if t.name == "kubeadm config" else TCG_JOIN_FIELDS
        tcg_fields, kvm_fields = config_fields(t), config_fields(k)
        assert differing(tcg_fields, kvm_fields) == fields, t.name
        assert not fields & kvm_fields.keys(), t.name  # under KVM: absent, so upstream's default
    init = config_fields(next(t for t, _ in changed if t.name == "kubeadm config"))
    assert init[("ClusterConfiguration", "etcd", "local", "extraArgs", "unsafe-no-fsync")] == "true"
    assert init[("InitConfiguration", "nodeRegistration", "kubeletExtraArgs", "housekeeping-interval")] == "30s"


def test_under_kvm_no_tcg_value_reaches_a_guest():
    text = "\n".join(f"{s.command}\n{s.content}" for s in planned("kubeadm-baseline", KVM))
    for value in ("GOMAXPROCS", "asyncpreemptoff", "unsafe-no-fsync", "heartbeat-interval", "housekeeping",
                  "leader-elect", "ECDSA", "kubelab-patches", "timeouts", "iptables-resync"):
        assert value not in text, value


def test_a_scenarios_own_timeouts_hold_under_kvm_and_the_reinstall_returns_to_kubeadms_default():
    steps = planned("swap-kubelet", KVM)
    configs = [s for s in steps if s.name == "kubeadm config"]
    timeouts = [next(d for d in yaml.safe_load_all(s.content) if d["kind"] == "InitConfiguration")["timeouts"]
                for s in configs]
    assert timeouts == [{"kubeletHealthCheck": "1m0s", "kubernetesAPICall": "1m0s"}, {"kubeletHealthCheck": "1m0s"}]
    assert configs[1].note == "kubernetesAPICall kubeadm's default again (the stopped init had 1m0s)"


def test_guests_get_the_tcg_machine_settings_only_under_tcg():
    assert TCG.kernel_args == ("clocksource=tsc", "tsc=reliable", "damon_stat.enabled=N")
    assert (TCG.tb_cache(kubernetes=True), TCG.tb_cache(kubernetes=False)) == (2048, 128)
    assert TCG.boot_in_turn and dict(TCG.cpu_shares) == {"control-plane": 2048, "worker": 512}
    assert KVM.cmdline("root=/dev/vda") == "root=/dev/vda"
    assert (KVM.kernel_args, KVM.boot_in_turn, dict(KVM.cpu_shares)) == ((), False, {})


@pytest.mark.parametrize(("domain_type", "measured", "forced", "profile"), [
    ("qemu", "", False, tuning.TCG),   # probed: no working KVM
    ("kvm", "", False, tuning.KVM),    # probed: KVM boots guests
    ("kvm", "qemu", True, tuning.TCG),  # KUBELAB_ACCEL=kvm on a host whose probe failed: TCG's timings
    ("kvm", "", True, tuning.TCG),     # forced before anything was measured: nothing says KVM works
    ("kvm", "kvm", True, tuning.KVM),
    ("qemu", "kvm", True, tuning.TCG),  # KUBELAB_ACCEL=tcg on a KVM host: the guests are emulated
])
def test_the_profile_follows_the_measured_acceleration(domain_type, measured, forced, profile):
    tuned = tuning.decide(domain_type, measured, forced)
    assert tuned.profile == profile
    assert ("forced" in tuned.why) is forced


def test_a_tuning_cannot_be_changed_in_place():
    with pytest.raises(TypeError):
        TCG.etcd_args["unsafe-no-fsync"] = "false"
    with pytest.raises(AttributeError):
        TCG.profile = tuning.KVM


@pytest.fixture
def probed(tmp_path, monkeypatch):
    """This boot's probe said TCG; probing again would be a bug."""
    monkeypatch.setenv("KUBELAB_RUN", str(tmp_path))
    monkeypatch.delenv(accel.FORCE_VARIABLE, raising=False)
    boot_id = open("/proc/sys/kernel/random/boot_id").read().strip()
    (tmp_path / "accel.json").write_text(json.dumps(
        {"domain_type": "qemu", "reason": "no /dev/kvm on this host", "boot_id": boot_id, "probe_seconds": 0.0}))
    monkeypatch.setattr(accel, "probe", lambda kernel: pytest.fail("probed again"))
    return tmp_path


def test_kubelab_accel_kvm_forces_the_domain_type_but_not_the_timings(probed, monkeypatch):
    monkeypatch.setenv(accel.FORCE_VARIABLE, "kvm")
    verdict = accel.decide(probed / "vmlinuz")
    assert (verdict.domain_type, verdict.measured, verdict.forced) == ("kvm", "qemu", True)
    record = verdict.record()
    assert record["label"] == "KVM" and record["reason"] == (
        "forced by KUBELAB_ACCEL=kvm (measured: TCG (software emulation), no /dev/kvm on this host)")
    tuned = tuning.for_lab({"domain_type": "kvm", "acceleration": record})
    assert tuned.profile == tuning.TCG and "KUBELAB_ACCEL forced the domain type `kvm`" in tuned.why


def test_without_forcing_the_measured_verdict_is_recorded_as_measured(probed):
    record = accel.decide(probed / "vmlinuz").record()
    assert record == {"domain_type": "qemu", "label": "TCG (software emulation)", "measured": "qemu",
                      "forced": False, "reason": "measured: no /dev/kvm on this host"}


def test_dry_run_says_which_settings_it_shows(probed, monkeypatch):
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": FACTS)
    monkeypatch.setattr("harness.artifacts.kit.load_kit", lambda version: KIT)
    lines = dryrun.plan_lines(load(find("kubeadm-baseline")), "sid")
    assert "# acceleration TCG (software emulation) (libvirt domain type `qemu`): no /dev/kvm on this host; " \
           "TCG settings: guests run under TCG (software emulation), where each of these settings was measured " \
           "to be needed" in lines
    (probed / "accel.json").unlink()
    assert any(line.startswith("# acceleration not measured yet") for line in
               dryrun.plan_lines(load(find("kubeadm-baseline")), "sid"))


class KvmLab(TwoNodeLab):
    accel = "kvm"

    def describe(self):
        record = accel.Verdict("kvm", "a test kernel booted under KVM in 1.1s", "boot").record()
        return {**super().describe(), "accel": record["label"], "accel_reason": record["reason"],
                "acceleration": record}


def test_a_kvm_run_sends_what_dry_run_prints_and_records_upstreams_defaults(tmp_path, monkeypatch):
    lab, clock = KvmLab(), FakeClock()
    scenario = load(find("kubeadm-baseline"))
    result = Engine(scenario, Options(runs_root=tmp_path / "runs"), Labs(lab), clock=clock, sleep=clock.sleep,
                    cluster_client=healthy_cluster, kit=KIT, host_run=lab.host_commands).run()
    assert result.exit_code != 2, result.reason  # the scripted cluster answers only some checks
    monkeypatch.setattr(dryrun, "image_facts", lambda suite, containerd="", recipe="debian": FACTS)
    monkeypatch.setattr("harness.artifacts.kit.load_kit", lambda version: KIT)
    lines = dryrun.plan_lines(scenario, "sid", tuned=lab.tuning())
    run = json.loads((result.directory / "run.json").read_text())
    for name, machine in lab.remotes.items():
        assert_sent_as_printed(machine.calls, lines, run, name)
    install = run["install"]
    assert install["tuning"] == "kvm"
    assert install["tuning_reason"] == "guests run under KVM (measured): upstream's defaults"
    assert {k: install[k] for k in ("timeouts", "leader_election", "etcd", "encryption_algorithm",
                                    "static_pod_patches", "go_runtime", "kubelet_args",
                                    "containerd_cri")} == {
        "timeouts": {}, "leader_election": {}, "etcd": {}, "encryption_algorithm": "", "static_pod_patches": {},
        "go_runtime": {}, "kubelet_args": {}, "containerd_cri": {}}
    assert install["guests"] == {"kernel_args": [], "tb_cache_mib": 0, "cpu_shares": {}, "boot_in_turn": False}
    assert (install["flannel_iptables_resync_s"], install["cni_applied_from"]) == (None, "the control plane")
    assert "KVM: measured: a test kernel booted under KVM in 1.1s" in (result.directory / "report.md").read_text()


def test_a_tcg_run_records_the_tcg_profile_and_why(tmp_path):
    lab, clock = TwoNodeLab(), FakeClock()
    result = Engine(load(find("kubeadm-baseline")), Options(runs_root=tmp_path / "runs"), Labs(lab), clock=clock,
                    sleep=clock.sleep, cluster_client=healthy_cluster, kit=KIT, host_run=lab.host_commands).run()
    install = json.loads((result.directory / "run.json").read_text())["install"]
    assert install["tuning"] == "tcg" and install["etcd"] == tuning.TCG_ETCD
    assert install["static_pod_patches"] == tuning.tcg_patches() and install["go_runtime"] == tuning.TCG_GO_ENV
    assert "TCG (software emulation)" in install["tuning_reason"]
    assert install["guests"] == {"kernel_args": list(tuning.TCG_KERNEL_ARGS), "tb_cache_mib": 2048,
                                 "cpu_shares": tuning.CPU_SHARES, "boot_in_turn": True}
    assert install["flannel_iptables_resync_s"] == tuning.TCG_FLANNEL_IPTABLES_RESYNC
    assert install["cni_applied_from"] == "the host"


def test_a_report_names_the_acceleration_and_why_also_for_an_older_lab_state():
    measured = accel.Verdict("qemu", "no /dev/kvm on this host", "boot")
    assert accel.lab_fields({"domain_type": "qemu", "acceleration": measured.record()}) == {
        "accel": "TCG (software emulation)", "accel_reason": "measured: no /dev/kvm on this host",
        "acceleration": measured.record()}
    assert accel.lab_fields({"domain_type": "kvm"})["accel"] == "KVM"
