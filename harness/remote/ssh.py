"""SSH to a lab machine with paramiko, host key pinned.

The client trusts exactly one host key per machine: the one kubelab made and
seeded into it. A different key is refused (RejectPolicy, never AutoAdd).
Errors name host, port, user and key file, never key material.
"""

from __future__ import annotations

import base64
import logging
import shlex
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import paramiko

from ..errors import CommandFailed, CommandTimedOut, ConnectError, HostKeyMismatch
from .keys import fingerprint
from .result import CommandResult

# paramiko logs tracebacks for every refused banner while sshd is starting.
logging.getLogger("paramiko").setLevel(logging.CRITICAL)

POLL = 0.05
# after a command's exit status, how long its output may still take to end (EOF)
EOF_GRACE = 10.0


@dataclass(frozen=True)
class SshTarget:
    name: str  # the machine's name, for messages
    host: str
    port: int
    user: str
    key_path: Path  # client private key
    host_key: str  # pinned server public key, "ssh-ed25519 AAAA..."

    def describe(self) -> str:
        return f"{self.user}@{self.host}:{self.port} (machine `{self.name}`, key {self.key_path})"

    @property
    def known_hosts_name(self) -> str:
        return self.host if self.port == 22 else f"[{self.host}]:{self.port}"


def _pinned_key(host_key: str) -> paramiko.PKey:
    kind, blob = host_key.split()[:2]
    return paramiko.PKey.from_type_string(kind, base64.b64decode(blob))


