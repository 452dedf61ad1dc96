"""Redaction: secrets never reach a run folder; ordinary text is untouched."""

import json
from pathlib import Path

from harness.evidence.redact import redact, redact_obj

CA_HASH = "sha256:" + "0123456789abcdef" * 4
OPENSSH_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDx1x2x3x4x5x6x7x8x9x0xAxBxCxDxExFx0x1x2x3x4AAAAJhVeryS3cret\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
FIXTURE = Path(__file__).parent.parent / "fixtures/runs/br-netfilter-missing/run.json"


def test_private_key_blocks_of_any_type_are_removed():
    for kind in ("OPENSSH", "RSA", "EC", ""):
        block = OPENSSH_KEY.replace("OPENSSH ", f"{kind} " if kind else "")
        out = redact(f"before\n{block}\nafter")
        assert out == "before\n[REDACTED PRIVATE KEY]\nafter"


def test_a_truncated_key_block_is_removed_to_the_end():
    assert redact("x\n" + OPENSSH_KEY.split("-----END")[0]) == "x\n[REDACTED PRIVATE KEY]"


def test_kubeadm_join_loses_its_token_but_keeps_the_public_ca_hash():
    line = f"kubeadm join 1.2.3.4:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash {CA_HASH}"
    out = redact(line)
    assert "abcdef.0123456789abcdef" not in out
    assert out == f"kubeadm join 1.2.3.4:6443 --token [REDACTED] --discovery-token-ca-cert-hash {CA_HASH}"
    assert redact(out) == out  # idempotent


def test_bare_tokens_and_keyed_values():
    cases = {
        "your token is abcdef.0123456789abcdef now": "your token is [REDACTED TOKEN] now",
        "--certificate-key=3f7c0a9e1b2d": "--certificate-key=[REDACTED]",
        "  token: eyJhbGciOi.x.y": "  token: [REDACTED]",
        "    client-key-data: LS0tLS1CRUdJTg==": "    client-key-data: [REDACTED]",
        "password: hunter2 two": "password: [REDACTED]",
        "secret: s3": "secret: [REDACTED]",
        "mysql -u root password=abc host=x": "mysql -u root password=[REDACTED] host=x",
        "PASSWD=abc": "PASSWD=[REDACTED]",
        "-H 'Authorization: Bearer eyJabc.def'": "-H 'Authorization: Bearer [REDACTED]'",
    }
    for text, want in cases.items():
        assert redact(text) == want, text


def test_ordinary_text_is_unchanged():
    lines = [
        "sysctl: cannot stat /proc/sys/net/bridge/bridge-nf-call-iptables: No such file or directory",
        f"[discovery] Using CA hash {CA_HASH}",
        "kubeadm token create --ttl 0 --token-ttl 0",
        "Jan 01 00:00:00 node1 kubelet[123]: I0101 server.go:415] Version: v1.30.2",
        "cp /etc/kubernetes/admin.conf $HOME/.kube/config",
    ]
    for line in lines:
        assert redact(line) == line
    text = FIXTURE.read_text()
    assert redact(text) == text


def test_redact_obj_walks_nested_structures():
    obj = {"steps": [{"output": "x --token abcdef.0123456789abcdef", "n": 1, "ok": True}],
           "t": ("password=p",), "token": "opaque", "none": None}
    out = redact_obj(obj)
    assert out == {"steps": [{"output": "x --token [REDACTED]", "n": 1, "ok": True}],
                   "t": ("password=[REDACTED]",), "token": "[REDACTED]", "none": None}
    assert obj["token"] == "opaque"  # a copy; the input is not changed
    run = json.loads(FIXTURE.read_text())
    assert redact_obj(run) == run
