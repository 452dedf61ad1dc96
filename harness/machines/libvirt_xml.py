"""libvirt XML for kubelab's objects. Pure: data in, XML text out.

Choices that matter on this kind of host:
- domain type `qemu` (TCG) unless KVM really boots guests; under TCG, the
  translation cache harness/tuning.py gives (128 MiB keeps a guest near 0.5 GB
  of host memory instead of 1 GB);
- `<cpu mode='maximum'>` (`custom`/`max` is refused by libvirt 9.0);
- direct kernel boot from the image's kernel and initrd; no <graphics> at all;
- the network has no <forward> (isolated: no route out for guests, no host
  ip_forward), DNS disabled (nothing to forward queries to the outside), and a
  fixed address per machine by MAC.
"""

from __future__ import annotations

import hashlib
import ipaddress
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from ..tuning import TB_CACHE_MIB
from .base import METADATA_NS, METADATA_PREFIX


@dataclass(frozen=True)
class NetworkPlan:
    name: str
    bridge: str
    subnet: str  # "192.168.101.0/24"
    hosts: tuple[tuple[str, str, str], ...]  # (mac, hostname, ip)

    @property
    def gateway(self) -> str:
        return str(next(ipaddress.ip_network(self.subnet).hosts()))

    @property
    def netmask(self) -> str:
        return str(ipaddress.ip_network(self.subnet).netmask)


@dataclass(frozen=True)
class DomainPlan:
    name: str
    lab: str
    machine: str
    role: str
    domain_type: str  # "kvm" or "qemu"
    cpus: int
    memory_mib: int
    kernel: str
    initrd: str
    cmdline: str
    disk: str
    seed: str
    network: str
    mac: str
    serial_log: str
    tb_cache_mib: int = TB_CACHE_MIB


def mac_for(lab: str, machine: str) -> str:
    """A stable, locally administered MAC in QEMU's 52:54:00 range."""
    d = hashlib.sha256(f"{lab}/{machine}".encode()).digest()
    return "52:54:00:%02x:%02x:%02x" % (d[0], d[1], d[2])


def ip_for(subnet: str, index: int) -> str:
    """Machine `index` (0-based) gets .10, .11, ... of the lab's subnet."""
    net = ipaddress.ip_network(subnet)
    return str(net.network_address + 10 + index)


def network_xml(plan: NetworkPlan) -> str:
    hosts = "\n".join(
        f"        <host mac={quoteattr(mac)} name={quoteattr(name)} ip={quoteattr(ip)}/>"
        for mac, name, ip in plan.hosts
    )
    net = ipaddress.ip_network(plan.subnet)
    start, end = net.network_address + 200, net.network_address + 250
    return f"""<network>
  <name>{escape(plan.name)}</name>
  <bridge name={quoteattr(plan.bridge)} stp='on' delay='0'/>
  <dns enable='no'/>
  <ip address={quoteattr(plan.gateway)} netmask={quoteattr(plan.netmask)}>
    <dhcp>
      <range start='{start}' end='{end}'/>
{hosts}
    </dhcp>
  </ip>
</network>
"""


def domain_xml(plan: DomainPlan) -> str:
    tcg = plan.domain_type == "qemu"
    features = "<acpi/>"
    if tcg:
        features += f"<tcg><tb-cache unit='MiB'>{plan.tb_cache_mib}</tb-cache></tcg>"
    cpu = "<cpu mode='maximum' check='none'/>" if tcg else "<cpu mode='host-passthrough' check='none'/>"
    a = quoteattr
    return f"""<domain type={a(plan.domain_type)}>
  <name>{escape(plan.name)}</name>
  <metadata>
    <{METADATA_PREFIX}:machine xmlns:{METADATA_PREFIX}={a(METADATA_NS)} lab={a(plan.lab)} name={a(plan.machine)} role={a(plan.role)}/>
  </metadata>
  <memory unit='MiB'>{plan.memory_mib}</memory>
  <vcpu>{plan.cpus}</vcpu>
  <os>
    <type arch='x86_64' machine='q35'>hvm</type>
    <kernel>{escape(plan.kernel)}</kernel>
    <initrd>{escape(plan.initrd)}</initrd>
    <cmdline>{escape(plan.cmdline)}</cmdline>
  </os>
  <features>{features}</features>
  {cpu}
  <clock offset='utc'/>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2' cache='unsafe' discard='unmap'/>
      <source file={a(plan.disk)}/>
      <target dev='vda' bus='virtio'/>
    </disk>
    <disk type='file' device='disk' snapshot='no'>
      <driver name='qemu' type='raw'/>
      <source file={a(plan.seed)}/>
      <target dev='vdb' bus='virtio'/>
      <readonly/>
    </disk>
    <interface type='network'>
      <source network={a(plan.network)}/>
      <mac address={a(plan.mac)}/>
      <model type='virtio'/>
    </interface>
    <serial type='pty'>
      <log file={a(plan.serial_log)} append='on'/>
    </serial>
    <console type='pty'/>
    <rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>
    <memballoon model='none'/>
  </devices>
</domain>
"""


def overlay_volume_xml(name: str, backing: str, capacity_bytes: int) -> str:
    return f"""<volume>
  <name>{escape(name)}</name>
  <capacity unit='bytes'>{capacity_bytes}</capacity>
  <target><format type='qcow2'/><permissions><mode>0600</mode></permissions></target>
  <backingStore><path>{escape(backing)}</path><format type='qcow2'/></backingStore>
</volume>
"""


def pool_xml(name: str, path: str) -> str:
    return f"""<pool type='dir'>
  <name>{escape(name)}</name>
  <target><path>{escape(path)}</path></target>
</pool>
"""
