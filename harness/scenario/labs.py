"""Labs for scenarios: the machines a scenario asks for, on a real backend.

The engine sees only this handle (machines, remote, collect_logs, down), so
engine tests can hand it scripted machines instead.
"""

from __future__ import annotations

from .. import lifecycle
from ..lab import Lab, LabSpec, MachineSpec
from ..remote.ssh import SshRemote


class LabHandle:
    def __init__(self, lab: Lab, backend):
        self.lab = lab
        self.backend = backend
        self._remotes: dict[str, SshRemote] = {}

    @property
    def name(self) -> str:
        return self.lab.name

    @property
    def machines(self) -> list[str]:
        return [m["name"] for m in self.lab.state["machines"]]

    def ip(self, machine: str) -> str:
        return self.lab.machine(machine).get("ip", "")

    def role(self, machine: str) -> str:
        return self.lab.machine(machine)["role"]

    @property
    def gateway(self) -> str:
        """The lab network's host address (where its registry listens)."""
        return self.lab.state["network"]["gateway"]

    def remote(self, machine: str) -> SshRemote:
        if machine not in self._remotes:
            self._remotes[machine] = SshRemote(self.lab.ssh_target(machine))
        return self._remotes[machine]

    def collect_logs(self, machine: str, dest):
        return self.backend.collect_logs(self.lab, machine, dest)

    def describe(self) -> dict:
        s = self.lab.state
        return {"name": s["name"], "suite": s["suite"], "backend": s["backend"], "image": s["image"]["id"],
                "accel": s.get("domain_type", "")}

    def down(self, progress) -> None:
        for r in self._remotes.values():
            r.close()
        lifecycle.down(self.lab.name, progress)


class BackendLabs:
    def __init__(self, backend: str | None = None):
        self.backend_name = backend  # None: the scenario's pin, else libvirt

    def up(self, scenario, suite: str, name: str, progress) -> LabHandle:
        machines = tuple(MachineSpec(m.name, m.role, m.cpus, m.memory) for m in scenario.lab.machines)
        kubernetes = f"v{scenario.install.kubernetes}" if scenario.install.track == "kubeadm" else None
        backend = self.backend_name or scenario.lab.backend or "libvirt"
        lifecycle.check_capacity(machines, kubernetes=kubernetes)
        lab = lifecycle.up(LabSpec(name, suite, backend, machines, kubernetes=kubernetes,
                                   network=scenario.lab.network, preload=scenario.install.preload), progress)
        return LabHandle(lab, lifecycle.backend_for(backend))
