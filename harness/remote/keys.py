"""Key material kubelab makes itself: a client key per lab, a host key per machine.

Host keys are made here and put into the guest before its first boot, so the
very first connection is already pinned: nothing is ever accepted on trust.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..fsutil import write_atomic


@dataclass(frozen=True)
class KeyPair:
    private_openssh: bytes
    public_openssh: str  # "ssh-ed25519 AAAA... comment"

    @classmethod
    def generate(cls, comment: str) -> "KeyPair":
        key = Ed25519PrivateKey.generate()
        private = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
        )
        public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        return cls(private, f"{public.decode()} {comment}")

    def save(self, private_path: Path) -> None:
        write_atomic(private_path, self.private_openssh, mode=0o600)
        write_atomic(Path(f"{private_path}.pub"), self.public_openssh + "\n", mode=0o644)


def fingerprint(public_openssh: str) -> str:
    """SHA256 fingerprint as `ssh-keygen -l` prints it."""
    blob = base64.b64decode(public_openssh.split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
