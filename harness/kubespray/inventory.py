"""An Ansible inventory for kubespray from a lab's machines, with the lab's host keys pinned.

Groups are kubespray's (cluster.yml, kubespray v2.31.0 and master 46dbdd39):
`kube_control_plane`, `etcd`, `kube_node`, and `k8s_cluster` made of the first
and last. A machine may be in several (a control plane also in kube_node runs
workloads). Each host gets `ip` and `access_ip`: lab guests have no default
route, and without `ip` kubespray falls back to `ansible_default_ipv4`, else
127.0.0.1 (roles/network_facts/tasks/main.yaml).

Host keys: kubespray's ansible.cfg turns checking off (`host_key_checking=False`,
and `-o UserKnownHostsFile=/dev/null` in ssh_args). kubelab overrides both
through the environment: ANSIBLE_HOST_KEY_CHECKING=True and ANSIBLE_SSH_ARGS
with the lab's known_hosts and StrictHostKeyChecking=yes, plus the rest of
kubespray's own ssh_args. kubespray's known-hosts options are dropped rather
than followed: ssh takes the first value it sees for an option (ssh_config(5)).
"""

from __future__ import annotations

import configparser
import ipaddress
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import UsageError

GROUPS = ("kube_control_plane", "etcd", "kube_node")
# kubelab's machine roles (harness/model.py) -> kubespray groups; `node` machines are not in the cluster.
ROLE_GROUPS = {"control-plane": ("kube_control_plane", "etcd"), "worker": ("kube_node",), "node": ()}
# ansible-core's own ssh_args when ansible.cfg has none (lib/ansible/plugins/connection/ssh.py, 2.18.19).
ANSIBLE_DEFAULT_SSH_ARGS = "-C -o ControlMaster=auto -o ControlPersist=60s"
KNOWN_HOSTS_OPTIONS = {"userknownhostsfile", "stricthostkeychecking", "globalknownhostsfile"}


@dataclass(frozen=True)
class Host:
    name: str
    ip: str
    groups: tuple[str, ...]


def hosts_from_roles(machines: Iterable[tuple[str, str, str]], schedulable_control_plane: bool = False) -> list[Host]:
    """(name, ip, kubelab role) -> hosts; a control plane also joins kube_node when it is schedulable."""
    out = []
    for name, ip, role in machines:
        if role not in ROLE_GROUPS:
            raise UsageError(f"machine `{name}`: role `{role}` has no kubespray groups; roles: {', '.join(ROLE_GROUPS)}")
        groups = ROLE_GROUPS[role]
        if role == "control-plane" and schedulable_control_plane:
            groups = groups + ("kube_node",)
        if groups:
            out.append(Host(name, ip, groups))
    return out


def check(hosts: list[Host], addresses_known: bool = True) -> None:
    """Refuse what kubespray would refuse later, or misread: unknown groups, duplicates, no control
    plane or etcd, an even etcd count (roles/validate_inventory/tasks/main.yml: "Stop if
    kube_control_plane group is empty", "Stop if even number of etcd hosts")."""
    problems = []
    names, ips = set(), set()
    for h in hosts:
        if h.name in names:
            problems.append(f"machine `{h.name}` is given twice")
        if h.ip in ips:
            problems.append(f"address {h.ip} is given twice")
        names.add(h.name)
        ips.add(h.ip)
        try:
            ipaddress.ip_address(h.ip)
        except ValueError:
            if addresses_known:  # a dry-run's placeholders are not addresses yet
                problems.append(f"machine `{h.name}`: `{h.ip}` is not an IP address")
        unknown = [g for g in h.groups if g not in GROUPS]
        if unknown:
            problems.append(f"machine `{h.name}`: unknown group {', '.join(unknown)}; groups: {', '.join(GROUPS)}")
        if not h.groups:
            problems.append(f"machine `{h.name}` is in no group")
    members = {g: [h.name for h in hosts if g in h.groups] for g in GROUPS}
    for g in ("kube_control_plane", "etcd"):  # validate_inventory: "Stop if ... group is empty"
        if not members[g]:
            problems.append(f"no machine in `{g}`")
    if members["etcd"] and len(members["etcd"]) % 2 == 0:
        problems.append(f"{len(members['etcd'])} machines in `etcd` ({', '.join(members['etcd'])}): kubespray wants an odd number")
    if problems:
        raise UsageError("kubespray inventory: " + "; ".join(problems))


