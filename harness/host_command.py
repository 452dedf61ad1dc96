"""A command run on the host, not in a guest (kubespray's ansible-playbook): its argv,
folder and environment as data, shown in one line for dry-run and the record, and run with
a timeout, its output streamed line by line, and its whole process group stopped when the
time is up or the run is interrupted (ansible leaves ssh children behind otherwise)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .model import HOST  # noqa: F401 - the machine name a host step is recorded under (callers import it here)
from .remote.result import CommandResult

STOP_GRACE_S = 15.0  # SIGTERM, then this long before SIGKILL
AFTER_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class HostCommand:
    argv: tuple[str, ...]
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)  # what kubelab adds to the host's environment
    path_prefix: str = ""                                 # put before the host's PATH
    output: str = ""                                      # "ansible": read as ansible-playbook's output
    after: tuple[str, ...] = ()                           # run once it ended, however it ended (cleanup)

    def shown(self) -> str:
        """One line for dry-run and the step log: `cd DIR && K=V ... command ...`."""
        env = [f"{k}={shlex.quote(v)}" for k, v in sorted(self.env.items())]
        if self.path_prefix:
            env.append(f'PATH={shlex.quote(self.path_prefix)}:"$PATH"')
        shown = f"cd {shlex.quote(str(self.cwd))} && {' '.join(env + [shlex.join(self.argv)])}"
        return shown + (f"; {shlex.join(self.after)}" if self.after else "")

    def environment(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The full environment to run with: the host's (or `base`) plus kubelab's."""
        out = dict(os.environ if base is None else base)
        out.update(self.env)
        if self.path_prefix:
            out["PATH"] = f"{self.path_prefix}:{out['PATH']}" if out.get("PATH") else self.path_prefix
        return out


def _stop(proc: subprocess.Popen) -> None:
    """The command's whole process group: SIGTERM, then SIGKILL after the grace."""
    for sig, wait in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run(cmd: HostCommand, timeout: float, on_line: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic) -> CommandResult:
    """Run it; exit_code None when it did not finish within `timeout` (then it was stopped).
    An interrupt stops it too, then goes on up."""
    started_wall, started = time.time(), clock()
    proc = subprocess.Popen(list(cmd.argv), cwd=cmd.cwd, env=cmd.environment(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                            start_new_session=True)
    lines: list[str] = []

    def read():
        for line in proc.stdout:
            lines.append(line)
            if on_line:
                on_line(line.rstrip("\n"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    code = None
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
    except BaseException:
        _stop(proc)
        raise
    finally:
        reader.join(timeout=10)
        if cmd.after:  # even after a timeout or an interrupt: nothing of the command may outlive it
            try:
                done = subprocess.run(list(cmd.after), cwd=cmd.cwd, env=cmd.environment(), stdin=subprocess.DEVNULL,
                                      capture_output=True, text=True, timeout=AFTER_TIMEOUT_S)
                lines.append(done.stdout + done.stderr)
            except (OSError, subprocess.TimeoutExpired) as exc:
                lines.append(f"kubelab: `{shlex.join(cmd.after)}` did not complete: {exc}\n")
    return CommandResult(HOST, cmd.shown(), code, "".join(lines), "", started_wall, clock() - started)
