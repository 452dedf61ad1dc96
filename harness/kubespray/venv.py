"""kubespray's Python requirements (ansible and friends) in a venv of kubelab's.

    <cache>/kubespray-venv/<sha256 of requirements.txt, 12 hex>/

Keyed by the checkout's requirements.txt, so two checkouts that pin the same
packages share one venv and a checkout that changes them gets a new one.
Created with `python3 -m venv` and `pip install -r` from PyPI. The marker file
is written last: a venv without it (an interrupted or failed install) is
removed and made again; one with it is reused as it is.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..errors import HostError
from ..fsutil import write_json

MARKER = "kubelab-complete.json"
KEY_LENGTH = 12
INSTALL_TIMEOUT = 1800

# (argv, timeout) -> (exit code, combined output). Injected by tests.
Runner = Callable[[list[str], float], tuple[int, str]]


def run_command(argv: list[str], timeout: float) -> tuple[int, str]:
    try:
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        text = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return -1, text + f"\n(timed out after {timeout:g}s)"
    return out.returncode, out.stdout


def requirements_sha256(requirements: Path) -> str:
    return hashlib.sha256(requirements.read_bytes()).hexdigest()


def root() -> Path:
    return paths.cache_dir() / "kubespray-venv"


@dataclass(frozen=True)
class Venv:
    path: Path
    requirements_sha256: str

    @property
    def key(self) -> str:
        return self.requirements_sha256[:KEY_LENGTH]

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    @property
    def ansible_playbook(self) -> Path:
        return self.bin("ansible-playbook")

    def complete(self) -> bool:
        """Made to the end for these requirements (the marker is written last)."""
        try:
            marker = json.loads((self.path / MARKER).read_text())
        except (OSError, ValueError):
            return False
        return (marker.get("requirements_sha256") == self.requirements_sha256
                and self.bin("python").exists() and self.ansible_playbook.exists())


def for_requirements(requirements: Path) -> Venv:
    sha = requirements_sha256(requirements)
    return Venv(root() / sha[:KEY_LENGTH], sha)


def ensure(requirements: Path, run: Runner = run_command, log: Callable[[str], None] = lambda m: None,
           python: str | None = None) -> tuple[Venv, bool]:
    """The venv for `requirements`, made if needed. Returns (venv, True if it was made now).

    One maker at a time per key (a lock beside the folder); a failed install leaves nothing."""
    venv = for_requirements(requirements)
    venv.path.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.path.parent / f"{venv.key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if venv.complete():
            return venv, False
        if venv.path.exists():
            log(f"removing the incomplete kubespray venv {venv.path}")
            shutil.rmtree(venv.path)
        interpreter = python or shutil.which("python3") or sys.executable
        started = time.monotonic()
        try:
            log(f"creating the kubespray venv {venv.path}")
            _step(run, [interpreter, "-m", "venv", str(venv.path)], 300)
            log(f"pip install -r {requirements} (from PyPI)")
            output = _step(run, [str(venv.bin("python")), "-m", "pip", "install", "--disable-pip-version-check",
                                 "--no-input", "-r", str(requirements)], INSTALL_TIMEOUT)
            write_json(venv.path / MARKER, {
                "requirements": str(requirements),
                "requirements_sha256": venv.requirements_sha256,
                "python": interpreter,
                "seconds": round(time.monotonic() - started, 1),
                "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "pip_tail": output.strip().splitlines()[-1:] if output.strip() else [],
            })
        except BaseException:
            shutil.rmtree(venv.path, ignore_errors=True)
            raise
        return venv, True


def _step(run: Runner, argv: list[str], timeout: float) -> str:
    code, output = run(argv, timeout)
    if code != 0:
        tail = "\n".join("    " + line for line in output.strip().splitlines()[-20:]) or "    (no output)"
        raise HostError(f"making kubespray's venv: `{' '.join(argv)}` exited {code}\n  last output:\n{tail}")
    return output
