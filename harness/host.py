"""The host: can it run labs, and what exactly to do when it cannot.

`checks()` is `invoke doctor`; `prepare()` is what every job runs first: it
starts virtlogd and libvirtd (there may be no systemd to do it) and gives the
kvm group access to /dev/kvm (without it libvirt re-probes QEMU on every call
and a domain start takes over a minute).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import paths
from .errors import HostError

LIBVIRT_URI = "qemu:///system"
VIRTLOGD_SOCK = Path("/run/libvirt/virtlogd-sock")
LIBVIRTD_SOCK = Path("/run/libvirt/libvirt-sock")
MIN_FREE_DISK = 6 << 30
MIN_FREE_MEMORY = 1536 << 20

TOOLS = {
    "qemu-system-x86_64": "qemu-system-x86",
    "qemu-img": "qemu-utils",
    "debootstrap": "debootstrap",
    "mkfs.ext4": "e2fsprogs",
    "dnsmasq": "dnsmasq-base",
    "virtlogd": "libvirt-daemon",
    "libvirtd": "libvirt-daemon",
}


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def _which(tool: str) -> str | None:
    return shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin:/usr/bin")


def _socket_alive(path: Path) -> bool:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        s.close()


def systemd_is_init() -> bool:
    return Path("/run/systemd/system").is_dir()


def daemon_command(name: str) -> str:
    """The command that starts daemon `name` on this host."""
    return f"systemctl start {name}" if systemd_is_init() else f"/usr/sbin/{name} -d"


def daemon_fix(name: str) -> str:
    if systemd_is_init():
        return daemon_command(name)
    return f"{daemon_command(name)}   (no systemd here: start it by hand; `invoke doctor --fix` does)"


def kvm_group_ok() -> bool | None:
    """None when there is no /dev/kvm at all."""
    try:
        st = os.stat("/dev/kvm")
    except FileNotFoundError:
        return None
    import grp

    try:
        kvm_gid = grp.getgrnam("kvm").gr_gid
    except KeyError:
        return False
    return st.st_gid == kvm_gid and bool(st.st_mode & 0o060 == 0o060)


def meminfo() -> dict[str, int]:
    out = {}
    for line in Path("/proc/meminfo").read_text().splitlines():
        key, _, rest = line.partition(":")
        out[key] = int(rest.split()[0]) * 1024
    return out


def available_memory() -> int:
    return meminfo()["MemAvailable"]


def cpu_times(stat: str | None = None) -> tuple[float, float]:
    """(busy, idle) CPU seconds of every core together since boot, from /proc/stat's `cpu` line:
    idle is idle + iowait; busy is user, nice, system, irq and softirq (user already counts guest
    time). Steal, what a hypervisor under this host took, is neither: it was never this host's."""
    fields = (stat if stat is not None else Path("/proc/stat").read_text()).splitlines()[0].split()
    assert fields[0] == "cpu", fields[0]
    user, nice, system, idle, iowait, irq, softirq = (int(x) for x in fields[1:8])
    tick = os.sysconf("SC_CLK_TCK")
    return (user + nice + system + irq + softirq) / tick, (idle + iowait) / tick


def checks() -> list[Check]:
    result = [
        Check(
            "root",
            os.geteuid() == 0,
            "running as root" if os.geteuid() == 0 else f"running as uid {os.geteuid()}",
            "run as root (kubelab manages system libvirt, bridges and /dev/kvm)",
        )
    ]
    for tool, package in TOOLS.items():
        found = _which(tool)
        result.append(
            Check(tool, bool(found), found or "not found", f"apt-get install -y {package}")
        )
    result.append(
        Check("virtlogd running", _socket_alive(VIRTLOGD_SOCK),
              f"socket {VIRTLOGD_SOCK}" + ("" if _socket_alive(VIRTLOGD_SOCK) else " not answering"),
              daemon_fix("virtlogd"))
    )
    alive = _socket_alive(LIBVIRTD_SOCK)
    result.append(
        Check("libvirtd running", alive, f"socket {LIBVIRTD_SOCK}" + ("" if alive else " not answering"),
              daemon_fix("libvirtd"))
    )
    kvm = kvm_group_ok()
    if kvm is None:
        result.append(Check("/dev/kvm", True, "absent: guests will use TCG (software emulation)"))
    else:
        result.append(
            Check("/dev/kvm", kvm,
                  "group kvm, mode 660" if kvm else "not accessible to group kvm (libvirt start takes ~70 s per domain)",
                  "chgrp kvm /dev/kvm && chmod 660 /dev/kvm")
        )
    from .machines import accel

    verdict = accel.cached_verdict()
    if verdict is None:
        result.append(Check("acceleration", True, "not probed yet: probed on first `lab.up` (needs an image)"))
    else:
        result.append(Check("acceleration", True, verdict.describe()))
    cache = paths.cache_dir()
    probe = cache if cache.exists() else Path("/")
    free = shutil.disk_usage(probe).free
    result.append(
        Check("disk", free >= MIN_FREE_DISK, f"{free / 2**30:.1f} GiB free at {probe}",
              f"free at least {MIN_FREE_DISK >> 30} GiB under {cache} (or set KUBELAB_CACHE elsewhere)")
    )
    mem = available_memory()
    result.append(
        Check("memory", mem >= MIN_FREE_MEMORY, f"{mem / 2**30:.1f} GiB available",
              "stop other guests or processes; each TCG guest needs its memory plus ~0.5 GiB")
    )
    return result


def _start_daemon(name: str, sock: Path, timeout: float = 20) -> None:
    if _socket_alive(sock):
        return
    if systemd_is_init():
        cmd = ["systemctl", "start", name]
    else:
        binary = _which(name)
        if not binary:
            raise HostError(f"{name} is not installed: apt-get install -y libvirt-daemon-system")
        cmd = [binary, "-d"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise HostError(f"`{' '.join(cmd)}` exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    deadline = time.monotonic() + timeout
    while not _socket_alive(sock):
        if time.monotonic() > deadline:
            raise HostError(f"{name} started but {sock} did not answer within {timeout:g}s")
        time.sleep(0.2)


def prepare(log=print) -> None:
    """Make the host ready: fix what can be fixed, raise HostError for the rest."""
    if os.geteuid() != 0:
        raise HostError("kubelab needs root to manage system libvirt: run it as root (or with sudo)")
    if kvm_group_ok() is False:
        import grp

        os.chown("/dev/kvm", -1, grp.getgrnam("kvm").gr_gid)
        os.chmod("/dev/kvm", 0o660)
        log("host: /dev/kvm made accessible to group kvm (chgrp kvm, chmod 660)")
    for name, sock in (("virtlogd", VIRTLOGD_SOCK), ("libvirtd", LIBVIRTD_SOCK)):
        if not _socket_alive(sock):
            _start_daemon(name, sock)
            log(f"host: started {name}")
    missing = [c for c in checks() if not c.ok and c.name in TOOLS]
    if missing:
        raise HostError(
            "missing host tools: " + ", ".join(c.name for c in missing)
            + "\n  fix: " + "; ".join(sorted({c.fix for c in missing}))
        )


def main(argv: list[str]) -> int:
    if "--prepare" in argv:
        try:
            prepare(log=lambda m: print(f"[setup] {m}"))
        except HostError as exc:
            print(f"[setup] {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
