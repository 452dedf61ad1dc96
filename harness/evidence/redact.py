"""Remove secrets from anything written to a run folder.

Run records hold verbatim commands and output; a `kubeadm join` line or a
kubeconfig dump would otherwise put credentials into a report an author pastes
into a course. Public material (CA hashes, certificates) is left alone.
"""

import re

_MARK = "[REDACTED]"
# Values already replaced are skipped, so redacting twice changes nothing.
_NOT_DONE = r"(?!\[REDACTED)"

_PRIVATE_KEY = re.compile(
    # Any key type (RSA, EC, OPENSSH, ENCRYPTED, ...); a block cut off before
    # its END line is removed to the end of the text rather than half-kept.
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
    re.DOTALL,
)
_BOOTSTRAP_TOKEN = re.compile(r"(?<![a-z0-9])[a-z0-9]{6}\.[a-z0-9]{16}(?![a-z0-9])")
_KEY_VALUES = [
    # Command-line flags: the value is the next word.
    re.compile(r"(--(?:token|certificate-key)(?:\s+|=))" + _NOT_DONE + r"\S+"),
    re.compile(r"(\bAuthorization:\s*Bearer\s+)" + _NOT_DONE + r"[^\s\"']+", re.IGNORECASE),
    # YAML-style keys: the value is the rest of the line.
    re.compile(
        r"((?<![\w-])(?:token|password|secret|client-key-data):[ \t]*)" + _NOT_DONE + r"[^\s][^\r\n]*",
        re.IGNORECASE,
    ),
    # Shell/ini-style assignments: the value runs to the next blank.
    re.compile(r"((?<![\w-])(?:password|passwd)=)" + _NOT_DONE + r"\S+", re.IGNORECASE),
]
# Dict keys whose whole value is a secret, whatever it looks like.
_SECRET_KEYS = {"token", "password", "passwd", "secret", "certificate-key", "client-key-data"}


def redact(text: str) -> str:
    """Return `text` with private keys, bootstrap tokens and credential values replaced."""
    text = _PRIVATE_KEY.sub("[REDACTED PRIVATE KEY]", text)
    # Keyed values first, so `--token abcdef.0123...` keeps its flag and loses its value.
    for pattern in _KEY_VALUES:
        text = pattern.sub(lambda m: m.group(1) + _MARK, text)
    return _BOOTSTRAP_TOKEN.sub("[REDACTED TOKEN]", text)


def redact_obj(obj):
    """Return a copy of `obj` (dicts, lists, tuples, strings) with every string redacted."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        return {
            k: (_MARK if isinstance(k, str) and k.lower() in _SECRET_KEYS and v else redact_obj(v))
            for k, v in obj.items()
        }
    if isinstance(obj, (list, tuple)):
        return type(obj)(redact_obj(v) for v in obj)
    return obj
