"""The inventory, known_hosts and SSH environment for kubespray, from a plain machine list."""

import shlex
from pathlib import Path

import pytest
import yaml

from harness.errors import UsageError
from harness.kubespray import inventory
from harness.kubespray.inventory import Host

from . import kubespray_tree

KEY = Path("/labs/demo/keys/id_ed25519")


def two_nodes(schedulable=False):
    return inventory.hosts_from_roles([("cp1", "192.168.100.10", "control-plane"),
                                       ("w1", "192.168.100.11", "worker"),
                                       ("extra", "192.168.100.12", "node")], schedulable)


def test_roles_map_to_kubespray_groups_and_plain_nodes_stay_out():
    assert two_nodes() == [Host("cp1", "192.168.100.10", ("kube_control_plane", "etcd")),
                           Host("w1", "192.168.100.11", ("kube_node",))]
    assert two_nodes(schedulable=True)[0].groups == ("kube_control_plane", "etcd", "kube_node")
    with pytest.raises(UsageError, match="role `db` has no kubespray groups"):
        inventory.hosts_from_roles([("x", "10.0.0.1", "db")])


def test_the_inventory_has_hosts_groups_and_root_access():
    inv = yaml.safe_load(inventory.inventory_yaml(two_nodes(schedulable=True), KEY))["all"]
    assert inv["vars"] == {"ansible_user": "root", "ansible_ssh_private_key_file": str(KEY)}
    assert inv["hosts"]["cp1"] == {"ansible_host": "192.168.100.10", "ip": "192.168.100.10",
                                   "access_ip": "192.168.100.10"}
    children = inv["children"]
    assert list(children["kube_control_plane"]["hosts"]) == ["cp1"]
    assert list(children["etcd"]["hosts"]) == ["cp1"]
    assert list(children["kube_node"]["hosts"]) == ["cp1", "w1"]  # the control plane in kube_node too
    assert set(children["k8s_cluster"]["children"]) == {"kube_control_plane", "kube_node"}


@pytest.mark.parametrize("hosts, message", [
    ([Host("a", "10.0.0.1", ("kube_node",))], "no machine in `kube_control_plane`; no machine in `etcd`"),
    ([Host("a", "10.0.0.1", ("kube_control_plane", "etcd")), Host("b", "10.0.0.2", ("etcd",))],
     "2 machines in `etcd` (a, b): kubespray wants an odd number"),
    ([Host("a", "10.0.0.1", ("kube_control_plane", "etcd")), Host("a", "10.0.0.1", ("kube_node",))],
     "machine `a` is given twice; address 10.0.0.1 is given twice"),
    ([Host("a", "10.0.0.300", ("kube_control_plane", "etcd", "calico_rr"))],
     "`10.0.0.300` is not an IP address; machine `a`: unknown group calico_rr"),
])
def test_bad_inventories_are_refused_with_every_problem(hosts, message):
    with pytest.raises(UsageError) as info:
        inventory.inventory(hosts, KEY)
    assert message in str(info.value)


def test_known_hosts_pins_each_address_to_its_key():
    keys = {"cp1": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIcp1 cp1.demo", "w1": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIw1"}
    assert inventory.known_hosts(two_nodes(), keys.__getitem__) == (
        "192.168.100.10 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIcp1\n"
        "192.168.100.11 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIw1\n")
    with pytest.raises(UsageError, match="machine `cp1`: its pinned host key is not an OpenSSH public key"):
        inventory.known_hosts(two_nodes(), lambda name: "garbage")


def test_known_hosts_from_a_real_lab_state_folder(tmp_path, monkeypatch):
    from harness.lab import Lab, LabSpec, MachineSpec

    monkeypatch.setenv("KUBELAB_HOME", str(tmp_path))
    lab = Lab.create(LabSpec("demo", "bookworm", "libvirt", (MachineSpec("cp1", "control-plane", 1, 512),
                                                              MachineSpec("w1", "worker", 1, 512))), {"id": "i"})
    text = inventory.known_hosts(two_nodes(), lab.host_public_key)
    for line, name in zip(text.splitlines(), ("cp1", "w1")):
        assert line.split()[1:] == lab.host_public_key(name).split()[:2]


def test_kubespray_ssh_args_are_read_from_its_ansible_cfg():
    assert inventory.kubespray_ssh_args(kubespray_tree.ANSIBLE_CFG) == (
        "-o ControlMaster=auto -o ControlPersist=5m -o UserKnownHostsFile=/dev/null -oStrictHostKeyChecking=no")
    assert inventory.kubespray_ssh_args("[defaults]\nforks=5\n") == inventory.ANSIBLE_DEFAULT_SSH_ARGS


def test_the_ssh_environment_turns_checking_on_and_keeps_kubesprays_other_options():
    env = inventory.ssh_environment(kubespray_tree.ANSIBLE_CFG, Path("/run/x/known_hosts"))
    assert env["ANSIBLE_HOST_KEY_CHECKING"] == "True"
    words = shlex.split(env["ANSIBLE_SSH_ARGS"])
    assert words == ["-o", "UserKnownHostsFile=/run/x/known_hosts", "-o", "StrictHostKeyChecking=yes",
                     "-o", "GlobalKnownHostsFile=/dev/null",
                     "-o", "ControlMaster=auto", "-o", "ControlPersist=5m"]
    # kubespray's own /dev/null and `no` are gone: ssh would take the first value of each option
    assert "UserKnownHostsFile=/dev/null" not in env["ANSIBLE_SSH_ARGS"]
    assert "StrictHostKeyChecking=no" not in env["ANSIBLE_SSH_ARGS"]
