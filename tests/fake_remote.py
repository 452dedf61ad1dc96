"""A scripted remote for tests: answers only what it was told to expect.

Any command it was not scripted for fails the test at once (with the command
and the host), so engine tests prove exactly which commands run, in order.
"""

from __future__ import annotations

import time

from harness.errors import CommandFailed
from harness.remote.result import CommandResult


class UnscriptedCommand(AssertionError):
    """The remote was sent a command it was not told to expect."""


class FakeRemote:
    def __init__(self, host: str, script: dict[str, list[tuple]] | None = None):
        self.host = host
        self.script = {cmd: list(responses) for cmd, responses in (script or {}).items()}
        self.calls: list[str] = []
        self.unscripted: list[str] = []  # kept even if the caller swallows the error

    def expect(self, command: str, *responses: tuple) -> "FakeRemote":
        """Responses are (exit_code, stdout[, stderr]); the last one repeats."""
        self.script.setdefault(command, []).extend(responses)
        return self

    def run(self, command: str, timeout: float = 60.0, check: bool = False, stdin: bytes | None = None) -> CommandResult:
        self.calls.append(command)
        responses = self.script.get(command)
        if not responses:
            self.unscripted.append(command)
            raise UnscriptedCommand(f"{self.host}: unscripted command {command!r}")
        spec = responses.pop(0) if len(responses) > 1 else responses[0]
        code, out, err = (tuple(spec) + ("",))[:3]
        result = CommandResult(self.host, command, code, out, err, time.time(), 0.001)
        if check and code != 0:
            raise CommandFailed(result)
        return result

    def close(self) -> None:
        pass
