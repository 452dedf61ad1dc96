"""The CA hash a join command carries, recomputed by kubelab from the CA certificate.

kubeadm's `--discovery-token-ca-cert-hash` is `sha256:` + hex SHA-256 of the CA
certificate's DER-encoded SubjectPublicKeyInfo (cmd/kubeadm/app/util/pubkeypin/
pubkeypin.go, Hash: `sha256.Sum256(certificate.RawSubjectPublicKeyInfo)`).
Computed here with `cryptography`, independently of kubeadm.
"""

from __future__ import annotations

import hashlib

from ..params import Param
from .base import Probe, Reading, output, q


def spki_sha256(pem: bytes) -> str:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    cert = x509.load_pem_x509_certificate(pem)
    der = cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "sha256:" + hashlib.sha256(der).hexdigest()


class CaCertHash(Probe):
    """value: `sha256:<hex>` of the certificate's public key; text: the certificate (public)."""

    kind = "ca-cert-hash"
    ARGS = {"path": Param(str, required=False, default="/etc/kubernetes/pki/ca.crt")}

    def command(self, ctx=None) -> str:
        return f"cat {q(self.args['path'])}"

    def parse(self, result) -> Reading:
        if result.exit_code != 0 or "BEGIN CERTIFICATE" not in result.stdout:
            return Reading(None, output(result))
        return Reading(spki_sha256(result.stdout.encode()), result.stdout)
