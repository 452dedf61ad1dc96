"""plan() of every fault: the exact commands a run sends, chosen by the machine's facts."""

import pytest

from harness.faults import FAULTS, make

V1_FACTS = {"containerd": "1.6.20~ds1"}
V2_FACTS = {"containerd": "2.1.9+unknown"}
RESTART = "systemctl restart containerd && systemctl is-active containerd"


def test_module_missing():
    plan = make("module-missing", {}, V1_FACTS).plan()
    assert plan == {
        "inject": ["printf 'install br_netfilter /bin/false\\n' > /etc/modprobe.d/kubelab-fault-br_netfilter.conf",
                   "modprobe -r br_netfilter 2>/dev/null || true"],
        "armed-check": ["cat /proc/modules  # br_netfilter not loaded: equals False",
                        "modprobe br_netfilter  # br_netfilter cannot be loaded: equals 1"],
        "recover": ["rm -f /etc/modprobe.d/kubelab-fault-br_netfilter.conf", "modprobe br_netfilter",
                    "printf '%s\\n' br_netfilter > /etc/modules-load.d/k8s.conf"],
        "persistence-check": ["cat /proc/modules  # br_netfilter loaded: equals True"],
    }


def test_module_missing_quotes_its_parameters():
    plan = make("module-missing", {"module": "overlay", "persist_file": "/etc/modules-load.d/my conf.conf"}, {}).plan()
    assert plan["recover"][-1] == "printf '%s\\n' overlay > '/etc/modules-load.d/my conf.conf'"


def test_sysctl_value():
    plan = make("sysctl-value", {"key": "net.ipv4.ip_forward", "value": "0", "good": "1"}, V1_FACTS).plan()
    assert plan == {
        "inject": ["sysctl -w net.ipv4.ip_forward=0"],
        "armed-check": ["sysctl net.ipv4.ip_forward  # net.ipv4.ip_forward is 0: equals '0'"],
        "recover": ["printf '%s = %s\\n' net.ipv4.ip_forward 1 > /etc/sysctl.d/99-kubernetes.conf",
                    "sysctl -p /etc/sysctl.d/99-kubernetes.conf"],
        "persistence-check": ["sysctl net.ipv4.ip_forward  # net.ipv4.ip_forward is 1: equals '1'"],
    }


def test_swap_on():
    plan = make("swap-on", {"size_mib": 64}, V1_FACTS).plan()
    assert plan["inject"] == [
        "fallocate -l 64M /swapfile.kubelab && chmod 600 /swapfile.kubelab && mkswap /swapfile.kubelab",
        "swapon /swapfile.kubelab",
        "printf '%s none swap sw 0 0\\n' /swapfile.kubelab >> /etc/fstab",
    ]
    assert plan["recover"] == ["swapoff -a", "sed -i '\\#^/swapfile.kubelab #d' /etc/fstab", "rm -f /swapfile.kubelab"]
    armed = make("swap-on", {}, {}).armed_checks()[0]
    assert armed.pattern == r"(?m)^/swapfile\.kubelab\s+file\s"
    assert make("swap-on", {}, {}).persistence_checks()[0].equals == []


def test_containerd_dropin_is_the_same_on_every_version_but_checked_at_the_versions_path():
    v1, v2 = make("containerd-dropin", {}, V1_FACTS), make("containerd-dropin", {}, V2_FACTS)
    assert v1.inject() == v2.inject() == [
        "mkdir -p /etc/containerd/conf.d",
        "printf '%s' '[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n  SystemdCgroup = true\n'"
        " > /etc/containerd/conf.d/50-kubelab.toml",
        "grep -q '^imports' /etc/containerd/config.toml || "
        "sed -i '1i imports = [\"/etc/containerd/conf.d/*.toml\"]' /etc/containerd/config.toml",
        "sed -i '/^  \\[plugins\\.\"io\\.containerd\\.grpc\\.v1\\.cri\"\\]$/a\\    max_container_log_line_size = 12345'"
        " /etc/containerd/config.toml && grep -q 'max_container_log_line_size = 12345' /etc/containerd/config.toml",
        RESTART,
    ]
    assert v1.recover()[-1] == v2.recover()[-1] == RESTART
    assert v1.recover()[1] == "sed -i -e '/^imports = /d' -e '/max_container_log_line_size = 12345/d' /etc/containerd/config.toml"
    assert v1.persistence_checks()[0].probe.args["key"] == \
        'plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options.SystemdCgroup'
    assert v2.persistence_checks()[0].probe.args["key"] == \
        'plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options.SystemdCgroup'


