"""The lab substrate on real guests, through each backend: libvirt directly, and Vagrant
(vagrant-libvirt) with kubelab's own box; TCG, isolated network, pinned SSH."""

import pytest

from harness import lifecycle
from harness.errors import HostKeyMismatch
from harness.remote.keys import KeyPair
from harness.remote.ssh import SshRemote

from harness.images.box import volume_prefix as box_volume_prefix

from .helpers import backend_or_unavailable, box_volumes, invoke, objects_of, unique_lab_name


@pytest.fixture(scope="module", params=["libvirt", "vagrant"])
def lab2(request, libvirt_backend, bookworm_image):
    backend_or_unavailable(request.param)
    spec = lifecycle.plan_lab(2, "bookworm", 1, 1024, unique_lab_name(request.param[:3]), backend=request.param)
    lab = lifecycle.up(spec)
    yield lab
    lifecycle.down(lab.name)
    assert objects_of(lab.name) == []
    if request.param == "vagrant":  # only the box of the current image stays in the pool
        volumes = box_volumes()
        assert len(volumes) == 1 and volumes[0].startswith(f"volume {box_volume_prefix(lab.state['box'])}")


def ssh(lab, machine):
    return SshRemote(lab.ssh_target(machine))


def test_each_machine_answers_with_its_own_ip_and_machine_id(lab2):
    seen = {}
    for m in lab2.state["machines"]:
        with ssh(lab2, m["name"]) as r:
            out = r.run("hostname; ip -4 -o addr show dev eth0 | awk '{print $4}'; cat /etc/machine-id",
                        check=True).stdout.split()
        seen[m["name"]] = out
        assert out[0] == m["name"]
        assert out[1] == f"{m['ip']}/24"
        assert len(out[2]) == 32
    ips = {v[1] for v in seen.values()}
    machine_ids = {v[2] for v in seen.values()}
    assert len(ips) == 2 and len(machine_ids) == 2


def test_guests_have_no_default_route_and_no_resolver(lab2):
    for m in lab2.state["machines"]:
        with ssh(lab2, m["name"]) as r:
            assert r.run("ip route show default", check=True).stdout.strip() == ""
            assert r.run("ip -6 route show default", check=True).stdout.strip() == ""
            assert "nameserver" not in r.run("cat /etc/resolv.conf", check=True).stdout
            routes = r.run("ip -4 route", check=True).stdout.splitlines()
            assert routes == [l for l in routes if lab2.state["network"]["subnet"] in l]


def test_guests_run_under_the_detected_accelerator(lab2, libvirt_backend):
    dom = libvirt_backend.conn.lookupByName(lab2.state["machines"][0]["domain"])
    import xml.etree.ElementTree as ET

    root = ET.fromstring(dom.XMLDesc(0))
    assert root.get("type") == lab2.state["domain_type"] == lab2.state["acceleration"]["domain_type"]
    # the guests' settings follow the lab's measured acceleration (harness/tuning.py)
    from harness import tuning

    tuned = tuning.for_lab(lab2.state)
    assert root.findtext("os/cmdline").endswith(" ".join(tuned.kernel_args))
    tb = root.find("features/tcg/tb-cache")  # libvirt gives it back in KiB
    kib = int(tb.text) * {"KiB": 1, "MiB": 1024}[tb.get("unit", "KiB")] if tb is not None else None
    assert kib == (tuned.tb_cache_mib * 1024 if root.get("type") == "qemu" else None)


def test_br_netfilter_is_a_real_module(lab2):
    with ssh(lab2, "node1") as r:
        r.run("modprobe -r br_netfilter || true", check=True)
        assert not r.run("test -e /proc/sys/net/bridge/bridge-nf-call-iptables").ok
        r.run("modprobe br_netfilter", check=True)
        assert r.run("cat /proc/sys/net/bridge/bridge-nf-call-iptables", check=True).stdout.strip() == "1"
        assert "br_netfilter" in r.run("lsmod", check=True).stdout


def test_snapshot_then_restore_discards_changes(lab2):
    backend = lifecycle.backend_for(lab2.state["backend"])
    with ssh(lab2, "node2") as r:
        r.run("echo before > /root/marker && sync", check=True)
    backend.snapshot(lab2, "node2", "clean")
    with ssh(lab2, "node2") as r:
        r.run("echo after > /root/marker && touch /root/new-file && sync", check=True)
        assert r.run("cat /root/marker", check=True).stdout == "after\n"
    backend.restore(lab2, "node2", "clean", timeout=180)
    with ssh(lab2, "node2") as r:
        assert r.run("cat /root/marker", check=True).stdout == "before\n"
        assert not r.run("test -e /root/new-file").ok


def test_a_wrong_host_key_is_refused(lab2):
    good = lab2.ssh_target("node1")
    impostor = good.__class__(**{**good.__dict__, "host_key": KeyPair.generate("x").public_openssh})
    with pytest.raises(HostKeyMismatch, match="host key mismatch"):
        SshRemote(impostor).connect()
    with SshRemote(good) as r:  # the pinned key still works
        assert r.run("true").ok


def test_lab_ssh_task_runs_a_command(lab2):
    proc = invoke("lab.ssh", "node1", "--lab", lab2.name, "-c", "cat /etc/hostname")
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out.strip() == "node1"


def test_collect_logs(lab2, tmp_path):
    files = lifecycle.backend_for(lab2.state["backend"]).collect_logs(lab2, "node1", tmp_path)
    names = sorted(f.name for f in files)
    assert names == ["node1.domain.xml", "node1.serial.log"]
    assert "kubelab-seed: applied seed" in (tmp_path / "node1.serial.log").read_text(errors="replace")
