"""The SSH client against a real SSH server on loopback (no guest needed)."""

import io
from pathlib import Path

import paramiko
import pytest

from harness.errors import CommandFailed, CommandTimedOut, ConnectError, HostKeyMismatch
from harness.remote.keys import KeyPair, fingerprint
from harness.remote.ssh import SshRemote, SshTarget
from tests.sshserver import SshTestServer


def _pkey(pair: KeyPair) -> paramiko.PKey:
    return paramiko.Ed25519Key.from_private_key(io.StringIO(pair.private_openssh.decode()))


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    client, host, other = (KeyPair.generate(n) for n in ("client", "host", "other"))
    client.save(d / "id_ed25519")
    return {"client": client, "host": host, "other": other, "client_path": d / "id_ed25519"}


@pytest.fixture(scope="module")
def server(keys):
    srv = SshTestServer(_pkey(keys["host"]), _pkey(keys["client"]))
    yield srv
    srv.close()


def target(keys, server, host_key=None, key_path=None, port=None):
    return SshTarget("node1", "127.0.0.1", port or server.port, "root",
                     key_path or keys["client_path"], host_key or keys["host"].public_openssh)


def test_run_returns_exit_code_streams_and_timing(keys, server):
    with SshRemote(target(keys, server)) as r:
        res = r.run("echo out; echo err >&2; exit 3")
    assert (res.exit_code, res.stdout, res.stderr) == (3, "out\n", "err\n")
    assert res.host == "node1" and res.duration > 0 and res.started_at > 1.7e9


def test_output_that_arrives_after_the_exit_status_is_kept(keys):
    """sshd may send exit-status before the last of the output (measured: verify read admin.conf as
    exit 0 with no text once); the client reads until the server's EOF, not until the status."""
    srv = SshTestServer(_pkey(keys["host"]), _pkey(keys["client"]), status_first=True)
    try:
        with SshRemote(target(keys, srv)) as r:
            res = r.run("printf 'apiVersion: v1\\nclusters:\\n'; echo err >&2")
    finally:
        srv.close()
    assert (res.exit_code, res.stdout, res.stderr) == (0, "apiVersion: v1\nclusters:\n", "err\n")


def test_a_background_child_holding_stdout_open_costs_the_grace_not_the_timeout(keys, monkeypatch):
    """As sshd: the status when the shell exits; EOF only when the child that kept stdout ends."""
    from harness.remote import ssh

    monkeypatch.setattr(ssh, "EOF_GRACE", 2.0)
    srv = SshTestServer(_pkey(keys["host"]), _pkey(keys["client"]), status_first=True)
    try:
        with SshRemote(target(keys, srv)) as r:
            res = r.run("echo started; sleep 20 &", timeout=15)
    finally:
        srv.close()
    assert (res.exit_code, res.stdout) == (0, "started\n") and res.duration < 10


def test_a_connection_closed_under_a_command_is_a_connect_error(keys, server):
    """The run's watch closes a lost machine's connection while a command waits on it: the command
    ends with ConnectError naming the machine (measured: an EOFError read as kubelab's own bug)."""
    import threading

    with SshRemote(target(keys, server)) as r:
        r.run("true")
        threading.Timer(0.5, r.close).start()
        with pytest.raises(ConnectError, match="ssh .*node1.*: the connection closed"):
            r.run("sleep 5", timeout=20)


def test_run_drains_both_streams_at_once(keys, server):
    # 4 MiB on each stream: a client reading one stream after the other stalls here.
    cmd = "head -c 4194304 /dev/zero | tr '\\0' a; head -c 4194304 /dev/zero | tr '\\0' b >&2"
    with SshRemote(target(keys, server)) as r:
        res = r.run(cmd, timeout=60)
    assert res.ok and len(res.stdout) == 4194304 and len(res.stderr) == 4194304


def test_timeout_carries_command_and_last_output(keys, server):
    with SshRemote(target(keys, server)) as r, pytest.raises(CommandTimedOut) as info:
        r.run("for i in 1 2 3; do echo line$i; done; sleep 30", timeout=1.5)
    msg = str(info.value)
    assert "node1: `for i in 1 2 3; do echo line$i; done; sleep 30` did not finish within 1.5s" in msg
    assert "line3" in msg and info.value.result.exit_code is None


def test_check_raises_with_exit_code_and_tail(keys, server):
    with SshRemote(target(keys, server)) as r, pytest.raises(CommandFailed) as info:
        r.run("echo boom >&2; exit 7", check=True)
    assert "`echo boom >&2; exit 7` exited 7" in str(info.value)
    assert "stderr: boom" in str(info.value)


def test_put_and_get_round_trip_binary(keys, server, tmp_path):
    data = bytes(range(256)) * 64
    path = str(tmp_path / "blob")
    with SshRemote(target(keys, server)) as r:
        r.put(data, path, mode=0o600)
        assert r.get(path) == data
    assert (Path(path).stat().st_mode & 0o777) == 0o600


def test_wrong_host_key_is_refused(keys, server):
    remote = SshRemote(target(keys, server, host_key=keys["other"].public_openssh))
    with pytest.raises(HostKeyMismatch) as info:
        remote.connect()
    msg = str(info.value)
    assert fingerprint(keys["other"].public_openssh) in msg and fingerprint(keys["host"].public_openssh) in msg
    assert "refusing to connect" in msg
    # a mismatch is final: wait_ready does not retry it away
    with pytest.raises(HostKeyMismatch):
        remote.wait_ready(timeout=5)


def test_unknown_client_key_fails_auth_without_leaking_it(keys, server, tmp_path):
    KeyPair.generate("stranger").save(tmp_path / "stranger")
    t = target(keys, server, key_path=tmp_path / "stranger")
    with pytest.raises(ConnectError) as info:
        SshRemote(t).connect()
    msg = str(info.value)
    assert msg.startswith(f"ssh root@127.0.0.1:{server.port} (machine `node1`, key {tmp_path / 'stranger'})")
    assert "authentication failed" in msg
    private = (tmp_path / "stranger").read_text()
    for line in private.splitlines()[1:-1]:
        assert line not in msg


def test_connection_refused_names_where(keys, server):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises(ConnectError) as info:
        SshRemote(target(keys, server, port=port), connect_timeout=2).wait_ready(timeout=1, interval=0.2)
    msg = str(info.value)
    assert f"root@127.0.0.1:{port}" in msg and "not reachable within 1s" in msg


def test_a_session_that_does_not_open_is_a_connect_error_naming_the_machine(keys):
    slow = SshTestServer(_pkey(keys["host"]), _pkey(keys["client"]), channel_delay=3)
    try:
        remote = SshRemote(target(keys, slow), connect_timeout=1)
        with pytest.raises(ConnectError) as info:
            remote.run("true")
        msg = str(info.value)
        assert f"root@127.0.0.1:{slow.port}" in msg
        assert "connected, but no session opened within 1s (Timeout opening channel.)" in msg
        assert remote._client is None  # the next command connects afresh
    finally:
        slow.close()


def test_missing_client_key_file(keys, server, tmp_path):
    with pytest.raises(ConnectError) as info:
        SshRemote(target(keys, server, key_path=tmp_path / "nope")).connect()
    assert f"cannot read client key {tmp_path / 'nope'}" in str(info.value)


def test_reconnects_after_the_connection_drops(keys, server):
    r = SshRemote(target(keys, server))
    assert r.run("echo 1").stdout == "1\n"
    r._client.get_transport().close()
    assert r.run("echo 2").stdout == "2\n"
    r.close()
