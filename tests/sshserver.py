"""A real SSH server on 127.0.0.1 for testing the client without a guest.

paramiko's server side, one host key, one authorized client key; `exec`
requests run through /bin/sh on this host, with stdin, stdout, stderr and
the exit status wired as sshd would.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time

import paramiko


class _Server(paramiko.ServerInterface):
    def __init__(self, authorized: paramiko.PKey, channel_delay: float = 0.0, status_first: bool = False):
        self.authorized = authorized
        self.channel_delay = channel_delay
        self.status_first = status_first
        self.commands: dict[int, bytes] = {}
        self.cond = threading.Condition()

    def check_channel_request(self, kind, chanid):
        time.sleep(self.channel_delay)  # a swamped sshd: connected, slow to open a session
        return paramiko.OPEN_SUCCEEDED if kind == "session" else paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_auth_publickey(self, username, key):
        ok = username == "root" and key.get_base64() == self.authorized.get_base64()
        return paramiko.AUTH_SUCCESSFUL if ok else paramiko.AUTH_FAILED

    def get_allowed_auths(self, username):
        return "publickey"

    def check_channel_exec_request(self, channel, command):
        with self.cond:
            self.commands[channel.get_id()] = command
            self.cond.notify_all()
        return True

    def command_for(self, channel, timeout=20) -> bytes | None:
        with self.cond:
            self.cond.wait_for(lambda: channel.get_id() in self.commands, timeout)
            return self.commands.pop(channel.get_id(), None)


def _pump(src, send):
    for chunk in iter(lambda: src.read1(65536), b""):
        send(chunk)


def _serve_channel(channel, server: _Server):
    command = server.command_for(channel)
    if command is None:
        return
    proc = subprocess.Popen(["/bin/sh", "-c", command.decode()], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def feed():
        try:
            while True:
                data = channel.recv(65536)
                if not data:
                    break
                proc.stdin.write(data)
            proc.stdin.close()
        except (OSError, EOFError):
            pass

    threads = [threading.Thread(target=feed, daemon=True),
               threading.Thread(target=_pump, args=(proc.stdout, channel.sendall), daemon=True),
               threading.Thread(target=_pump, args=(proc.stderr, channel.sendall_stderr), daemon=True)]
    if server.status_first:
        # OpenSSH's sshd sends exit-status when the command exits, which can be before the output
        # still in the pipe has gone out; here always so: the status, then the output, then EOF
        threads[0].start()
        code = proc.wait(timeout=60)
        channel.send_exit_status(code)
        time.sleep(0.3)
        threads[1].start()
        threads[2].start()
    else:
        for t in threads:
            t.start()
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
    threads[1].join(10)
    threads[2].join(10)
    try:
        if not server.status_first:
            channel.send_exit_status(code)
        channel.close()
    except (OSError, EOFError):
        pass


class SshTestServer:
    """Accepts connections until closed; each connection serves exec channels."""

    def __init__(self, host_key: paramiko.PKey, authorized: paramiko.PKey, channel_delay: float = 0.0,
                 status_first: bool = False):
        self.host_key = host_key
        self.authorized = authorized
        self.channel_delay = channel_delay
        self.status_first = status_first
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self._stop = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn):
        transport = paramiko.Transport(conn)
        transport.add_server_key(self.host_key)
        server = _Server(self.authorized, self.channel_delay, self.status_first)
        try:
            transport.start_server(server=server)
        except (paramiko.SSHException, EOFError, OSError):
            return
        while transport.is_active():
            channel = transport.accept(1)
            if channel is not None:
                threading.Thread(target=_serve_channel, args=(channel, server), daemon=True).start()

    def close(self):
        self._stop = True
        self.sock.close()