def inventory(hosts: list[Host], private_key: Path, addresses_known: bool = True) -> dict:
    """The inventory as a YAML-ready dict (ansible-inventory's YAML layout)."""
    check(hosts, addresses_known)
    return {"all": {
        "vars": {"ansible_user": "root", "ansible_ssh_private_key_file": str(private_key)},
        "hosts": {h.name: {"ansible_host": h.ip, "ip": h.ip, "access_ip": h.ip} for h in hosts},
        "children": {
            **{g: {"hosts": {h.name: None for h in hosts if g in h.groups}} for g in GROUPS},
            "k8s_cluster": {"children": {"kube_control_plane": None, "kube_node": None}},
        },
    }}


def inventory_yaml(hosts: list[Host], private_key: Path, addresses_known: bool = True) -> str:
    return yaml.safe_dump(inventory(hosts, private_key, addresses_known), sort_keys=False, default_flow_style=False)


def known_hosts(hosts: list[Host], host_key: Callable[[str], str]) -> str:
    """One line per host: its address and the lab's pinned public key (`host_key(name)`,
    e.g. Lab.host_public_key), without the key's comment."""
    lines = []
    for h in hosts:
        parts = host_key(h.name).split()
        if len(parts) < 2 or not parts[0].startswith(("ssh-", "ecdsa-")):
            raise UsageError(f"machine `{h.name}`: its pinned host key is not an OpenSSH public key")
        lines.append(f"{h.ip} {parts[0]} {parts[1]}")
    return "\n".join(lines) + "\n"


def kubespray_ssh_args(ansible_cfg: str) -> str:
    """`[ssh_connection] ssh_args` of kubespray's ansible.cfg (ansible-core's default when absent)."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(ansible_cfg)
    except configparser.Error as exc:
        raise UsageError(f"kubespray's ansible.cfg: cannot read it ({exc})") from exc
    return parser.get("ssh_connection", "ssh_args", fallback=ANSIBLE_DEFAULT_SSH_ARGS).strip()


def ssh_args(kubespray_args: str, known_hosts_file: Path) -> str:
    """kubelab's host key options first, then kubespray's ssh_args without its own known-hosts options."""
    words = shlex.split(kubespray_args)
    kept, i = [], 0
    while i < len(words):
        w = words[i]
        if w == "-o" and i + 1 < len(words):
            option, i = words[i + 1], i + 2
        elif w.startswith("-o") and len(w) > 2:
            option, i = w[2:], i + 1
        else:
            kept.append(w)
            i += 1
            continue
        if option.split("=", 1)[0].strip().lower() not in KNOWN_HOSTS_OPTIONS:
            kept += ["-o", option]
    ours = ["-o", f"UserKnownHostsFile={known_hosts_file}", "-o", "StrictHostKeyChecking=yes",
            # only the lab's pins count: a system-wide entry for a reused lab address must not interfere
            "-o", "GlobalKnownHostsFile=/dev/null"]
    return shlex.join(ours + kept)


def ssh_environment(ansible_cfg: str, known_hosts_file: Path) -> dict[str, str]:
    """The environment that turns host key checking back on for kubespray's play."""
    return {"ANSIBLE_HOST_KEY_CHECKING": "True",
            "ANSIBLE_SSH_ARGS": ssh_args(kubespray_ssh_args(ansible_cfg), known_hosts_file)}
