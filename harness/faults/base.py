"""A fault: a known way of breaking a machine, with proof that it took.

Each fault is pure until run: `plan()` gives the exact commands of every
stage (inject, armed-check, recover, persistence-check) from its parameters
and the machine's facts, so `--dry-run` and unit tests see what a real run
does. Checks are ordinary scenario Checks, evaluated by the engine.
"""

from __future__ import annotations

from typing import ClassVar

from ..params import Param, resolve
from ..probes import make as make_probe
from ..model import Check, ProbeRef


class Fault:
    kind: ClassVar[str]
    summary: ClassVar[str]
    PARAMS: ClassVar[dict[str, Param]] = {}

    def __init__(self, params: dict, facts: dict):
        self.params = resolve(self.PARAMS, params)
        self.facts = facts

    def inject(self) -> list[str]:
        raise NotImplementedError

    def armed_checks(self) -> list[Check]:
        """All must be met right after inject, or the run is an infrastructure failure."""
        raise NotImplementedError

    def recover(self) -> list[str]:
        """The fix a course teaches; also what undoes the fault. A control run runs it as host
        preparation on a host the fault never touched, so it must hold there too."""
        raise NotImplementedError

    def persistence_checks(self) -> list[Check]:
        """Healthy state that must survive a reboot after recover()."""
        raise NotImplementedError

    def describe(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.kind}({args})"

    def plan(self) -> dict[str, list[str]]:
        def commands(checks):
            return [f"{make_probe(c.probe.kind, c.probe.args).command()}  # {c.name}: {c.expected()}" for c in checks]

        return {
            "inject": self.inject(),
            "armed-check": commands(self.armed_checks()),
            "recover": self.recover(),
            "persistence-check": commands(self.persistence_checks()),
        }


def check(name: str, kind: str, args: dict, **matcher) -> Check:
    matcher.setdefault("within", 10.0)
    return Check(name=name, probe=ProbeRef(kind, args), **matcher)
