"""What running a command on a machine produced."""

from __future__ import annotations

from dataclasses import dataclass

TAIL_LINES = 20


@dataclass(frozen=True)
class CommandResult:
    host: str
    command: str
    exit_code: int | None  # None: it did not finish (timed out)
    stdout: str
    stderr: str
    started_at: float  # wall clock, seconds since the epoch
    duration: float  # seconds

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def tail(self, n: int = TAIL_LINES) -> list[str]:
        lines = self.stdout.splitlines() + [f"stderr: {l}" for l in self.stderr.splitlines()]
        return lines[-n:]

    def tail_block(self, n: int = TAIL_LINES) -> str:
        lines = self.tail(n)
        if not lines:
            return " (no output)"
        return "\n  last output:\n" + "\n".join("    " + l for l in lines)
