"""The top-level Vagrantfile: valid Ruby, and it builds exactly the lab topology says."""

import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from harness.paths import project_root
from tests.conftest import require_tool

RECORDER = Path(__file__).parent.parent / "fixtures" / "vagrant" / "record_config.rb"


def ruby() -> str:
    return require_tool("ruby", "it comes with Debian's vagrant package, which scripts/setup installs")


TOPOLOGY = {
    "lab": "demo", "box": "kubelab-debian-bookworm-49d212a2d7da", "driver": "qemu", "pool": "kubelab",
    "cmdline": "root=/dev/vda rw console=ttyS0 clocksource=tsc tsc=reliable",
    "tb_cache_mib": 128, "domain_prefix": "kubelab-demo.", "client_key": "/labs/demo/keys/id_ed25519",
    "network": {"name": "kubelab-demo", "subnet": "192.168.101.0/24"}, "boot_timeout": 300,
    "machines": [
        {"name": "node1", "role": "node", "cpus": 1, "memory_mib": 1024, "mac": "52:54:00:aa:bb:01",
         "ip": "192.168.101.10", "serial_log": "/labs/demo/serial/node1.log", "seed": "/v/kubelab-demo.node1.seed"},
        {"name": "node2", "role": "node", "cpus": 2, "memory_mib": 1536, "mac": "52:54:00:aa:bb:02",
         "ip": "192.168.101.11", "serial_log": "/labs/demo/serial/node2.log", "seed": "/v/kubelab-demo.node2.seed"},
    ],
}


def load_vagrantfile(lab_dir, command="status"):
    env = dict(os.environ, VAGRANTFILE=str(project_root() / "Vagrantfile"), VAGRANT_COMMAND=command)
    env.pop("KUBELAB_LAB", None)
    if lab_dir is not None:
        env["KUBELAB_LAB"] = str(lab_dir)
    return subprocess.run([ruby(), str(RECORDER)], capture_output=True, text=True, env=env, timeout=60)


def test_vagrantfile_is_valid_ruby():
    proc = subprocess.run([ruby(), "-c", str(project_root() / "Vagrantfile")], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "Syntax OK", proc.stderr


def test_machines_follow_the_topology(tmp_path):
    (tmp_path / "topology.json").write_text(json.dumps(TOPOLOGY))
    proc = load_vagrantfile(tmp_path)
    assert proc.returncode == 0, proc.stderr
    config = json.loads(proc.stdout)
    assert config["vm"]["box"] == TOPOLOGY["box"]
    assert config["vm"]["synced_folder"] == [[".", "/vagrant", {"disabled": True}]]
    assert config["ssh"] == {"username": "root", "private_key_path": "/labs/demo/keys/id_ed25519", "insert_key": False}
    assert sorted(config["machines"]) == ["node1", "node2"]
    lv = config["machines"]["node2"]["vm"]["provider:libvirt"]
    assert (lv["driver"], lv["cpus"], lv["memory"]) == ("qemu", 2, 1536)
    assert lv["cmd_line"] == TOPOLOGY["cmdline"]
    assert lv["default_prefix"] == "kubelab-demo." and lv["storage_pool_name"] == "kubelab"
    assert (lv["management_network_name"], lv["management_network_address"]) == ("kubelab-demo", "192.168.101.0/24")
    assert (lv["management_network_mode"], lv["management_network_keep"]) == ("none", True)
    assert lv["management_network_mac"] == "52:54:00:aa:bb:02"
    assert lv["serial"] == [[{"type": "file", "source": {"path": "/labs/demo/serial/node2.log"}}]]
    qemu_args = [a[0]["value"] for a in lv["qemuargs"]]
    assert qemu_args == ["-drive", "file=/v/kubelab-demo.node2.seed,format=raw,if=none,id=kubelab-seed,readonly=on",
                         "-device", "virtio-blk-pci,drive=kubelab-seed,bus=pci.0,addr=0x1e"]


def features_xml(lv) -> ET.Element:
    # vagrant-libvirt 0.11.2, lib/vagrant-libvirt/templates/domain.xml.erb: `<features>` then
    # `<<%= feature %>/>` for each feature (default acpi, apic, pae), then `</features>`
    features = lv.get("features", ["acpi", "apic", "pae"])
    return ET.fromstring("<features>" + "".join(f"<{f}/>" for f in features) + "</features>")


def test_translation_cache_follows_the_topology(tmp_path):
    (tmp_path / "topology.json").write_text(json.dumps(TOPOLOGY))
    config = json.loads(load_vagrantfile(tmp_path).stdout)
    root = features_xml(config["machines"]["node1"]["vm"]["provider:libvirt"])
    assert sorted(child.tag for child in root) == ["acpi", "apic", "pae", "tcg"]
    assert (root.find("tcg/tb-cache").text, root.find("tcg/tb-cache").get("unit")) == ("128", "MiB")
    # under KVM (0): vagrant-libvirt's own features, no <tcg>
    (tmp_path / "topology.json").write_text(json.dumps(dict(TOPOLOGY, driver="kvm", tb_cache_mib=0)))
    config = json.loads(load_vagrantfile(tmp_path).stdout)
    root = features_xml(config["machines"]["node1"]["vm"]["provider:libvirt"])
    assert sorted(child.tag for child in root) == ["acpi", "apic", "pae"]


def test_machine_commands_need_a_lab():
    proc = load_vagrantfile(None, "up")
    assert proc.returncode != 0
    assert "kubelab: set KUBELAB_LAB to a lab folder" in proc.stderr


def test_box_commands_work_without_a_lab():
    proc = load_vagrantfile(None, "box")
    assert proc.returncode == 0 and json.loads(proc.stdout) == {"machines": {}}


def test_a_lab_without_topology_is_refused(tmp_path):
    proc = load_vagrantfile(tmp_path)
    assert proc.returncode != 0
    assert f"kubelab: {tmp_path}/topology.json does not exist" in proc.stderr
