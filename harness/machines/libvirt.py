"""Machines as libvirt domains (libvirt-python, qemu:///system).

Per lab: one isolated network (own bridge and /24, fixed address per MAC),
and per machine a qcow2 overlay on the cached base image plus a read-only
seed disk, both volumes of kubelab's `kubelab` storage pool. Snapshots are
libvirt internal snapshots of the running machine (disk and memory, in the
overlay), so a restore returns a running machine without a reboot.
"""

from __future__ import annotations

import fcntl
import ipaddress
import os
import re
import shutil
import socket
import struct
import threading
import time
import xml.etree.ElementTree as ET
from contextlib import contextmanager
from pathlib import Path

import libvirt

from .. import paths, tuning
from ..errors import (BackendError, BackendUnavailable, ConnectError, HostKeyMismatch, MachineTimeout, Unsupported,
                      UsageError)
from ..host import LIBVIRT_URI, daemon_command
from ..remote.ssh import SshRemote
from . import accel
from .base import METADATA_NS, PREFIX, Machine, MachineBackend
from .libvirt_xml import (DomainPlan, NetworkPlan, domain_xml, ip_for, mac_for, network_xml, overlay_volume_xml,
                          pool_xml)
from .seed import seed_tar

POOL = "kubelab"
# The lab network's host address as guests know it (/etc/hosts, from the seed).
LAB_HOST_NAME = "kubelab-host"
# systemd's console line when the guest's seed unit failed (the name is cut short there).
SEED_FAILED = re.compile(r"Failed to start .{0,20}kubelab-se")
# Under TCG an early boot can die in the kernel's own code patching (seen: "Oops: int3" in
# run_timer_softirq, then "Kernel panic - not syncing: Fatal exception in interrupt"): a flake
# of the emulation, not of the image, so the machine is reset once before giving up.
KERNEL_PANIC = re.compile(r"Kernel panic - not syncing")
PANIC_RESETS = 1
SUBNET_CANDIDATES = [f"192.168.{n}.0/24" for n in range(100, 200)]
BOOT_TIMEOUT = 600.0  # measured under TCG: two sid node guests booting side by side, 150-255 s
SHUTDOWN_TIMEOUT = 60.0
_STATES = {
    libvirt.VIR_DOMAIN_NOSTATE: "no state", libvirt.VIR_DOMAIN_RUNNING: "running",
    libvirt.VIR_DOMAIN_BLOCKED: "blocked", libvirt.VIR_DOMAIN_PAUSED: "paused",
    libvirt.VIR_DOMAIN_SHUTDOWN: "shutting down", libvirt.VIR_DOMAIN_SHUTOFF: "shut off",
    libvirt.VIR_DOMAIN_CRASHED: "crashed", libvirt.VIR_DOMAIN_PMSUSPENDED: "suspended",
}

# libvirt prints every error to stderr unless told otherwise; we raise instead.
libvirt.registerErrorHandler(lambda *_: None, None)


def _stopped(domain: str) -> bool:
    """Whether the domain's QEMU process is stopped (SIGSTOP, a debugger): /proc/PID/stat's state T or t."""
    try:
        pid = int(Path(f"/run/libvirt/qemu/{domain}.pid").read_text())
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] in ("T", "t")


def domain_name(lab: str, machine: str) -> str:
    return f"{PREFIX}{lab}.{machine}"


def network_name(lab: str) -> str:
    return f"{PREFIX}{lab}"


def disk_volume(lab: str, machine: str) -> str:
    return f"{PREFIX}{lab}.{machine}.qcow2"


def seed_volume(lab: str, machine: str) -> str:
    return f"{PREFIX}{lab}.{machine}.seed"


def lab_of(object_name: str) -> str | None:
    """`kubelab-demo.node1.qcow2` -> `demo`; None for names that are not kubelab's."""
    if not object_name.startswith(PREFIX):
        return None
    return object_name[len(PREFIX):].split(".")[0]


def _not_found(exc: libvirt.libvirtError) -> bool:
    return exc.get_error_code() in (
        libvirt.VIR_ERR_NO_DOMAIN, libvirt.VIR_ERR_NO_NETWORK, libvirt.VIR_ERR_NO_STORAGE_VOL,
        libvirt.VIR_ERR_NO_STORAGE_POOL, libvirt.VIR_ERR_NO_DOMAIN_SNAPSHOT,
    )


def _busy(exc: libvirt.libvirtError) -> bool:
    return "asynchronous jobs running" in (exc.get_error_message() or "")


def _still_allocating(exc: libvirt.libvirtError) -> bool:
    return (exc.get_error_code() == libvirt.VIR_ERR_OPERATION_INVALID
            and "still being allocated" in (exc.get_error_message() or ""))


VOLUME_BUILD_WAIT = 180.0


