"""A probe: one command on a machine and a parser for what it prints.

`command()` is pure (for dry-run and unit tests); `parse()` turns the real
output into a Reading: `value` for `equals`, `text` (verbatim) for patterns.
Every parser's docstring shows a real sample of what it parses.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any, ClassVar

from ..params import Param, resolve
from ..remote.result import CommandResult


PROBE_TIMEOUT = 60.0


@dataclass(frozen=True)
class Reading:
    value: Any
    text: str
    # seconds until another read is worth it, when the probe knows better than its poll interval
    # (a proof that found its pods not running yet: that read was one cheap list, not an exec)
    again_in: float | None = None


@dataclass(frozen=True)
class Context:
    """What a probe may need beyond its arguments."""

    since: float = 0.0  # epoch seconds: journal probes read from here


class Probe:
    kind: ClassVar[str]
    ARGS: ClassVar[dict[str, Param]] = {}
    REGEX_ARGS: ClassVar[tuple[str, ...]] = ()  # arguments the loader compiles as regular expressions
    # Its text is what a component or command printed or wrote (a log, an output, a file), not a
    # value kubelab formatted: scenario.lint asks a pattern on it to cite where that text comes from.
    UPSTREAM_TEXT: ClassVar[bool] = False

    def __init__(self, **args):
        self.args = resolve(self.ARGS, args)

    def command(self, ctx: Context = Context()) -> str:
        raise NotImplementedError

    def parse(self, result: CommandResult) -> Reading:
        raise NotImplementedError

    def observe(self, remote, command: str) -> tuple["Reading", int | None]:
        """One reading: run the command on the machine and parse it (cluster probes read the API)."""
        result = remote.run(command, timeout=PROBE_TIMEOUT)
        return self.parse(result), result.exit_code

    target = "machine"  # or "cluster" (the API) or "host" (what the run's host steps recorded)
    poll_interval = 0.0  # seconds between polls; 0: the engine's default (a quarter second)

    def describe(self) -> str:
        return " ".join([self.kind, *(str(v) for v in self.args.values() if v is not None)])


def q(value: str) -> str:
    return shlex.quote(str(value))


def output(result: CommandResult) -> str:
    """stdout and stderr as one verbatim text, stdout first."""
    if result.stdout and result.stderr:
        return result.stdout.rstrip("\n") + "\n" + result.stderr
    return result.stdout or result.stderr
