"""Labs for scenarios: the machines a scenario asks for, on a real backend.

The engine sees only this handle (machines, remote, collect_logs, down), so
engine tests can hand it scripted machines instead.
"""

from __future__ import annotations

import os
import time

from .. import lifecycle, tuning
from ..capacity import check_capacity
from ..errors import MachineLost
from ..lab import Lab, LabSpec, MachineSpec
from ..machines import accel
from ..remote.ssh import SshRemote
from ..serve import process
from ..tracks import track_of


class LabHandle:
    def __init__(self, lab: Lab, backend):
        self.lab = lab
        self.backend = backend
        self._remotes: dict[str, SshRemote] = {}
        self._lost: dict[str, str] = {}  # machine -> why the host took it away (watch.py)
        self._host_fault = ""  # a lab server gone: no machine is to be trusted to go on

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
    def client_key(self):
        """The lab's SSH client key (an installer that logs in itself: kubespray's inventory)."""
        return self.lab.client_key

    def host_public_key(self, machine: str) -> str:
        """A machine's pinned host key, for a known_hosts of the lab's."""
        return self.lab.host_public_key(machine)

    @property
    def gateway(self) -> str:
        """The lab network's host address (where its registry listens)."""
        return self.lab.state["network"]["gateway"]

    def remote(self, machine: str) -> SshRemote:
        if machine in self._lost:
            raise MachineLost(f"machine {machine}: {self._lost[machine]}")
        if self._host_fault:
            raise MachineLost(self._host_fault)
        if machine not in self._remotes:
            self._remotes[machine] = SshRemote(self.lab.ssh_target(machine))
        return self._remotes[machine]

    def claim(self, run_dir) -> None:
        """The lab is this run's now: its process and run folder in the lab's state, so that a run
        killed outright (SIGKILL: nothing of it can act) leaves a lab `lab.status` names as orphaned."""
        self.lab.state["run"] = {"pid": os.getpid(), "started": process.start_time(os.getpid()), "folder": str(run_dir)}
        self.lab.save()

    def release(self) -> None:
        """The run is over and the lab stays (--keep, a pool): no run owns it any more."""
        if self.lab.directory.exists():
            self.lab.state.pop("run", None)
            self.lab.save()

    def health(self) -> dict[str, str]:
        """{machine: why} for the machines the host took away under the run (the backend's word),
        and {"server NAME": why} for a lab server (registry, file server) whose process is gone."""
        lost = dict(self.backend.health(self.lab))
        for name, state in sorted((self.lab.state.get("services") or {}).items()):
            daemon = process.Daemon.from_state(state)
            if not daemon.alive():
                lost[f"server {name}"] = (f"the lab's {daemon.name} at {daemon.url} (pid {daemon.pid}) is gone; "
                                          f"its log: {daemon.log}")
        return lost

    def cpu_seconds(self) -> dict[str, tuple[int, float]]:
        return self.backend.cpu_seconds(self.lab)

    def cut(self, what: str, cause: str) -> None:
        """A lost machine: its connection closed (a command waiting on it ends now) and no new one.
        A lost server: every machine's, since whatever runs next may need it."""
        if what.startswith("server "):
            self._host_fault = cause
            cut = list(self._remotes)
        else:
            self._lost[what] = cause
            cut = [what]
        for machine in cut:
            remote = self._remotes.pop(machine, None)
            if remote is not None:
                remote.close()

    def power_cycle(self, machine: str, kernel_args: str, timeout: float) -> str:
        remote = self._remotes.pop(machine, None)
        if remote is not None:
            remote.close()
        return self.backend.power_cycle(self.lab, machine, kernel_args, timeout)

    def collect_logs(self, machine: str, dest):
        return self.backend.collect_logs(self.lab, machine, dest)

    def describe(self) -> dict:
        s = self.lab.state
        return {"name": s["name"], "suite": s["suite"], "backend": s["backend"], "image": s["image"]["id"],
                **accel.lab_fields(s)}

    def tuning(self) -> tuning.Tuning:
        """What the lab's measured acceleration asks of a cluster on it."""
        return tuning.for_lab(self.lab.state)

    def down(self, progress) -> None:
        for r in self._remotes.values():
            r.close()
        lifecycle.down(self.lab.name, progress)


class BackendLabs:
    def __init__(self, backend: str | None = None):
        self.backend_name = backend  # None: the scenario's pin, else libvirt

    def up(self, scenario, suite: str, name: str, progress) -> LabHandle:
        spec = lab_spec(scenario, suite, name, self.backend_name)
        check_capacity(spec.machines, kubernetes=spec.kubernetes)
        lab = lifecycle.up(spec, progress)
        return LabHandle(lab, lifecycle.backend_for(spec.backend))


