"""A user's kubespray checkout: where it is, that it is one, which version, and the
ansible-core range it accepts.

kubespray is not a package anywhere kubelab can reach; a user brings a clone of
kubernetes-sigs/kubespray. kubelab only reads it (and runs its playbooks later).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..errors import UsageError

ENV = "KUBELAB_KUBESPRAY"

# What kubelab reads or runs in a checkout (paths as of kubespray v2.31.0 and master 46dbdd39).
REQUIRED = (
    "cluster.yml",
    "ansible.cfg",
    "requirements.txt",
    "playbooks/ansible_version.yml",
    "roles/kubespray_defaults",
    "roles/kubespray_defaults/defaults/main/download.yml",
    "roles/kubespray_defaults/defaults/main/main.yml",
    "roles/kubespray_defaults/vars/main/checksums.yml",
    "roles/kubespray_defaults/vars/main/main.yml",
    "roles/system_packages/vars/main.yml",
)
GATE_FILE = "playbooks/ansible_version.yml"


@dataclass(frozen=True)
class Checkout:
    path: Path
    source: str                # how it was found: "--kubespray", "KUBELAB_KUBESPRAY", "install.kubespray"
    describe: str | None       # `git describe --tags`, where it is a git checkout
    commit: str | None
    galaxy_version: str | None  # galaxy.yml's version (unreleased on master: the next release)
    ansible_min: str           # inclusive
    ansible_max: str           # exclusive

    @property
    def version(self) -> str:
        return self.describe or self.galaxy_version or "unknown"

    def record(self) -> dict:
        """What run.json would carry about the checkout."""
        return {"path": str(self.path), "source": self.source, "version": self.version,
                "describe": self.describe, "commit": self.commit, "galaxy_version": self.galaxy_version,
                "ansible_core": f">={self.ansible_min},<{self.ansible_max}"}

    def file(self, relative: str) -> Path:
        return self.path / relative


def locate(option: str | None = None, scenario: str | None = None,
           env: Mapping[str, str] | None = None) -> tuple[Path, str]:
    """The checkout path and where it came from: --kubespray, then KUBELAB_KUBESPRAY,
    then the scenario's install.kubespray (a command line beats the environment beats the file)."""
    env = os.environ if env is None else env
    for value, source in ((option, "--kubespray"), (env.get(ENV), ENV), (scenario, "install.kubespray")):
        if value:
            return Path(value).expanduser().resolve(), source
    raise UsageError("no kubespray checkout: pass --kubespray PATH, set KUBELAB_KUBESPRAY, or give "
                     "install.kubespray in the scenario file (a clone of kubernetes-sigs/kubespray)")


def missing(path: Path) -> list[str]:
    """The files and folders kubelab needs that `path` lacks, in REQUIRED's order."""
    return [r for r in REQUIRED if not (path / r).exists()]


def load(path: Path, source: str = "--kubespray") -> Checkout:
    """Check `path` is a kubespray checkout and read its version and ansible-core gate."""
    if not path.is_dir():
        raise UsageError(f"kubespray checkout {path} (from {source}): no such directory")
    lacking = missing(path)
    if lacking:
        raise UsageError(f"{path} (from {source}) is not a kubespray checkout: it has no "
                         + ", ".join(lacking)
                         + "; point it at the top of a clone of kubernetes-sigs/kubespray")
    describe, commit = git_version(path)
    lo, hi = ansible_gate((path / GATE_FILE).read_text(), str(path / GATE_FILE))
    return Checkout(path=path, source=source, describe=describe, commit=commit,
                    galaxy_version=galaxy_version(path), ansible_min=lo, ansible_max=hi)


def git_version(path: Path) -> tuple[str | None, str | None]:
    """(`git describe --tags`, commit) of a git checkout; (None, None) for a plain tree.

    `--always` so a clone without tags still yields the abbreviated commit."""
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None

    top = git("rev-parse", "--show-toplevel")
    # A tree unpacked inside some other repository is not a git checkout of kubespray.
    if top is None or Path(top).resolve() != path.resolve():
        return None, None
    return git("describe", "--tags", "--always"), git("rev-parse", "HEAD")


def galaxy_version(path: Path) -> str | None:
    f = path / "galaxy.yml"
    if not f.exists():
        return None
    try:
        data = yaml.safe_load(f.read_text())
    except yaml.YAMLError:
        return None
    v = data.get("version") if isinstance(data, dict) else None
    return str(v) if v is not None else None


def ansible_gate(text: str, where: str) -> tuple[str, str]:
    """(minimal, maximal) from playbooks/ansible_version.yml: the play's vars
    `minimal_ansible_version` (>=) and `maximal_ansible_version` (<), as its assert reads them
    (kubespray v2.31.0 and master 46dbdd39)."""
    try:
        plays = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsageError(f"{where}: not valid YAML ({exc})") from exc
    for play in plays if isinstance(plays, list) else []:
        found = (play.get("vars") or {}) if isinstance(play, dict) else {}
        if "minimal_ansible_version" in found and "maximal_ansible_version" in found:
            return str(found["minimal_ansible_version"]), str(found["maximal_ansible_version"])
    raise UsageError(f"{where}: no play with vars minimal_ansible_version and maximal_ansible_version; "
                     "this kubespray gates ansible differently, and kubelab cannot check it")


def release(version: str) -> tuple[int, ...]:
    """The numeric release of a version string: '2.18.19' -> (2, 18, 19); '2.19.0b1' -> (2, 19, 0)."""
    m = re.match(r"\s*v?(\d+(?:\.\d+)*)", version)
    if not m:
        raise UsageError(f"`{version}` is not a version number")
    return tuple(int(p) for p in m.group(1).split("."))


def _padded(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


def ansible_core_version(output: str) -> str:
    """ansible-core's version from `ansible-playbook --version` (first line
    `ansible-playbook [core 2.18.19]`, ansible-core 2.11+)."""
    m = re.search(r"\[core ([^\]\s]+)\]", output)
    if not m:
        raise UsageError("could not read ansible-core's version from `ansible-playbook --version`: "
                         + (output.strip().splitlines() or ["(no output)"])[0])
    return m.group(1)


def check_ansible(checkout: Checkout, installed: str) -> None:
    """Refuse an ansible-core outside the checkout's range, before anything starts."""
    lo, v = _padded(release(checkout.ansible_min), release(installed))
    hi, v2 = _padded(release(checkout.ansible_max), release(installed))
    if not (lo <= v and v2 < hi):
        raise UsageError(f"ansible-core {installed} is outside what kubespray {checkout.version} accepts "
                         f"({checkout.ansible_min} <= ansible-core < {checkout.ansible_max}, "
                         f"{checkout.path / GATE_FILE}); install its requirements.txt in a fresh venv")
