"""What one verify check found: a verdict, the value it read, and where it read it.

Verdicts: `holds` and `does not hold` assert something; `recorded` is a fact
shown as read (a node's roles, the etcd endpoints); `not applicable` says a
layer or check has nothing to look at on this cluster (no dns-autoscaler),
which is never a pass.
"""

from __future__ import annotations

from dataclasses import dataclass

HOLDS = "holds"
FAILS = "does not hold"
RECORDED = "recorded"
NOT_APPLICABLE = "not applicable"
VERDICTS = (HOLDS, FAILS, RECORDED, NOT_APPLICABLE)


@dataclass(frozen=True)
class Finding:
    layer: str
    check: str
    verdict: str
    value: str
    source: str  # what was read, and from where: `cp1: openssl x509 ...`, `API GET /api/v1/nodes`
    detail: str = ""  # the verbatim text the value was read from (kept in the record)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r}: one of {', '.join(VERDICTS)}")

    @property
    def met(self) -> bool | None:
        """As a run record's observation: True/False for an assertion, None for a fact."""
        return {HOLDS: True, FAILS: False}.get(self.verdict)


def holds(layer: str, check: str, ok: bool, value: str, source: str, detail: str = "") -> Finding:
    return Finding(layer, check, HOLDS if ok else FAILS, value, source, detail)
