"""A machine's seed: a plain tar archive used as a read-only raw disk.

The guest's kubelab-seed unit (images/debian/files/usr/local/sbin/kubelab-seed)
untars it on every boot before sshd starts: hostname, the SSH host key kubelab
pinned for this machine, the lab's authorized key, and the name `kubelab-host`
for the lab network's host address, where the lab's registry listens. No cloud-init, no
mounting, nothing fetched.
"""

from __future__ import annotations

import io
import tarfile


def seed_tar(hostname: str, host_private_key: bytes, host_public_key: str, authorized_keys: str,
             hosts: str = "") -> bytes:
    """`hosts`: /etc/hosts lines for the lab's own names (the registry's host address)."""
    files = {
        "hostname": (hostname + "\n").encode(),
        "ssh_host_ed25519_key": host_private_key,
        "ssh_host_ed25519_key.pub": (host_public_key.strip() + "\n").encode(),
        "authorized_keys": (authorized_keys.strip() + "\n").encode(),
    }
    if hosts.strip():
        files["hosts"] = (hosts.strip() + "\n").encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o600
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()
