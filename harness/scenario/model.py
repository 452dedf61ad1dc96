"""A scenario as the engine sees it: frozen, validated, defaults applied.

Built only by scenario.load (which reports every problem with file, line and
field path first); everything downstream can trust these values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

API_VERSION = "kubelab/v1"
KIND = "Scenario"
PHASES = ("prepare", "arm", "armed-check", "install", "expect", "recover", "verify", "collect", "teardown")
INSTALL_TRACKS = ("none", "kubeadm", "kubespray")
FAULT_PHASES = ("before-install",)
NOT_SET = object()


@dataclass(frozen=True)
class MachineDef:
    name: str
    role: str = "node"
    cpus: int = 1
    memory: int = 1024


@dataclass(frozen=True)
class LabDef:
    suite: str
    machines: tuple[MachineDef, ...]


@dataclass(frozen=True)
class ProbeRef:
    kind: str
    args: dict


@dataclass(frozen=True)
class Count:
    pattern: str
    min: int = 0
    max: int | None = None


@dataclass(frozen=True)
class Check:
    """One probe on each target, with one matcher, polled until met or out of time."""

    name: str
    probe: ProbeRef
    target: str = "@all"
    pattern: str | None = None
    absent: str | None = None
    count: Count | None = None
    equals: Any = NOT_SET
    within: float = 0.0
    stable_for: float = 0.0
    versions: dict = field(default_factory=dict)  # component -> range, e.g. {"containerd": "<2.0"}
    after_reboot: bool = False
    source: str = ""  # upstream file and version the expected string comes from

    @property
    def asserts(self) -> bool:
        return self.pattern is not None or self.absent is not None or self.count is not None or self.equals is not NOT_SET

    def expected(self) -> str:
        if self.pattern is not None:
            return f"pattern {self.pattern!r}"
        if self.absent is not None:
            return f"absent {self.absent!r}"
        if self.count is not None:
            upper = "" if self.count.max is None else f", at most {self.count.max}"
            return f"count of {self.count.pattern!r}: at least {self.count.min}{upper}"
        if self.equals is not NOT_SET:
            return f"equals {self.equals!r}"
        return ""


@dataclass(frozen=True)
class FaultDef:
    kind: str
    target: str = "@all"
    phase: str = "before-install"
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class StepDef:
    """A recovery step: a command, a reboot, or the faults' own recovery."""

    name: str
    target: str = "@all"
    run: str | None = None
    reboot: bool = False
    recover_faults: bool = False
    timeout: float = 120.0

    @property
    def action(self) -> str:
        return "run" if self.run is not None else "reboot" if self.reboot else "recover-faults"


@dataclass(frozen=True)
class EvidenceDef:
    kind: str  # journal | file | command
    what: str
    target: str = "@all"

    @property
    def command(self) -> str:
        if self.kind == "journal":
            return f"journalctl --no-pager -o short-iso -b -u {self.what}"
        return f"cat {self.what}" if self.kind == "file" else self.what


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    lab: LabDef
    install: str = "none"
    claims: tuple[str, ...] = ()
    faults: tuple[FaultDef, ...] = ()
    expect: tuple[Check, ...] = ()
    recover: tuple[StepDef, ...] = ()
    verify: tuple[Check, ...] = ()
    observe: tuple[Check, ...] = ()
    evidence: tuple[EvidenceDef, ...] = ()
    source_file: str = ""
    sha256: str = ""
