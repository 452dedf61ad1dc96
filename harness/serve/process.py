"""Host daemons kubelab starts for a lab, found again and stopped by what they are.

A daemon runs in its own session (it outlives the `invoke` that started it),
logs to a file, and is recorded as (pid, start time, argv). Stopping checks
that the pid is still that process before signalling it, so a recycled pid
is never killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import HarnessError

READY_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


@dataclass(frozen=True)
class Daemon:
    name: str
    pid: int
    started: int  # process start time in clock ticks since boot (/proc/PID/stat field 22)
    argv: tuple[str, ...]
    url: str  # where it answers
    log: str

    def to_state(self) -> dict:
        return {**asdict(self), "argv": list(self.argv)}

    @classmethod
    def from_state(cls, d: dict) -> "Daemon":
        return cls(**{**d, "argv": tuple(d["argv"])})

    def alive(self) -> bool:
        return start_time(self.pid) == self.started


def start_time(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name may hold spaces and parentheses: fields start after the last ')'
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":  # a zombie is gone for our purposes
        return None
    return int(fields[19])


def argv_of(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").decode(errors="replace").split("\0")
    except OSError:
        return []


def start(name: str, argv: list[str], log: Path, url: str, env: dict[str, str] | None = None,
          timeout: float = READY_TIMEOUT) -> Daemon:
    """Start `argv` detached; return once `url` answers HTTP (any status), or raise with its log."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env={**os.environ, **(env or {})})
    started = start_time(proc.pid)
    daemon = Daemon(name, proc.pid, started or 0, tuple(argv), url, str(log))
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise HarnessError(f"{name} exited {proc.returncode} right after start: `{' '.join(argv)}`"
                               + _log_tail(log))
        if answers(url):
            return daemon
        if time.monotonic() > deadline:
            stop(daemon)
            raise HarnessError(f"{name} did not answer at {url} within {timeout:g}s" + _log_tail(log))
        time.sleep(0.1)


def answers(url: str, timeout: float = 2.0) -> bool:
    try:
        urllib.request.urlopen(url, timeout=timeout).close()
        return True
    except urllib.error.HTTPError:
        return True  # it answered
    except (urllib.error.URLError, OSError):
        return False


def stop(daemon: Daemon, timeout: float = STOP_TIMEOUT) -> bool:
    """SIGTERM, then SIGKILL after `timeout`; False when it was already gone."""
    if not daemon.alive():
        return False
    os.kill(daemon.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while daemon.alive():
        if time.monotonic() > deadline:
            os.kill(daemon.pid, signal.SIGKILL)
        time.sleep(0.05)
        try:  # reap it when it is our child (started in this process)
            os.waitpid(daemon.pid, os.WNOHANG)
        except ChildProcessError:
            pass
    return True


def _log_tail(log: Path, n: int = 15) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()[-n:]
    except OSError:
        return ""
    return f"\n  last lines of {log}:\n" + "\n".join("    " + l for l in lines) if lines else ""


def find(marker: str) -> list[tuple[int, list[str]]]:
    """Running processes whose command line contains `marker` (a path kubelab owns)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            argv = argv_of(int(entry.name))
            if any(marker in a for a in argv):
                found.append((int(entry.name), argv))
    return found


def listening(host: str, port: int) -> bool:
    """Is anything on this machine listening on host:port? Read from /proc/net/tcp, so
    nothing is sent anywhere (a lab's address, once its network is gone, would route out)."""
    import ipaddress
    import socket
    import struct

    want_ip = ipaddress.ip_address(host)
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            if state != "0A":  # LISTEN
                continue
            addr_hex, port_hex = local.split(":")
            if int(port_hex, 16) != port:
                continue
            raw = bytes.fromhex(addr_hex)
            if len(raw) == 4:
                ip = ipaddress.ip_address(socket.inet_ntoa(struct.pack("<I", int(addr_hex, 16))))
            else:
                ip = ipaddress.ip_address(b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4)))
                ip = ip.ipv4_mapped or ip
            if ip == want_ip or ip.is_unspecified:
                return True
    return False
