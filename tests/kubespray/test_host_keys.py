"""Host keys stay pinned under kubespray's ansible.cfg, which turns checking off (-m kubespray).

Ansible from the kubespray venv, with the checkout's ansible.cfg, against a real SSH
server on 127.0.0.1 (tests/sshserver.py, no guest): with kubelab's environment a
wrong pinned key stops Ansible before any command runs; with kubespray's settings
alone the same wrong key is accepted.
"""

import io
import subprocess

import paramiko
import pytest
import yaml

from harness.kubespray import inventory
from harness.kubespray.command import playbook_command
from harness.kubespray.inventory import Host
from harness.remote.keys import KeyPair
from tests.sshserver import SshTestServer

pytestmark = pytest.mark.kubespray


def _pkey(pair: KeyPair) -> paramiko.PKey:
    return paramiko.Ed25519Key.from_private_key(io.StringIO(pair.private_openssh.decode()))


@pytest.fixture
def lab(tmp_path):
    client, host, other = (KeyPair.generate(n) for n in ("client", "cp1.demo", "impostor"))
    client.save(tmp_path / "id_ed25519")
    server = SshTestServer(_pkey(host), _pkey(client))
    hosts = [Host("cp1", "127.0.0.1", ("kube_control_plane", "etcd", "kube_node"))]
    inv = inventory.inventory(hosts, tmp_path / "id_ed25519")
    inv["all"]["hosts"]["cp1"]["ansible_port"] = server.port
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inv))
    control = tmp_path / "cp"
    yield {"dir": tmp_path, "hosts": hosts, "host": host, "other": other, "port": server.port, "control": control}
    # close the SSH masters kubespray's ControlPersist=30m would keep
    for sock in (control.iterdir() if control.exists() else []):
        subprocess.run(["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "cp1"], capture_output=True, timeout=30)
    server.close()


def pin(lab, key: KeyPair):
    line = inventory.known_hosts(lab["hosts"], lambda name: key.public_openssh)
    (lab["dir"] / "known_hosts").write_text(line.replace("127.0.0.1 ", f"[127.0.0.1]:{lab['port']} ", 1))


def ansible_raw(ks, made_venv, lab, kubelab_env: bool):
    d = lab["dir"]
    cmd = playbook_command(venv_bin=made_venv.path / "bin", checkout=ks.path, inventory=d / "inventory.yml",
                           vars_file=d / "vars.yml", checksums_file=d / "checksums.yml",
                           known_hosts=d / "known_hosts", fact_cache=d / "facts", control_dir=lab["control"])
    env = cmd.environment()
    if not kubelab_env:
        for k in ("ANSIBLE_HOST_KEY_CHECKING", "ANSIBLE_SSH_ARGS"):
            env.pop(k)
    out = subprocess.run([str(made_venv.bin("ansible")), "all", "-i", str(d / "inventory.yml"),
                          "-m", "raw", "-a", f"touch {d / 'ran'}"],
                         cwd=ks.path, env=env, capture_output=True, text=True, timeout=180)
    # the server runs commands on this host: the file is the proof a command ran
    return out.returncode, out.stdout + out.stderr, (d / "ran").exists()


def test_the_pinned_key_is_accepted(ks, made_venv, lab):
    pin(lab, lab["host"])
    code, output, ran = ansible_raw(ks, made_venv, lab, kubelab_env=True)
    assert code == 0 and ran, output


def test_a_wrong_pinned_key_stops_ansible(ks, made_venv, lab):
    pin(lab, lab["other"])
    code, output, ran = ansible_raw(ks, made_venv, lab, kubelab_env=True)
    assert code != 0 and "UNREACHABLE" in output and not ran, output
    assert "Host key verification failed" in output or "REMOTE HOST IDENTIFICATION HAS CHANGED" in output, output


def test_kubesprays_own_settings_would_accept_the_wrong_key(ks, made_venv, lab):
    # the control: what kubelab's environment overrides (host_key_checking=False, UserKnownHostsFile=/dev/null)
    pin(lab, lab["other"])
    code, output, ran = ansible_raw(ks, made_venv, lab, kubelab_env=False)
    assert code == 0 and ran, output


def test_the_host_step_closes_the_ssh_masters_the_play_left(ks, made_venv, lab):
    import time

    pin(lab, lab["host"])
    code, output, ran = ansible_raw(ks, made_venv, lab, kubelab_env=True)
    assert code == 0 and ran, output
    sockets = [s for s in lab["control"].iterdir() if s.is_socket()]
    assert sockets  # kubespray's ControlPersist=30m keeps a master per host after the play
    d = lab["dir"]
    after = playbook_command(venv_bin=made_venv.path / "bin", checkout=ks.path, inventory=d / "inventory.yml",
                             vars_file=d / "vars.yml", checksums_file=d / "checksums.yml",
                             known_hosts=d / "known_hosts", fact_cache=d / "facts",
                             control_dir=lab["control"]).after
    def masters() -> list[str]:  # the master processes themselves: their command lines name the folder
        return subprocess.run(["pgrep", "-f", str(lab["control"])], capture_output=True, text=True).stdout.split()

    assert masters()
    subprocess.run(list(after), capture_output=True, text=True, timeout=60, check=True)
    deadline = time.monotonic() + 10
    while masters() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not masters()  # closed by `ssh -O exit`, not only their sockets removed
    assert not lab["control"].exists()