class SshRemote:
    """One machine's SSH session; connects lazily, reconnects after a reboot."""

    # A guest still busy booting under TCG (a trixie guest beside a booting sid one) took
    # 13 s for its first command; with 10 s the handshake was cut off ("No existing session").
    def __init__(self, target: SshTarget, connect_timeout: float = 30.0):
        self.target = target
        self.connect_timeout = connect_timeout
        self._client: paramiko.SSHClient | None = None

    # -- connection -----------------------------------------------------
    def connect(self) -> None:
        t = self.target
        client = paramiko.SSHClient()
        client.get_host_keys().add(t.known_hosts_name, t.host_key.split()[0], _pinned_key(t.host_key))
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        try:  # kubelab's own keys are ed25519; a user's (`verify --identity`) may be any type
            pkey = paramiko.PKey.from_path(str(t.key_path))
        except (OSError, paramiko.SSHException, ValueError) as exc:
            raise ConnectError(t, f"cannot read client key {t.key_path}: {type(exc).__name__}") from None
        try:
            client.connect(
                t.host, port=t.port, username=t.user, pkey=pkey, timeout=self.connect_timeout,
                banner_timeout=self.connect_timeout, auth_timeout=self.connect_timeout,
                allow_agent=False, look_for_keys=False,
            )
        except paramiko.BadHostKeyException as exc:
            client.close()
            got = f"{exc.key.get_name()} {exc.key.get_base64()}"
            raise HostKeyMismatch(
                t, f"host key mismatch: expected {fingerprint(t.host_key)}, the machine presented "
                f"{fingerprint(got)}; refusing to connect (is this the machine kubelab created?)",
            ) from None
        except paramiko.AuthenticationException:
            client.close()
            raise ConnectError(t, "authentication failed: the machine does not accept this key") from None
        except (socket.timeout, TimeoutError):
            client.close()
            raise ConnectError(t, f"no answer within {self.connect_timeout:g}s") from None
        except (OSError, paramiko.SSHException, EOFError) as exc:
            client.close()
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            if reason == "No existing session":  # paramiko's words for a handshake that did not finish
                reason = f"the SSH handshake did not finish within {self.connect_timeout:g}s (No existing session)"
            raise ConnectError(t, reason) from None
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(15)
        self._client = client

    def wait_ready(self, timeout: float, interval: float = 0.5) -> float:
        """Connect, retrying until `timeout`; returns seconds waited. A host key
        mismatch is final and is not retried."""
        start = time.monotonic()
        last: ConnectError | None = None
        while True:
            try:
                self.close()
                self.connect()
                return time.monotonic() - start
            except HostKeyMismatch:
                raise
            except ConnectError as exc:
                last = exc
            if time.monotonic() - start >= timeout:
                raise ConnectError(self.target, f"not reachable within {timeout:g}s; last error: {last.reason}")
            time.sleep(interval)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _transport(self) -> paramiko.Transport:
        if self._client is None or not (self._client.get_transport() and self._client.get_transport().is_active()):
            self.close()
            self.connect()
        assert self._client is not None
        return self._client.get_transport()

    # -- commands -------------------------------------------------------
    def run(self, command: str, timeout: float = 60.0, check: bool = False, stdin: bytes | None = None) -> CommandResult:
        """Run `command` through the remote shell. Both output streams are drained
        together (a full stderr pipe cannot stall stdout). On timeout the channel
        is closed and CommandTimedOut carries what was printed so far."""
        code, out, err, started_at, duration = self._exec(command, timeout, stdin)
        result = CommandResult(self.target.name, command, code, out.decode(errors="replace"),
                               err.decode(errors="replace"), started_at, duration)
        if code is None:
            raise CommandTimedOut(result, timeout)
        if check and not result.ok:
            raise CommandFailed(result)
        return result

    def _exec(self, command: str, timeout: float, stdin: bytes | None):
        started_at = time.time()
        start = time.monotonic()
        try:
            channel = self._transport().open_session(timeout=self.connect_timeout)
        except EOFError:  # the connection was closed under us (a lost machine's, cut by the run's watch)
            self.close()
            raise ConnectError(self.target, "the connection closed before the command could start") from None
        except paramiko.SSHException as exc:
            # connected, but no session: seen on a worker swamped under TCG ("Timeout opening channel.")
            self.close()
            raise ConnectError(self.target, f"connected, but no session opened within {self.connect_timeout:g}s "
                                            f"({exc}): the machine is swamped or its sshd is stuck") from None
        out, err = bytearray(), bytearray()
        code = status_at = None
        try:
            channel.exec_command(command)
            if stdin is not None:
                channel.sendall(stdin)
                channel.shutdown_write()
            while True:
                busy = False
                if channel.recv_ready():
                    out += channel.recv(65536)
                    busy = True
                if channel.recv_stderr_ready():
                    err += channel.recv_stderr(65536)
                    busy = True
                # done at the server's EOF, not at the exit status: sshd may send the status
                # before the last of the output (a read as "exit 0, no output" otherwise). A
                # command whose background child keeps stdout open never sends EOF: after the
                # status, EOF_GRACE is all it gets
                if channel.exit_status_ready() and status_at is None:
                    status_at = time.monotonic()
                if (status_at is not None and not channel.recv_ready() and not channel.recv_stderr_ready()
                        and (channel.eof_received or channel.closed or time.monotonic() - status_at > EOF_GRACE)):
                    code = channel.recv_exit_status()
                    if code == -1 and not channel.eof_received:  # closed with no status and no EOF: cut
                        raise EOFError()
                    break
                if time.monotonic() - start > timeout:
                    break
                if not busy:
                    time.sleep(POLL)
        except (EOFError, OSError, paramiko.SSHException) as exc:
            # closed under the command: a lost machine's connection, cut by the run's watch
            raise ConnectError(self.target, f"the connection closed under `{command}` ({type(exc).__name__}"
                                            f"{': ' + str(exc) if str(exc) else ''})") from None
        finally:
            channel.close()
        return code, bytes(out), bytes(err), started_at, time.monotonic() - start

    def put(self, data: bytes, path: str, mode: int = 0o644, timeout: float = 60.0) -> None:
        """Write `data` to `path` on the machine (no SFTP needed in the guest)."""
        q = shlex.quote(path)
        self.run(f"cat > {q}.kubelab-tmp && chmod {mode:o} {q}.kubelab-tmp && mv {q}.kubelab-tmp {q}",
                 timeout=timeout, check=True, stdin=data)

    def get(self, path: str, timeout: float = 60.0) -> bytes:
        command = f"cat {shlex.quote(path)}"
        code, out, err, started_at, duration = self._exec(command, timeout, None)
        if code != 0:
            result = CommandResult(self.target.name, command, code, "", err.decode(errors="replace"),
                                   started_at, duration)
            raise CommandTimedOut(result, timeout) if code is None else CommandFailed(result)
        return out

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