def delete_volume(vol, wait: float = VOLUME_BUILD_WAIT, poll: float = 2.0) -> bool:
    """Delete a pool volume, waiting while libvirtd still builds it.

    A client killed inside createXML leaves libvirtd creating the overlay (qemu-img under a
    busy TCG host took long enough for a janitor's delete to be refused in CI); the delete
    is retried until the build ends, then fails with the volume named. False if it is gone.
    """
    deadline = time.monotonic() + wait
    while True:
        try:
            vol.delete(0)
            return True
        except libvirt.libvirtError as exc:
            if _not_found(exc):
                return False
            if not _still_allocating(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(poll)


def refresh_pool(pool: libvirt.virStoragePool) -> None:
    """Rescan the pool's folder, unless another process is uploading into it right now.

    libvirt refuses a refresh while a volume upload runs (another lab coming up); its
    list then still holds every volume created through it, but not a seed written into
    the folder since (teardown and the janitor look in the folder for those).
    """
    try:
        pool.refresh(0)
    except libvirt.libvirtError as exc:
        if not _busy(exc):
            raise


def boot_groups(machines: list[tuple[str, int]], in_turn: bool, host_cores: int) -> list[list[str]]:
    """Which machines boot together, in lab order. Under TCG a boot is CPU-bound and two
    guests sharing too few cores slow each other more than proportionally (measured on 2
    cores: a 2- and a 1-vCPU sid guest took 150-315 s side by side, about 85 s each
    alone), so with `in_turn` (tuning.py's TCG profile) machines start in turn, as many at
    once as the host has cores for."""
    if not in_turn or sum(c for _, c in machines) <= host_cores:
        return [[n for n, _ in machines]]
    groups: list[list[str]] = []
    used = host_cores  # forces a new group for the first machine
    for name, cpus in machines:
        if used + cpus > host_cores:
            groups.append([])
            used = 0
        groups[-1].append(name)
        used += cpus
    return groups


def is_box_volume(name: str) -> bool:
    """A Vagrant box uploaded into kubelab's pool: an image, pruned by `images.prune`, not a lab's."""
    return "_vagrant_box_image_" in name


def host_routes() -> list[ipaddress.IPv4Network]:
    """IPv4 networks the host already routes (from /proc/net/route)."""
    nets = []
    for line in Path("/proc/net/route").read_text().splitlines()[1:]:
        f = line.split()
        dest = socket.inet_ntoa(struct.pack("<L", int(f[1], 16)))
        mask = socket.inet_ntoa(struct.pack("<L", int(f[7], 16)))
        if mask != "0.0.0.0":
            nets.append(ipaddress.ip_network(f"{dest}/{mask}", strict=False))
    return nets


def pick_subnet(taken: list[ipaddress.IPv4Network], candidates=SUBNET_CANDIDATES) -> str:
    for cand in candidates:
        net = ipaddress.ip_network(cand)
        if not any(net.overlaps(t) for t in taken):
            return cand
    if len(candidates) == 1:
        clash = next(str(t) for t in taken if ipaddress.ip_network(candidates[0]).overlaps(t))
        raise BackendError(f"the lab network {candidates[0]} overlaps {clash}, which this host already routes: "
                           "remove what uses it (`invoke lab.status`) or choose another lab.network")
    raise BackendError(f"no free /24 left among {candidates[0]} .. {candidates[-1]}: `invoke lab.down --all` removes old labs")


# a pool per folder KUBELAB_DISKS names (paths.disks_dir): kubelab-disks-<sha256 of the path, 8>
DISKS_POOL_PREFIX = f"{POOL}-disks-"


def pool_name(folder: Path | None) -> str:
    """The libvirt pool of a disk folder: kubelab's own when None."""
    import hashlib

    return POOL if folder is None else DISKS_POOL_PREFIX + hashlib.sha256(str(folder).encode()).hexdigest()[:8]


def closed_ancestor(folder: Path) -> Path | None:
    """The first folder above `folder` that others may not enter (no o+x). libvirt's QEMU runs as
    its own user (libvirt-qemu on Debian), which must pass through each to open a disk there."""
    for parent in reversed(folder.parents):
        try:
            if not parent.stat().st_mode & 0o001:
                return parent
        except FileNotFoundError:
            return None  # made by kubelab below here, with its own mode
    return None


def _lab_volume(name: str) -> bool:
    """A lab's disk or seed: kubelab's name, not a Vagrant box's."""
    return lab_of(name) is not None and not is_box_volume(name)


def _lab_states() -> list[tuple[str, dict]]:
    """(name, state) of every lab; one whose state cannot be read is skipped."""
    from ..errors import LabError
    from ..lab import Lab

    out = []
    for name in Lab.names():
        try:
            out.append((name, Lab.load(name).state))
        except LabError:
            continue
    return out


class LibvirtBackend(MachineBackend):
    # the labs' disks may go where KUBELAB_DISKS says (paths.disks_dir), in a pool of that folder's
    disks_anywhere = True
    name = "libvirt"

    def __init__(self, uri: str = LIBVIRT_URI):
        self.uri = uri
        self._conn: libvirt.virConnect | None = None

    # -- connection --------------------------------------------------------
    @property
    def conn(self) -> libvirt.virConnect:
        if self._conn is not None:
            try:  # libvirtd restarted since: its old socket is closed for good, so connect again
                alive = self._conn.isAlive()
            except libvirt.libvirtError:
                alive = 0
            if not alive:
                self._conn = None
        if self._conn is None:
            try:
                self._conn = libvirt.open(self.uri)
            except libvirt.libvirtError as exc:
                raise BackendUnavailable(
                    f"cannot connect to libvirt at {self.uri}: {exc.get_error_message()}\n"
                    f"  fix: `{daemon_command('libvirtd')}`, or `invoke doctor --fix` (starts virtlogd and libvirtd; "
                    "a scenario, lab.up, matrix or evidence run starts them itself)"
                ) from None
        return self._conn

    def reconnect(self) -> None:
        """Drop the connection, so the next call opens one to the libvirtd running now (without an event
        loop a client learns of a restart only from its next call's error)."""
        if self._conn is not None:
            try:
                self._conn.close()
            except libvirt.libvirtError:
                pass
            self._conn = None

    def check(self) -> None:
        self.conn.getVersion()
        caps = ET.fromstring(self.conn.getCapabilities())
        if caps.find(".//guest/arch[@name='x86_64']") is None:
            raise BackendUnavailable("libvirt offers no x86_64 guests: apt-get install -y qemu-system-x86")

    @contextmanager
    def _host_lock(self):
        """Serialises pool creation and subnet choice between concurrent kubelab runs."""
        paths.home_dir().mkdir(parents=True, exist_ok=True)
        with open(paths.home_dir() / ".libvirt.lock", "w") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            yield

    def storage_pool(self, create: bool = True, name: str = POOL,
                     folder: Path | None = None) -> libvirt.virStoragePool | None:
        """A pool of kubelab's, started: its own (`POOL`, in volumes_dir) or the one of `folder`
        (pool_name). Defined first when `create`, else None if absent."""
        try:
            pool = self.conn.storagePoolLookupByName(name)
        except libvirt.libvirtError as exc:
            if not _not_found(exc):
                raise
            if not create:
                return None
            target = folder or paths.volumes_dir()
            target.mkdir(parents=True, exist_ok=True)
            target.chmod(0o711)
            pool = self.conn.storagePoolDefineXML(pool_xml(name, str(target)), 0)
        if not pool.isActive():
            # its folder may have been deleted (a cleaned host); libvirt will not start it then
            self.pool_dir(pool).mkdir(parents=True, exist_ok=True)
            pool.create(0)
        refresh_pool(pool)
        return pool

    def _pools(self) -> list:
        """kubelab's pools: its own, started, and each KUBELAB_DISKS folder's that is _usable."""
        own = self.storage_pool(create=False)
        return ([own] if own is not None else []) + [
            p for p in self.conn.listAllStoragePools(0) if p.name().startswith(DISKS_POOL_PREFIX) and self._usable(p)]

    def _existing_pool(self, name: str):
        """kubelab's own pool, started; a KUBELAB_DISKS folder's if it is _usable; else None."""
        if name == POOL:
            return self.storage_pool(create=False)
        try:
            pool = self.conn.storagePoolLookupByName(name)
        except libvirt.libvirtError as exc:
            if _not_found(exc):
                return None
            raise
        return pool if self._usable(pool) else None

    def _usable(self, pool) -> bool:
        """Started, its folder there, rescanned. One that is not is left as it is: reading must not
        start it or make its folder where a disk is not mounted."""
        try:
            if not pool.isActive() or not self.pool_dir(pool).is_dir():
                return False
            refresh_pool(pool)
        except libvirt.libvirtError:
            return False
        return True

    def _drop_if_unused(self, pool, leaving: str = "") -> bool:
        """A KUBELAB_DISKS folder's pool once no lab has a disk there and none is recorded to use it
        (a lab being made picks its pool before it writes a disk). kubelab's own pool stays."""
        if pool.name() == POOL or any(_lab_volume(v.name()) for v in pool.listAllVolumes(0)) or \
                self._unlisted_files(pool):
            return False
        if any(state.get("pool") == pool.name() for name, state in _lab_states() if name != leaving):
            return False
        pool.destroy()
        pool.undefine()
        return True

    # -- up ----------------------------------------------------------------
    def up(self, lab, progress) -> list[Machine]:
        image, verdict = self._image_and_accel(lab, progress)
        pool, plan = self._network(lab, verdict, progress)
        tuned = tuning.for_lab(lab.state)
        progress.note(f"settings for the acceleration: {tuned.profile.upper()} profile: {tuned.why}")
        capacity = self._virtual_size(image.disk)
        domains = {}
        for m in lab.state["machines"]:
            with progress.step(f"machine {m['name']}: disks and definition"):
                seed_path = self._write_seed(lab, m, pool)
                disk_name = disk_volume(lab.name, m["name"])
                lab.record("volumes", disk_name)
                vol = pool.createXML(overlay_volume_xml(disk_name, str(image.disk), capacity), 0)
                refresh_pool(pool)
                dplan = DomainPlan(
                    name=m["domain"], lab=lab.name, machine=m["name"], role=m["role"],
                    domain_type=verdict.domain_type, cpus=m["cpus"], memory_mib=m["memory_mib"],
                    kernel=str(image.kernel), initrd=str(image.initrd), cmdline=tuned.cmdline(image.cmdline),
                    disk=vol.path(), seed=str(seed_path), network=plan.name, mac=m["mac"],
                    serial_log=str(lab.serial_log(m["name"])),
                    tb_cache_mib=tuned.tb_cache(kubernetes=bool(lab.state.get("kubernetes"))),
                )
                lab.record("domains", m["domain"])
                domains[m["name"]] = self.conn.defineXML(domain_xml(dplan))
        groups = boot_groups([(m["name"], m["cpus"]) for m in lab.state["machines"]], tuned.boot_in_turn,
                             os.cpu_count() or 1)
        if len(groups) > 1:
            progress.note(f"booting in turn ({', then '.join('+'.join(g) for g in groups)}): more vCPUs than "
                          f"the host's {os.cpu_count()} cores under TCG")
        for group in groups:
            for name in group:
                with progress.step(f"machine {name}: start"):
                    domains[name].create()
            self._wait_all_ssh(lab, {n: domains[n] for n in group}, BOOT_TIMEOUT, progress)
        self._set_role_shares(lab, domains, tuned, progress)
        return self.machines(lab)

    def _set_role_shares(self, lab, domains: dict, tuned: tuning.Tuning, progress) -> None:
        """The host's CPU shares by role (tuning.CPU_SHARES, under TCG), once all have booted."""
        roles = {m["name"]: m["role"] for m in lab.state["machines"]}
        shares_of = tuned.cpu_shares
        if not any(r in shares_of for r in roles.values()):
            return
        for name, dom in domains.items():
            shares = shares_of.get(roles[name], tuning.DEFAULT_CPU_SHARES)
            try:
                dom.setSchedulerParameters({libvirt.VIR_DOMAIN_SCHEDULER_CPU_SHARES: shares})
            except libvirt.libvirtError as exc:  # no cpu controller for libvirt: equal shares, say so
                progress.note(f"machine {name}: CPU shares left as they are ({exc.get_error_message()})")
                return
        progress.note("host CPU shares: " + ", ".join(f"{n} {shares_of.get(roles[n], tuning.DEFAULT_CPU_SHARES)}"
                                                      for n in domains))

    # -- pieces of `up` shared with the Vagrant backend -----------------------
    def _image_and_accel(self, lab, progress):
        from ..images import store

        image = store.load(Path(lab.state["image"]["directory"]))
        verdict = accel.decide(image.kernel)
        progress.note(f"acceleration: {verdict.describe()}")
        return image, verdict

    def _network(self, lab, verdict, progress):
        """The storage pool, and the lab's isolated network with a fixed address per machine."""
        with self._host_lock():
            folder = paths.disks_dir() if self.disks_anywhere else None
            closed = closed_ancestor(folder) if folder is not None else None
            if closed is not None:
                raise UsageError(f"KUBELAB_DISKS: libvirt's QEMU, which runs as its own user, cannot reach "
                                 f"{folder}: {closed} is closed to other users (mode "
                                 f"{closed.stat().st_mode & 0o777:o}); `chmod o+x {closed}`, or name a folder "
                                 "others may pass through (such as one under /var/tmp)")
            pool = self.storage_pool(name=pool_name(folder), folder=folder)
            lab.state["pool"] = pool.name()
            taken = host_routes() + self._libvirt_subnets()
            wanted = lab.state.get("requested_network")
            subnet = pick_subnet(taken, [wanted] if wanted else SUBNET_CANDIDATES)
            bridge = f"kubelab{ipaddress.ip_network(subnet).network_address.packed[2]}"
            hosts = []
            for i, m in enumerate(lab.state["machines"]):
                m["domain"] = domain_name(lab.name, m["name"])
                m["mac"] = mac_for(lab.name, m["name"])
                m["ip"] = ip_for(subnet, i)
                hosts.append((m["mac"], m["name"], m["ip"]))
            plan = NetworkPlan(network_name(lab.name), bridge, subnet, tuple(hosts))
            lab.state["network"] = {"name": plan.name, "bridge": bridge, "subnet": subnet, "gateway": plan.gateway}
            lab.state["domain_type"] = verdict.domain_type
            lab.state["acceleration"] = verdict.record()
            lab.save()
            with progress.step(f"network {plan.name} ({subnet}, isolated)"):
                lab.record("networks", plan.name)
                net = self.conn.networkDefineXML(network_xml(plan))
                net.create()
        return pool, plan

    @staticmethod
    def pool_dir(pool) -> Path:
        """Where the pool keeps its files (it may predate a change of KUBELAB_HOME)."""
        return Path(ET.fromstring(pool.XMLDesc(0)).findtext("target/path"))

    def _write_seed(self, lab, m: dict, pool) -> Path:
        seed_name = seed_volume(lab.name, m["name"])
        lab.record("volumes", seed_name)
        gateway = (lab.state.get("network") or {}).get("gateway")
        data = seed_tar(m["name"], lab.host_key_path(m["name"]).read_bytes(), lab.host_public_key(m["name"]),
                        Path(f"{lab.client_key}.pub").read_text(),
                        hosts=f"{gateway} {LAB_HOST_NAME}" if gateway else "")
        seed_path = self.pool_dir(pool) / seed_name
        seed_path.write_bytes(data)
        seed_path.chmod(0o644)
        return seed_path

    @staticmethod
    def _virtual_size(disk: Path) -> int:
        import json
        import subprocess

        out = subprocess.run(["qemu-img", "info", "--output=json", "-U", str(disk)],
                             capture_output=True, text=True, check=True, timeout=30).stdout
        return int(json.loads(out)["virtual-size"])

    def _libvirt_subnets(self) -> list[ipaddress.IPv4Network]:
        nets = []
        for net in self.conn.listAllNetworks(0):
            for ip in ET.fromstring(net.XMLDesc(0)).findall("ip"):
                addr, mask, prefix = ip.get("address"), ip.get("netmask"), ip.get("prefix")
                if addr and ":" not in addr:
                    nets.append(ipaddress.ip_network(f"{addr}/{mask or prefix or 24}", strict=False))
        return nets

    def _wait_all_ssh(self, lab, domains: dict, timeout: float, progress) -> None:
        """Wait for SSH on every machine at once; the main thread stays free for Ctrl-C."""
        cancel = threading.Event()
        errors: dict[str, BaseException] = {}
        done: dict[str, float] = {}
        start = time.monotonic()

        def wait_one(name: str, dom) -> None:
            try:
                self._wait_ssh(lab, name, dom, timeout, cancel, note=progress.note)
                done[name] = time.monotonic() - start
            except BaseException as exc:  # reported by the main thread
                errors[name] = exc

        threads = [threading.Thread(target=wait_one, args=(n, d), daemon=True) for n, d in domains.items()]
        for t in threads:
            t.start()
        reported = set()
        try:
            with progress.activity(f"waiting for SSH on {', '.join(domains)} (up to {timeout:g}s)"):
                while any(t.is_alive() for t in threads):
                    for name in sorted(set(done) - reported):
                        progress.note(f"machine {name}: SSH answers after {done[name]:.1f}s")
                        reported.add(name)
                    progress.update("still waiting for " + ", ".join(n for n in domains if n not in done))
                    time.sleep(0.2)
        finally:
            cancel.set()
        for name in sorted(set(done) - reported):
            progress.note(f"machine {name}: SSH answers after {done[name]:.1f}s")
        if errors:
            raise next(iter(errors.values()))

    def _wait_ssh(self, lab, name: str, dom, timeout: float, cancel: threading.Event, note=lambda m: None) -> None:
        deadline = time.monotonic() + timeout
        target = lab.ssh_target(name)
        remote = SshRemote(target, connect_timeout=5)
        last = "not tried"
        resets, seen = 0, 0  # panics before `seen` (a character offset in the serial log) are dealt with
        while not cancel.is_set():
            if not dom.isActive():
                raise BackendError(f"machine `{name}` stopped while booting" + self._serial_tail(lab, name))
            text = self._serial_text(lab, name)
            if KERNEL_PANIC.search(text, seen):
                if resets >= PANIC_RESETS:
                    raise BackendError(f"machine `{name}`: its kernel panicked while booting, again after "
                                       f"{resets} reset(s)" + self._serial_tail(lab, name))
                resets, seen = resets + 1, len(text)
                oops = next((l.split("] ", 1)[-1] for l in text.splitlines() if "Oops" in l), "see its serial log")
                note(f"machine {name}: kernel panic while booting ({oops}); resetting it")
                dom.reset(0)
                deadline = time.monotonic() + timeout
                continue
            if SEED_FAILED.search(text):
                raise BackendError(f"machine `{name}`: its seed (host key, authorized key) was not applied"
                                   + self._serial_tail(lab, name, grep="kubelab-seed"))
            try:
                remote.connect()
                remote.close()
                return
            except HostKeyMismatch:
                raise
            except ConnectError as exc:
                last = exc.reason
            if time.monotonic() > deadline:
                raise MachineTimeout(
                    f"machine `{name}`: SSH at {target.host}:22 did not answer within "
                    f"{timeout:g}s; last error: {last}" + self._serial_tail(lab, name)
                )
            time.sleep(0.5)

    def wait_ssh(self, lab, name: str, timeout: float) -> None:
        dom = self.conn.lookupByName(lab.machine(name)["domain"])
        self._wait_ssh(lab, name, dom, timeout, threading.Event())

    @staticmethod
    def _serial_text(lab, name: str) -> str:
        try:
            return lab.serial_log(name).read_text(errors="replace")
        except OSError:
            return ""

    @classmethod
    def _serial_tail(cls, lab, name: str, n: int = 15, grep: str = "") -> str:
        log = lab.serial_log(name)
        lines = [l for l in cls._serial_text(lab, name).splitlines() if grep in l][-n:]
        if not lines:
            return f"\n  (nothing in the serial log {log})"
        return f"\n  last lines of {log}:\n" + "\n".join("    " + l for l in lines)

    # -- inspect -----------------------------------------------------------
    def machines(self, lab) -> list[Machine]:
        out = []
        for m in lab.state["machines"]:
            state = "absent"
            if m.get("domain"):
                try:
                    dom = self.conn.lookupByName(m["domain"])
                    state = _STATES.get(dom.state()[0], "unknown")
                except libvirt.libvirtError as exc:
                    if not _not_found(exc):
                        raise
            ssh = lab.ssh_target(m["name"]) if m.get("ip") else None
            out.append(Machine(m["name"], m["role"], state, m.get("ip", ""), ssh))
        return out

    # -- snapshots ---------------------------------------------------------
    def _domain(self, lab, machine: str):
        name = lab.machine(machine)["domain"]
        try:
            return self.conn.lookupByName(name)
        except libvirt.libvirtError as exc:
            raise BackendError(f"domain `{name}` of lab `{lab.name}` is gone: {exc.get_error_message()}") from None

    def snapshot(self, lab, machine: str, tag: str) -> None:
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", tag):
            raise UsageError(f"snapshot tag `{tag}`: use letters, digits, `.`, `_` and `-`")
        dom = self._domain(lab, machine)
        xml = (f"<domainsnapshot><name>{tag}</name>"
               "<disks><disk name='vda' snapshot='internal'/><disk name='vdb' snapshot='no'/></disks>"
               "</domainsnapshot>")
        try:
            dom.snapshotCreateXML(xml, 0)
        except libvirt.libvirtError as exc:
            raise BackendError(f"snapshot `{tag}` of machine `{machine}` failed: {exc.get_error_message()}") from None
        lab.state["snapshots"].setdefault(machine, []).append(tag)
        lab.save()

    def restore(self, lab, machine: str, tag: str, timeout: float = BOOT_TIMEOUT) -> None:
        dom = self._domain(lab, machine)
        try:
            snap = dom.snapshotLookupByName(tag, 0)
        except libvirt.libvirtError:
            known = ", ".join(f"`{t}`" for t in lab.state["snapshots"].get(machine, [])) or "none"
            raise UsageError(f"machine `{machine}` has no snapshot `{tag}`; its snapshots: {known}") from None
        try:
            dom.revertToSnapshot(snap, libvirt.VIR_DOMAIN_SNAPSHOT_REVERT_RUNNING)
        except libvirt.libvirtError as exc:
            raise BackendError(f"restore of `{machine}` to `{tag}` failed: {exc.get_error_message()}") from None
        self.wait_ssh(lab, machine, timeout)

    def pause(self, lab, machine: str) -> bool:
        # revertToSnapshot with REVERT_RUNNING (restore above) takes a paused domain as it takes a running one
        dom = self._domain(lab, machine)
        try:
            if dom.isActive() and dom.info()[0] != libvirt.VIR_DOMAIN_PAUSED:
                dom.suspend()
        except libvirt.libvirtError as exc:
            raise BackendError(f"pause of `{machine}` failed: {exc.get_error_message()}") from None
        return True

    # -- power -------------------------------------------------------------
    def power_cycle(self, lab, machine: str, kernel_args: str, timeout: float = BOOT_TIMEOUT) -> str:
        dom = self._domain(lab, machine)
        persistent = dom.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE)
        once = None
        if kernel_args:  # checked before the machine goes down
            root = ET.fromstring(persistent)
            cmdline = root.find("os/cmdline")
            if cmdline is None:
                raise Unsupported(f"machine `{machine}` boots without a kernel command line in its definition; "
                                  f"kernel arguments ({kernel_args}) cannot be added")
            cmdline.text = f"{cmdline.text} {kernel_args}"
            once = ET.tostring(root, encoding="unicode")
        started = time.monotonic()
        how = "shut down (ACPI)"
        if dom.isActive():
            dom.shutdown()  # the guest's own orderly power-off: it needs no network
            deadline = time.monotonic() + SHUTDOWN_TIMEOUT
            while dom.isActive() and time.monotonic() < deadline:
                time.sleep(0.5)
            if dom.isActive():
                dom.destroy()
                how = f"powered off (no ACPI shutdown within {SHUTDOWN_TIMEOUT:g}s)"
        off = time.monotonic() - started
        if once:  # this boot only: the running domain keeps the changed line, its definition the old one
            self.conn.defineXML(once)
        try:
            dom.create()
        finally:
            if once:
                self.conn.defineXML(persistent)
        booted = time.monotonic()
        self.wait_ssh(lab, machine, timeout)
        return (f"{how} in {off:.1f}s; booted" + (f" with `{kernel_args}` on the kernel command line" if kernel_args else "")
                + f"; SSH answered {time.monotonic() - booted:.1f}s later")

    def power_off(self, lab, machine: str, timeout: float) -> None:
        dom = self._domain(lab, machine)
        if dom.isActive():
            dom.shutdown()
        deadline = time.monotonic() + timeout
        while dom.isActive():
            if time.monotonic() > deadline:
                raise BackendError(f"machine `{machine}` of lab `{lab.name}` did not power off within {timeout:g}s")
            time.sleep(0.5)

    def health(self, lab) -> dict[str, str]:
        """Only what the host does to a domain counts: QEMU gone (shut off, reason crashed: a kill or
        a crash, never a shutdown or destroy of kubelab's), the domain undefined, or paused on an I/O
        error (QEMU's werror=stop). A pool's own pause (reason user) and a power cycle are not."""
        out = {}
        for m in lab.state["machines"]:
            try:
                dom = self.conn.lookupByName(m["domain"])
                state, reason = dom.state()
            except libvirt.libvirtError as exc:
                if _not_found(exc):
                    out[m["name"]] = f"its domain {m['domain']} is gone (undefined under the run)"
                continue  # libvirtd restarting: no answer is no news
            if state == libvirt.VIR_DOMAIN_CRASHED or (
                    state == libvirt.VIR_DOMAIN_SHUTOFF and reason == libvirt.VIR_DOMAIN_SHUTOFF_CRASHED):
                out[m["name"]] = (f"its QEMU process ended under the run (libvirt: domain {m['domain']} shut off, "
                                  "reason crashed: killed, or the emulator crashed; the host's OOM killer is one way)")
            elif state == libvirt.VIR_DOMAIN_PAUSED and reason == libvirt.VIR_DOMAIN_PAUSED_IOERROR:
                out[m["name"]] = self._io_error(lab, m["name"], dom)
            elif state == libvirt.VIR_DOMAIN_RUNNING and _stopped(m["domain"]):
                # libvirt still says running: the process was stopped behind its back (SIGSTOP)
                out[m["name"]] = (f"its QEMU process is stopped (state T: SIGSTOP on the host), so the guest's "
                                  "clock and every timing across the gap are not the cluster's")
        return out

    def cpu_seconds(self, lab) -> dict[str, tuple[int, float]]:
        out = {}
        for m in lab.state["machines"]:
            try:  # the domain's ID is new with each QEMU process; cpuTime: nanoseconds of its vCPUs
                dom = self.conn.lookupByName(m["domain"])
                out[m["name"]] = (dom.ID(), dom.info()[4] / 1e9)
            except libvirt.libvirtError:
                continue  # gone or libvirtd restarting: the watch says which; here, unknown
        return out

    def _io_error(self, lab, machine: str, dom) -> str:
        try:
            disk = self.disk_file(lab, machine)
            free = shutil.disk_usage(disk.parent).free
            where = f"{disk.parent}: {free / 2**20:.0f} MiB free"
        except (BackendError, OSError) as exc:
            where = f"its disk could not be read ({exc})"
        errors = {libvirt.VIR_DOMAIN_DISK_ERROR_NO_SPACE: "no space left",
                  libvirt.VIR_DOMAIN_DISK_ERROR_UNSPEC: "an I/O error"}
        try:
            found = ", ".join(f"{dev}: {errors.get(code, code)}" for dev, code in dom.diskErrors().items())
        except libvirt.libvirtError:
            found = ""
        return (f"QEMU paused it on a disk write error ({found or 'libvirt: paused, reason I/O error'}); {where}")

    def disk_file(self, lab, machine: str) -> Path:
        source = ET.fromstring(self._domain(lab, machine).XMLDesc(0)).find("devices/disk[@device='disk']/source")
        if source is None or not source.get("file"):
            raise BackendError(f"machine `{machine}` of lab `{lab.name}` has no file-backed root disk")
        return Path(source.get("file"))

    # -- logs --------------------------------------------------------------
    def collect_logs(self, lab, machine: str, dest: Path) -> list[Path]:
        dest.mkdir(parents=True, exist_ok=True)
        written = []
        log = lab.serial_log(machine)
        if log.exists():
            target = dest / f"{machine}.serial.log"
            shutil.copyfile(log, target)
            written.append(target)
        try:
            xml = self._domain(lab, machine).XMLDesc(0)
            target = dest / f"{machine}.domain.xml"
            target.write_text(xml)
            written.append(target)
        except BackendError:
            pass
        return written

    # -- teardown ----------------------------------------------------------
    def _remove_domain(self, name: str) -> bool:
        try:
            dom = self.conn.lookupByName(name)
        except libvirt.libvirtError as exc:
            if _not_found(exc):
                return False
            raise
        if dom.isActive():
            try:
                dom.destroy()
            except libvirt.libvirtError as exc:
                if not _not_found(exc):
                    raise
        try:
            dom.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA)
        except libvirt.libvirtError as exc:
            if not _not_found(exc):
                raise
        return True

    def _remove_network(self, name: str) -> bool:
        try:
            net = self.conn.networkLookupByName(name)
        except libvirt.libvirtError as exc:
            if _not_found(exc):
                return False
            raise
        if net.isActive():
            net.destroy()
        net.undefine()
        return True

    def _remove_volume(self, name: str, in_pool: str = POOL) -> bool:
        pool = self._existing_pool(in_pool)
        if pool is None:
            return False
        try:
            vol = pool.storageVolLookupByName(name)
        except libvirt.libvirtError as exc:
            if _not_found(exc):
                return self._remove_unlisted_file(pool, name)
            raise
        return delete_volume(vol)

    def _unlisted_files(self, pool) -> list[str]:
        """kubelab's files in the pool's folder that libvirt does not list yet.

        A seed is written as a file and appears in libvirt's list only at the pool's next
        refresh, which libvirt refuses while another lab uploads; a run killed between the
        two, or a refresh refused, would otherwise hide it from teardown and the janitor.
        """
        listed = {v.name() for v in pool.listAllVolumes(0)}
        folder = self.pool_dir(pool)
        if not folder.is_dir():
            return []
        return sorted(f.name for f in folder.iterdir()
                      if f.name.startswith(PREFIX) and f.name not in listed and not is_box_volume(f.name))

    def _remove_unlisted_file(self, pool, name: str) -> bool:
        path = self.pool_dir(pool) / name
        if not name.startswith(PREFIX) or not path.is_file():
            return False
        path.unlink(missing_ok=True)
        return True

    def destroy(self, lab) -> list[str]:
        removed = []
        state = lab.state
        domains = set(state["objects"]["domains"]) | {m["domain"] for m in state["machines"] if m.get("domain")}
        for name in sorted(domains):
            if self._remove_domain(name):
                removed.append(f"domain {name}")
            lab.forget("domains", name)
        in_pool = state.get("pool", POOL)
        for name in sorted(state["objects"]["volumes"]):
            if self._remove_volume(name, in_pool):
                removed.append(f"volume {name}")
            lab.forget("volumes", name)
        if in_pool != POOL:
            with self._host_lock():  # as a lab's up takes it to pick its pool
                pool = self._existing_pool(in_pool)
                if pool is not None and self._drop_if_unused(pool, leaving=lab.name):
                    removed.append(f"pool {in_pool}")
        for name in sorted(state["objects"]["networks"]):
            if self._remove_network(name):
                removed.append(f"network {name}")
            lab.forget("networks", name)
        return removed

    def leftovers(self) -> list[str]:
        found = [f"domain {d.name()}" for d in self.conn.listAllDomains(0) if self._is_ours(d)]
        found += [f"network {n.name()}" for n in self.conn.listAllNetworks(0) if n.name().startswith(PREFIX)]
        for pool in self._pools():
            found += [f"volume {v.name()}" for v in pool.listAllVolumes(0) if _lab_volume(v.name())]
            found += [f"volume {name}" for name in self._unlisted_files(pool)]
        return found

    @staticmethod
    def _is_ours(dom) -> bool:
        if dom.name().startswith(PREFIX):
            return True
        try:
            dom.metadata(libvirt.VIR_DOMAIN_METADATA_ELEMENT, METADATA_NS, 0)
            return True
        except libvirt.libvirtError:
            return False

    def remove_leftovers(self, keep_labs: set[str]) -> list[str]:
        removed = []
        for dom in self.conn.listAllDomains(0):
            if self._is_ours(dom) and lab_of(dom.name()) not in keep_labs:
                if self._remove_domain(dom.name()):
                    removed.append(f"domain {dom.name()}")
        pools = self._pools()
        for pool in pools:
            for vol in pool.listAllVolumes(0):
                if _lab_volume(vol.name()) and lab_of(vol.name()) not in keep_labs:
                    if delete_volume(vol):
                        removed.append(f"volume {vol.name()}")
            for name in self._unlisted_files(pool):
                if lab_of(name) not in keep_labs and self._remove_unlisted_file(pool, name):
                    removed.append(f"volume {name}")
            with self._host_lock():  # as a lab's up takes it to pick its pool and record it
                if self._drop_if_unused(pool):
                    removed.append(f"pool {pool.name()}")
        pool = next((p for p in pools if p.name() == POOL), None)
        for net in self.conn.listAllNetworks(0):
            if net.name().startswith(PREFIX) and lab_of(net.name()) not in keep_labs:
                if self._remove_network(net.name()):
                    removed.append(f"network {net.name()}")
        if pool is not None and not keep_labs and not pool.listAllVolumes(0):  # box volumes keep it
            pool.destroy()
            pool.undefine()
            removed.append(f"pool {POOL}")
        return removed
