"""--dry-run: every command for every machine, in run order, nothing created."""

from harness.scenario import dryrun
from harness.scenario.load import find, load

BOOKWORM = {"os": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0-50-cloud-amd64",
            "containerd": "1.6.20~ds1-1+deb12u3", "runc": "1.1.5+ds1-1+deb12u1", "systemd": "252.39-1~deb12u2",
            "pid1": "systemd", "cgroupfs": "cgroup2fs"}


def commands(lines):
    return [l.split("    #")[0] for l in lines if l.startswith("[")]


def test_ip_forward_off_in_run_order(monkeypatch):
    monkeypatch.setattr(dryrun, "image_facts", lambda suite: BOOKWORM)
    lines = dryrun.plan_lines(load(find("ip-forward-off")), "bookworm")
    assert commands(lines)[1:] == [
        "[arm] node1: sysctl -w net.ipv4.ip_forward=0",
        "[armed-check] node1: sysctl net.ipv4.ip_forward",
        "[install] (skipped: install track `none`)",
        "[expect] node1: sysctl net.ipv4.ip_forward",
        "[expect] node1: cat /proc/sys/net/ipv4/ip_forward",
        "[observe] node1: sysctl net.ipv4.ip_forward",
        "[recover] node1: printf '%s = %s\\n' net.ipv4.ip_forward 1 > /etc/sysctl.d/99-kubernetes.conf",
        "[recover] node1: sysctl -p /etc/sysctl.d/99-kubernetes.conf",
        "[recover] node1: systemctl reboot",
        "[verify] node1: sysctl net.ipv4.ip_forward",
        "[verify] node1: cat /etc/sysctl.d/99-kubernetes.conf",
        "[collect] node1: cat /etc/sysctl.d/99-kubernetes.conf",
        "[collect] node1: journalctl --no-pager -o short-iso -b -u systemd-sysctl",
    ]
    assert commands(lines)[0].startswith("[prepare] node1: . /etc/os-release;")


def test_version_dependent_checks_follow_the_image(monkeypatch):
    monkeypatch.setattr(dryrun, "image_facts", lambda suite: BOOKWORM)
    lines = dryrun.plan_lines(load(find("containerd-dropin-merge")), "bookworm")
    assert any(l.startswith("[expect] node1: (skipped: v2-config-toml-table-kept applies to containerd >=2.0)") for l in lines)
    assert any("v1-config-toml-table-replaced: equals 16384" in l for l in lines)


def test_without_an_image_conditions_are_shown(monkeypatch):
    monkeypatch.setattr(dryrun, "image_facts", lambda suite: None)
    lines = dryrun.plan_lines(load(find("cgroup-driver-host")), "sid")
    assert "# facts from the image manifest: none (image not built yet)" in lines[2]
    assert any("v2-runc-uses-cgroupfs: equals False when containerd >=2.0" in l for l in lines)


def test_control_run_has_no_fault_commands(monkeypatch):
    monkeypatch.setattr(dryrun, "image_facts", lambda suite: BOOKWORM)
    lines = commands(dryrun.plan_lines(load(find("swap-on")), "bookworm", control=True))
    assert not any(l.startswith(("[arm]", "[armed-check]", "[expect]")) for l in lines)
    assert "[recover] node1: swapoff -a" in lines
