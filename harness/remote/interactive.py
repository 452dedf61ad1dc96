"""An interactive `ssh` into a lab machine with the same pinning as kubelab's own SSH: the
machine's host key in a known_hosts file of the lab's, strict checking, the lab's key only."""

from __future__ import annotations

from pathlib import Path

from .ssh import SshTarget


def write_known_hosts(path: Path, target: SshTarget) -> Path:
    """A known_hosts file with exactly the pinned key of this machine (written each time: a
    machine that was made again has a new key)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{target.known_hosts_name} {target.host_key}\n")
    return path


def ssh_argv(target: SshTarget, known_hosts: Path) -> list[str]:
    return ["ssh", "-i", str(target.key_path), "-o", f"UserKnownHostsFile={known_hosts}",
            "-o", "StrictHostKeyChecking=yes", "-o", "IdentitiesOnly=yes", f"{target.user}@{target.host}"]


def shell_argv(lab, machine: str) -> list[str]:
    """The `ssh` command line for a shell on `machine` of `lab` (its known_hosts written first)."""
    target = lab.ssh_target(machine)
    return ssh_argv(target, write_known_hosts(lab.directory / "keys" / "known_hosts", target))
