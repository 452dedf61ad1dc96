"""Domain and network XML generation (pure)."""

import xml.etree.ElementTree as ET

from harness.machines.base import METADATA_NS
from harness.machines.libvirt_xml import (DomainPlan, NetworkPlan, domain_xml, ip_for, mac_for,
                                          network_xml, overlay_volume_xml)


def plan(**over):
    base = dict(name="kubelab-demo.node1", lab="demo", machine="node1", role="node", domain_type="qemu",
                cpus=2, memory_mib=1536, kernel="/c/vmlinuz", initrd="/c/initrd.img",
                cmdline="root=/dev/vda rw console=ttyS0", disk="/v/d.qcow2", seed="/v/d.seed",
                network="kubelab-demo", mac="52:54:00:aa:bb:cc", serial_log="/l/node1.log")
    base.update(over)
    return DomainPlan(**base)


def test_tcg_domain():
    root = ET.fromstring(domain_xml(plan()))
    assert root.get("type") == "qemu"
    assert root.findtext("name") == "kubelab-demo.node1"
    assert root.find("features/tcg/tb-cache").text == "128"
    assert root.find("features/tcg/tb-cache").get("unit") == "MiB"
    assert root.find("cpu").get("mode") == "maximum"
    assert root.findtext("memory") == "1536" and root.findtext("vcpu") == "2"
    assert root.findtext("os/kernel") == "/c/vmlinuz" and root.findtext("os/initrd") == "/c/initrd.img"
    assert root.findtext("os/cmdline") == "root=/dev/vda rw console=ttyS0"
    assert root.find("devices/graphics") is None  # 'none' is refused by libvirt: omit it


def test_kvm_domain_has_no_tcg_settings():
    root = ET.fromstring(domain_xml(plan(domain_type="kvm")))
    assert root.get("type") == "kvm"
    assert root.find("features/tcg") is None
    assert root.find("cpu").get("mode") == "host-passthrough"


def test_disks_seed_readonly_and_excluded_from_snapshots():
    disks = ET.fromstring(domain_xml(plan())).findall("devices/disk")
    root_disk, seed = disks
    assert root_disk.find("target").get("dev") == "vda" and root_disk.find("driver").get("type") == "qcow2"
    assert root_disk.find("source").get("file") == "/v/d.qcow2"
    assert seed.find("target").get("dev") == "vdb" and seed.find("driver").get("type") == "raw"
    assert seed.find("readonly") is not None and seed.get("snapshot") == "no"


def test_metadata_marks_the_domain_as_kubelabs():
    root = ET.fromstring(domain_xml(plan()))
    meta = root.find(f"metadata/{{{METADATA_NS}}}machine")
    assert meta.attrib == {"lab": "demo", "name": "node1", "role": "node"}


def test_serial_console_logged_to_lab_folder_and_nic_on_lab_network():
    root = ET.fromstring(domain_xml(plan()))
    assert root.find("devices/serial/log").attrib == {"file": "/l/node1.log", "append": "on"}
    nic = root.find("devices/interface")
    assert nic.find("source").get("network") == "kubelab-demo"
    assert nic.find("mac").get("address") == "52:54:00:aa:bb:cc"


def test_values_are_escaped():
    root = ET.fromstring(domain_xml(plan(cmdline="a<b & 'c'", serial_log="/l/x'y.log")))
    assert root.findtext("os/cmdline") == "a<b & 'c'"
    assert root.find("devices/serial/log").get("file") == "/l/x'y.log"


def test_network_is_isolated_without_dns_and_pins_addresses():
    p = NetworkPlan("kubelab-demo", "kubelab101", "192.168.101.0/24",
                    (("52:54:00:00:00:01", "node1", "192.168.101.10"),))
    root = ET.fromstring(network_xml(p))
    assert root.find("forward") is None  # no forward: no route out, host ip_forward untouched
    assert root.find("dns").get("enable") == "no"
    assert root.find("bridge").get("name") == "kubelab101"
    ip = root.find("ip")
    assert (ip.get("address"), ip.get("netmask")) == ("192.168.101.1", "255.255.255.0")
    assert ip.find("dhcp/host").attrib == {"mac": "52:54:00:00:00:01", "name": "node1", "ip": "192.168.101.10"}
    assert ip.find("dhcp/range").attrib == {"start": "192.168.101.200", "end": "192.168.101.250"}


