"""A lab's state folder: the one place that knows what a lab is made of.

    <home>/labs/<name>/
        state.json        what exists (written before and after each object is created)
        keys/id_ed25519   the lab's client key; keys/<machine>_host_ed25519[.pub] pinned host keys
        serial/<m>.log    each machine's serial console

Objects are recorded as soon as they exist, so `lab.down` after a crash
removes exactly what was made; the janitor covers what even that missed.
"""

from __future__ import annotations

import os
import re
import shutil
import time
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from . import paths
from .errors import LabError, UsageError
from .fsutil import write_json
from .remote.keys import KeyPair
from .remote.ssh import SshTarget

STATE_SCHEMA = 1
NAME_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
MAX_LAB_NAME = 20
MAX_MACHINE_NAME = 15


@dataclass(frozen=True)
class MachineSpec:
    name: str
    role: str
    cpus: int
    memory_mib: int


@dataclass(frozen=True)
class LabSpec:
    name: str
    suite: str
    backend: str
    machines: tuple[MachineSpec, ...]
    kubernetes: str | None = None  # a kit version: its registry and file server serve the lab
    node_image: bool = True  # with a kit: boot the node image (False: the plain suite image)
    network: str | None = None  # a /24 the lab network must use (else the first free one)
    preload: bool = False  # with a kit: the node image that already holds the kit's images
    containerd: str | None = None  # a containerd built from source (sid), over the suite's own
    recipe: str = "debian"  # the guest image's recipe (images/<recipe>/, over the layers under it)


def check_name(kind: str, name: str, limit: int) -> list[str]:
    problems = []
    if not NAME_RE.match(name or ""):
        problems.append(f"{kind} name `{name}`: use lowercase letters, digits and single dashes, starting with a letter")
    if len(name or "") > limit:
        problems.append(f"{kind} name `{name}`: at most {limit} characters (it ends up in interface and domain names)")
    return problems


class Lab:
    def __init__(self, directory: Path, state: dict):
        self.directory = directory
        self.state = state

    # -- finding -------------------------------------------------------
    @staticmethod
    def path_for(name: str) -> Path:
        return paths.labs_dir() / name

    @classmethod
    def create(cls, spec: LabSpec, image: dict) -> "Lab":
        directory = cls.path_for(spec.name)
        if directory.exists():
            raise LabError(f"lab `{spec.name}` already exists at {directory}: `invoke lab.down -n {spec.name}` first, or pick another --name")
        (directory / "keys").mkdir(parents=True, mode=0o700)
        (directory / "serial").mkdir()
        os.chmod(directory, 0o755)
        state = {
            "schema": STATE_SCHEMA,
            "name": spec.name,
            "backend": spec.backend,
            "suite": spec.suite,
            "status": "creating",
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "owner_pid": os.getpid(),
            "image": image,
            "network": None,
            "machines": [asdict(m) for m in spec.machines],
            "objects": {"networks": [], "volumes": [], "domains": []},
            "snapshots": {},
            "kubernetes": spec.kubernetes,
            "node_image": spec.node_image,
            "containerd": spec.containerd,
            "recipe": spec.recipe,
            "requested_network": spec.network,
            "services": {},
        }
        lab = cls(directory, state)
        KeyPair.generate(f"kubelab-{spec.name}").save(lab.client_key)
        for m in spec.machines:
            pair = KeyPair.generate(f"{m.name}.{spec.name}")
            pair.save(lab.host_key_path(m.name))
        lab.save()
        return lab

    @classmethod
    def load(cls, name: str) -> "Lab":
        directory = cls.path_for(name)
        state_file = directory / "state.json"
        if not state_file.exists():
            known = ", ".join(f"`{n}`" for n in cls.names()) or "none"
            raise LabError(f"no lab `{name}` (looked for {state_file}); labs: {known}")
        try:
            state = json.loads(state_file.read_text())
        except ValueError as exc:
            raise LabError(f"{state_file}: not valid JSON ({exc}); remove the folder and run `invoke lab.down --all`") from exc
        if state.get("schema") != STATE_SCHEMA:
            raise LabError(f"{state_file}: state schema {state.get('schema')!r}, this kubelab reads {STATE_SCHEMA}")
        return cls(directory, state)

    @classmethod
    def chosen(cls, name: str | None) -> "Lab":
        """The lab named, or the only lab there is; with several and none named, a UsageError listing them."""
        if name:
            return cls.load(name)
        names = cls.names()
        if len(names) == 1:
            return cls.load(names[0])
        raise UsageError("give --lab NAME: " + (f"labs are {', '.join(names)}" if names
                                                 else "there is no lab; `invoke lab.up`"))

    @classmethod
    def names(cls) -> list[str]:
        root = paths.labs_dir()
        if not root.is_dir():
            return []
        return sorted(d.name for d in root.iterdir() if (d / "state.json").exists())

    # -- state ---------------------------------------------------------
    @property
    def name(self) -> str:
        return self.state["name"]

    @property
    def status(self) -> str:
        return self.state["status"]

    def set_status(self, status: str) -> None:
        self.state["status"] = status
        self.save()

    def save(self) -> None:
        write_json(self.directory / "state.json", self.state)

    def record(self, kind: str, name: str) -> None:
        """Note that object `name` of `kind` now exists; saved at once."""
        objects = self.state["objects"][kind]
        if name not in objects:
            objects.append(name)
            self.save()

    def forget(self, kind: str, name: str) -> None:
        objects = self.state["objects"][kind]
        if name in objects:
            objects.remove(name)
            self.save()

    def machine(self, name: str) -> dict:
        for m in self.state["machines"]:
            if m["name"] == name:
                return m
        names = ", ".join(f"`{m['name']}`" for m in self.state["machines"])
        raise UsageError(f"lab `{self.name}` has no machine `{name}`; its machines: {names}")

    # -- files ---------------------------------------------------------
    @property
    def client_key(self) -> Path:
        return self.directory / "keys" / "id_ed25519"

    def host_key_path(self, machine: str) -> Path:
        return self.directory / "keys" / f"{machine}_host_ed25519"

    def host_public_key(self, machine: str) -> str:
        return Path(f"{self.host_key_path(machine)}.pub").read_text().strip()

    def serial_log(self, machine: str) -> Path:
        return self.directory / "serial" / f"{machine}.log"

    def ssh_target(self, machine: str) -> SshTarget:
        m = self.machine(machine)
        if not m.get("ip"):
            raise LabError(f"machine `{machine}` of lab `{self.name}` has no address yet (status: {self.status})")
        return SshTarget(name=machine, host=m["ip"], port=22, user="root",
                         key_path=self.client_key, host_key=self.host_public_key(machine))

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)
