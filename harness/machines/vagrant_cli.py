"""Running `vagrant` for kubelab, through python-vagrant, with timeouts and errors that say why.

python-vagrant builds the command line and parses `status`, but runs vagrant
with subprocess.check_call/check_output and, by default, sends its output to
/dev/null: a failure then surfaces as a bare CalledProcessError with no
output at all. So commands run here: with a timeout, output kept in a log
file, and a failure raised as VagrantError with the command, its exit code
and the last lines it printed.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import vagrant as python_vagrant

from .. import paths
from ..errors import BackendUnavailable, VagrantError

DEFAULT_TIMEOUT = 600.0


@dataclass(frozen=True)
class VagrantResult:
    args: tuple[str, ...]
    exit_code: int
    stdout: str
    duration: float


class VagrantCli:
    def __init__(self, vagrant_home: Path, lab_dir: Path | None = None, log: Path | None = None):
        env = dict(os.environ, VAGRANT_HOME=str(vagrant_home), VAGRANT_CHECKPOINT_DISABLE="1",
                   VAGRANT_NO_COLOR="1", LIBVIRT_DEFAULT_URI="qemu:///system")
        if lab_dir is not None:
            env.update(KUBELAB_LAB=str(lab_dir), VAGRANT_DOTFILE_PATH=str(lab_dir / "vagrant"))
        self.log = log
        self.v = python_vagrant.Vagrant(root=str(paths.project_root()), env=env)

    @staticmethod
    def check() -> None:
        try:
            exe = python_vagrant.get_vagrant_executable()
        except Exception:  # noqa: BLE001 - python-vagrant raises a bare RuntimeError
            exe = None
        if not exe:
            raise BackendUnavailable("vagrant is not installed: apt-get install -y vagrant vagrant-libvirt")
        out = subprocess.run([exe, "plugin", "list"], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, VAGRANT_CHECKPOINT_DISABLE="1")).stdout
        if "vagrant-libvirt" not in out:
            raise BackendUnavailable("the vagrant-libvirt plugin is missing: apt-get install -y vagrant-libvirt")

    def run(self, args: list[str], timeout: float = DEFAULT_TIMEOUT) -> VagrantResult:
        command = self.v._make_vagrant_command(args)
        start = time.monotonic()
        try:
            proc = subprocess.run(command, cwd=self.v.root, env=self.v.env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, errors="replace", timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            self._log(args, None, out)
            raise VagrantError(f"`vagrant {' '.join(args)}` did not finish within {timeout:g}s" + _tail(out)) from None
        self._log(args, proc.returncode, proc.stdout)
        if proc.returncode != 0:
            raise VagrantError(f"`vagrant {' '.join(args)}` exited {proc.returncode}" + _tail(proc.stdout))
        return VagrantResult(tuple(args), proc.returncode, proc.stdout, time.monotonic() - start)

    def status(self) -> dict[str, str]:
        """Machine name -> state as vagrant-libvirt reports it (`running`, `shutoff`, `not_created`)."""
        out = self.run(["status", "--machine-readable"], timeout=120).stdout
        return {s.name: s.state for s in self.v._parse_status(out)}

    def _log(self, args, code, output: str) -> None:
        if self.log is None:
            return
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "a") as f:
            f.write(f"$ vagrant {' '.join(args)}\n{output}\n# exit {code}\n\n")


_BACKTRACE = re.compile(r"^\s*/\S+:\d+:in `")


def _tail(output: str, n: int = 20) -> str:
    """The last lines that say something: Ruby backtrace lines are left out."""
    lines = [l for l in output.splitlines() if l.strip() and not _BACKTRACE.match(l)][-n:]
    return ("\n  last output:\n" + "\n".join("    " + l for l in lines)) if lines else " (no output)"