def test_cgroup_driver_1x_edits_the_version_2_file():
    plan = make("containerd-cgroup-driver", {}, V1_FACTS).plan()
    assert plan["inject"] == [
        "grep -q 'SystemdCgroup' /etc/containerd/config.toml && "
        "sed -i 's/SystemdCgroup = .*/SystemdCgroup = false/' /etc/containerd/config.toml || "
        "printf '%s' '[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n"
        "  runtime_type = \"io.containerd.runc.v2\"\n"
        "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n"
        "  SystemdCgroup = false\n' >> /etc/containerd/config.toml",
        RESTART,
    ]
    assert plan["recover"][0].count("SystemdCgroup = true") == 2
    assert plan["armed-check"] == [
        "containerd config dump  # SystemdCgroup = false in the effective config: equals False",
        "cat /proc/1/comm  # systemd is PID 1: pattern '^systemd$'",
    ]


def test_cgroup_driver_2x_migrates_to_version_3_and_uses_the_runtime_plugin():
    fault = make("containerd-cgroup-driver", {}, V2_FACTS)
    inject = fault.inject()
    assert inject[0] == ("containerd config migrate > /etc/containerd/config.toml.v3 && "
                         "mv /etc/containerd/config.toml.v3 /etc/containerd/config.toml")
    assert "[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc.options]" in inject[1]
    assert inject[-1] == RESTART
    assert fault.armed_checks()[0].probe.args["key"] == \
        'plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options.SystemdCgroup'
    assert fault.armed_checks()[0].equals is False


@pytest.mark.parametrize("kind", sorted(FAULTS))
def test_every_fault_is_complete(kind):
    params = {"key": "net.ipv4.ip_forward", "value": "0", "good": "1"} if kind == "sysctl-value" else {}
    for facts in (V1_FACTS, V2_FACTS):
        fault = make(kind, params, facts)
        plan = fault.plan()
        assert all(plan[stage] for stage in ("inject", "armed-check", "recover", "persistence-check"))
        assert all(c.asserts for c in fault.armed_checks() + fault.persistence_checks())
        assert fault.summary and fault.describe().startswith(kind + "(")


def test_module_unloaded_takes_the_module_out_of_every_modules_load_d_file_and_blocks_nothing(tmp_path, monkeypatch):
    """Its commands run in a real shell against a made-up modules-load.d tree."""
    import subprocess

    from harness.faults import kernel
    from harness.faults import make as make_fault

    for d in ("etc", "usr"):
        (tmp_path / d).mkdir()
    (tmp_path / "etc" / "k8s.conf").write_text("overlay\nbr_netfilter\n")
    (tmp_path / "usr" / "other.conf").write_text("br_netfilter\n")
    (tmp_path / "usr" / "notes.txt").write_text("br_netfilter\n")  # not a .conf: systemd does not read it
    monkeypatch.setattr(kernel, "MODULES_LOAD_DIRS", f"{tmp_path / 'etc'} {tmp_path / 'usr'} {tmp_path / 'absent'}")
    fault = make_fault("module-unloaded", {}, {})
    naming = fault.armed_checks()[1].probe.args["cmd"]

    def sh(cmd):
        return subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, timeout=10).stdout

    assert sh(naming).strip() == "2"
    sh(fault.inject()[0])
    assert (tmp_path / "etc" / "k8s.conf").read_text() == "overlay\n"
    assert (tmp_path / "usr" / "other.conf").read_text() == ""
    assert (tmp_path / "usr" / "notes.txt").read_text() == "br_netfilter\n"
    assert sh(naming).strip() == "0"
    assert not any("install br_netfilter /bin/false" in c for c in fault.inject())  # loadable: not blocked
    monkeypatch.setattr(kernel, "MODULES_LOAD_DIRS", str(tmp_path / "absent"))
    assert sh(make_fault("module-unloaded", {}, {}).armed_checks()[1].probe.args["cmd"]).strip() == "0"  # no hang on stdin
