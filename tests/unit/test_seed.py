"""The seed archive the guest applies before sshd starts."""

import io
import tarfile

from harness.machines.seed import seed_tar


def test_seed_holds_exactly_what_the_guest_expects():
    data = seed_tar("node1", b"PRIVATE\n", "ssh-ed25519 AAAAhost", "ssh-ed25519 AAAAclient lab")
    assert len(data) % 512 == 0  # a disk image must be whole sectors
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
        modes = {m.name: m.mode for m in tar.getmembers()}
    assert members == {
        "hostname": b"node1\n",
        "ssh_host_ed25519_key": b"PRIVATE\n",
        "ssh_host_ed25519_key.pub": b"ssh-ed25519 AAAAhost\n",
        "authorized_keys": b"ssh-ed25519 AAAAclient lab\n",
    }
    assert set(modes.values()) == {0o600}


def test_seed_is_reproducible():
    args = ("n", b"k", "ssh-ed25519 A", "ssh-ed25519 B")
    assert seed_tar(*args) == seed_tar(*args)


def test_seed_carries_the_lab_host_name_when_given():
    data = seed_tar("n", b"k", "ssh-ed25519 A", "ssh-ed25519 B", hosts="192.168.101.1 kubelab-host")
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        assert tar.extractfile("hosts").read() == b"192.168.101.1 kubelab-host\n"