# -- snapshot fan-out ---------------------------------------------------------------------
FANOUT_TAG = "kubelab-fanout-base"


def lab_spec(scenario, suite: str, name: str, backend: str | None = None) -> LabSpec:
    """The lab a scenario asks for (what BackendLabs creates, and what a pool is keyed by)."""
    machines = tuple(MachineSpec(m.name, m.role, m.cpus, m.memory) for m in scenario.lab.machines)
    track = track_of(scenario.install)
    kubernetes = track.node_image_release(scenario.install)
    return LabSpec(name, suite, backend or scenario.lab.backend or "libvirt", machines, kubernetes=kubernetes,
                   node_image=track.boots_node_image, network=scenario.lab.network, preload=scenario.install.preload,
                   containerd=scenario.lab.containerd or None, recipe=track.guest_recipe)


def shape(spec: LabSpec) -> tuple:
    """What two scenarios must agree on to share a pooled lab."""
    return (spec.suite, spec.backend, spec.machines, spec.kubernetes, spec.network, spec.preload, spec.containerd,
            spec.node_image, spec.recipe)


def state_shape(state: dict) -> tuple:
    """shape() of the lab a state folder records, less what a lab does not record (preload)."""
    return (state["suite"], state["backend"],
            tuple(MachineSpec(m["name"], m["role"], m["cpus"], m["memory_mib"]) for m in state["machines"]),
            state.get("kubernetes"), state.get("requested_network"), state.get("containerd"),
            state.get("node_image", True), state.get("recipe", "debian"))


def make_pool_lab(spec: LabSpec, progress) -> Lab:
    """A lab for several scenarios in turn: booted once, every machine snapshotted at once
    (before any fault or `kubeadm init`: bootstrap tokens would go stale in a later snapshot)."""
    check_capacity(spec.machines, kubernetes=spec.kubernetes)
    lab = lifecycle.up(spec, progress)
    backend = lifecycle.backend_for(spec.backend)
    try:
        for m in spec.machines:
            with progress.step(f"machine {m.name}: snapshot {FANOUT_TAG}"):
                backend.snapshot(lab, m.name, FANOUT_TAG)
    except BaseException:
        lifecycle.down(lab.name, progress)
        raise
    return lab


class PooledHandle(LabHandle):
    """A pooled lab's handle: the run's teardown closes its connections and leaves the
    machines to the pool, paused (the next run restores them; the pool's owner removes the lab).
    Left running, a cell's other pool kept its last cluster busy beside the scenario running
    now: a 2-machine kubeadm cluster at load 18 on its control plane, while a 1-machine
    scenario's probe pod waited 11 minutes to be scheduled."""

    def down(self, progress) -> None:
        for r in self._remotes.values():
            r.close()
        self.release()
        from ..errors import HarnessError

        try:  # the run is over: a pause that fails costs CPU, not the verdict
            paused = [m for m in self.machines if self.backend.pause(self.lab, m)]
        except HarnessError as exc:
            paused = []
            progress.note(f"lab `{self.name}`: {exc}; its machines run on")
        progress.note(f"lab `{self.name}` kept for the next scenario of its pool (snapshot {FANOUT_TAG})"
                      + ("; its machines paused until then" if paused else ""))


class PooledLabs:
    """Scenarios run on an existing pooled lab: each run first restores every machine to the
    pool's snapshot, then sets its clock (a restored guest resumes at the snapshot's time)."""

    def __init__(self, lab_name: str):
        self.lab_name = lab_name

    def up(self, scenario, suite: str, name: str, progress) -> LabHandle:
        from ..errors import UsageError

        lab = Lab.load(self.lab_name)
        want = shape(lab_spec(scenario, suite, name, lab.state["backend"]))
        want, have = want[:5] + want[6:], state_shape(lab.state)
        if want != have:
            raise UsageError(f"--lab {self.lab_name}: that lab ({have[0]}, {[m.name for m in have[2]]}, "
                             f"kubernetes {have[3]}, `{have[-1]}` guests) is not the lab scenario {scenario.name} "
                             f"asks for ({want[0]}, {[m.name for m in want[2]]}, kubernetes {want[3]}, "
                             f"`{want[-1]}` guests)")
        backend = lifecycle.backend_for(lab.state["backend"])
        handle = PooledHandle(lab, backend)
        if lab.state.get("pool_runs", 0):  # the first run finds the machines as the snapshot left them
            for m in handle.machines:
                with progress.step(f"machine {m}: restore {FANOUT_TAG}"):
                    backend.restore(lab, m, FANOUT_TAG)
                    handle.remote(m).run(f"date -u -s @{int(time.time())} >/dev/null", timeout=30, check=True)
        lab.state["pool_runs"] = lab.state.get("pool_runs", 0) + 1
        lab.save()
        return handle