def test_mac_and_ip_allocation():
    assert mac_for("demo", "node1") == mac_for("demo", "node1")
    assert mac_for("demo", "node1") != mac_for("demo", "node2") != mac_for("other", "node2")
    assert mac_for("demo", "node1").startswith("52:54:00:")
    assert [ip_for("192.168.150.0/24", i) for i in range(3)] == ["192.168.150.10", "192.168.150.11", "192.168.150.12"]


def test_overlay_volume_backed_by_base_image():
    root = ET.fromstring(overlay_volume_xml("kubelab-demo.node1.qcow2", "/c/root.qcow2", 8 << 30))
    assert root.findtext("capacity") == str(8 << 30)
    assert root.find("target/format").get("type") == "qcow2"
    assert root.findtext("backingStore/path") == "/c/root.qcow2"


def test_tcg_guests_are_told_their_tsc_is_reliable():
    from harness import tuning

    tcg, kvm = tuning.decide("qemu"), tuning.decide("kvm")
    assert tcg.cmdline("root=/dev/vda rw") == "root=/dev/vda rw clocksource=tsc tsc=reliable damon_stat.enabled=N"
    assert kvm.cmdline("root=/dev/vda rw") == "root=/dev/vda rw"


def test_kubernetes_guests_get_a_larger_translation_cache():
    from harness.tuning import TB_CACHE_KUBERNETES_MIB

    xml = domain_xml(plan(tb_cache_mib=TB_CACHE_KUBERNETES_MIB))
    assert ET.fromstring(xml).find("features/tcg/tb-cache").text == "2048"


def test_capacity_counts_the_translation_cache_only_under_tcg(monkeypatch):
    import pytest

    from harness import lifecycle, tuning
    from harness.capacity import QEMU_OVERHEAD_MIB, overhead_mib
    from harness.tuning import TB_CACHE_KUBERNETES_MIB
    from harness.errors import UsageError

    tcg, kvm = tuning.decide("qemu"), tuning.decide("kvm", measured="kvm")
    assert overhead_mib(None, tcg) == QEMU_OVERHEAD_MIB + 128
    assert overhead_mib("v1.36.3", tcg) == QEMU_OVERHEAD_MIB + TB_CACHE_KUBERNETES_MIB
    assert overhead_mib("v1.36.3", kvm) == overhead_mib(None, kvm) == QEMU_OVERHEAD_MIB

    monkeypatch.setattr(tuning, "host_profile", lambda: tcg)
    room = 2 * (2048 + QEMU_OVERHEAD_MIB + 128)
    lifecycle.plan_lab(2, "sid", 1, 2048, "cap", available_mib=room)
    with pytest.raises(UsageError, match=f"{QEMU_OVERHEAD_MIB + TB_CACHE_KUBERNETES_MIB} MiB QEMU overhead each"):
        lifecycle.plan_lab(2, "sid", 1, 2048, "cap", kubernetes="1.36.3", available_mib=room)
    monkeypatch.setattr(tuning, "host_profile", lambda: kvm)  # a KVM laptop: no cache to hold
    lifecycle.plan_lab(2, "sid", 1, 2048, "cap", kubernetes="1.36.3", available_mib=room)


def test_lab_disks_ignore_guest_flushes():
    """Lab overlays are thrown away: QEMU may ignore the guest's flushes (cache unsafe);
    measured, etcd's WAL fsync averaged 245 ms under TCG with them honoured."""
    root_disk, seed = ET.fromstring(domain_xml(plan())).findall("devices/disk")
    assert root_disk.find("driver").get("cache") == "unsafe"
    assert seed.find("driver").get("cache") is None  # read-only anyway
