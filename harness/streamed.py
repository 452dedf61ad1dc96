"""A host command whose output is read as it comes: each line to a progress callback,
all of them kept for the error message, and killed when it runs past its time."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Finished:
    exit_code: int | None  # None: killed at the time limit
    lines: list[str]

    @property
    def output(self) -> str:
        return "\n".join(self.lines)


def run(cmd: list[str], timeout: float, env: dict | None = None, cwd: Path | None = None,
        on_line=None) -> Finished:
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True, errors="replace")
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if on_line:
                on_line(line.strip())
            if time.monotonic() - start > timeout:
                proc.kill()
                proc.wait()
                return Finished(None, lines)
        proc.wait(timeout=max(1.0, timeout - (time.monotonic() - start)))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return Finished(None, lines)
    finally:
        if proc.poll() is None:  # interrupted (Ctrl-C): never leave it running
            proc.kill()
            proc.wait()
    return Finished(proc.returncode, lines)
