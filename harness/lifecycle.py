"""Bringing labs up and down: input checks, host preparation, teardown on failure.

`up` refuses bad input before anything exists; once it starts creating, any
failure or Ctrl-C tears down what was made. `down_all` also sweeps objects no
state file knows (left by a SIGKILL).
"""

from __future__ import annotations

import os
import secrets

from . import host
from .errors import HarnessError, UsageError
from .images.recipe import check_suite
from .lab import MAX_LAB_NAME, MAX_MACHINE_NAME, Lab, LabSpec, MachineSpec, check_name
from .machines.base import MachineBackend
from .progress import Progress

# What a TCG guest costs the host beyond its RAM (QEMU, 128 MiB translation cache, THP);
# a Kubernetes node's guest has a 2 GiB translation cache (machines/libvirt_xml.py).
GUEST_OVERHEAD_MIB = 600
KUBERNETES_OVERHEAD_MIB = GUEST_OVERHEAD_MIB + 2048 - 128
MAX_MACHINES = 16
BACKENDS = ("libvirt", "vagrant")


def backend_for(name: str) -> MachineBackend:
    if name == "libvirt":
        from .machines.libvirt import LibvirtBackend

        return LibvirtBackend()
    if name == "vagrant":
        from .machines.vagrant import VagrantBackend

        return VagrantBackend()
    raise UsageError(f"unknown backend `{name}`: choose one of {', '.join(BACKENDS)}")


def plan_lab(machines: int, suite: str, cpus: int, memory: int, name: str | None = None,
             backend: str = "libvirt", available_mib: int | None = None,
             kubernetes: str | None = None, containerd: str | None = None) -> LabSpec:
    """Check every input at once; raise UsageError listing all problems."""
    problems = []
    if containerd:
        from .artifacts.containerd import parse
        from .images.containerd_image import SUITE

        try:
            containerd = parse(containerd).lstrip("v")
        except UsageError as exc:
            problems.append(str(exc))
        if suite != SUITE:
            problems.append(f"--containerd {containerd}: a containerd built from source runs on --suite {SUITE}")
    if not 1 <= machines <= MAX_MACHINES:
        problems.append(f"--machines {machines}: must be 1..{MAX_MACHINES}")
    try:
        check_suite(suite)
    except UsageError as exc:
        problems.append(str(exc))
    ncpu = os.cpu_count() or 1
    if not 1 <= cpus <= ncpu:
        problems.append(f"--cpus {cpus}: must be 1..{ncpu} (this host has {ncpu} cores)")
    if memory < 256:
        problems.append(f"--memory {memory}: at least 256 MiB per machine")
    if backend not in BACKENDS:
        problems.append(f"--backend {backend}: choose one of {', '.join(BACKENDS)}")
    if kubernetes is not None:
        from .artifacts.versions import KubeVersion

        try:
            v = KubeVersion.parse(kubernetes)
            v.check_supported()
            kubernetes = v.tag
        except UsageError as exc:
            problems.append(str(exc))
    name = name or f"lab-{secrets.token_hex(2)}"
    problems += check_name("lab", name, MAX_LAB_NAME)
    overhead = overhead_mib(kubernetes)
    shortfall = _memory_shortfall([memory] * machines, available_mib, overhead) \
        if machines >= 1 and memory >= 256 else None
    if shortfall:
        need, have = shortfall
        problems.append(
            f"--memory {memory} x {machines} machine(s) needs about {need} MiB "
            f"({overhead} MiB QEMU overhead each) but the host has {have} MiB available"
        )
    if problems:
        raise UsageError("refusing to create the lab:\n  " + "\n  ".join(problems))
    specs = tuple(MachineSpec(f"node{i + 1}", "node", cpus, memory) for i in range(machines))
    for m in specs:
        assert not check_name("machine", m.name, MAX_MACHINE_NAME)
    return LabSpec(name, suite, backend, specs, kubernetes=kubernetes, containerd=containerd or None)


def overhead_mib(kubernetes: str | None) -> int:
    return KUBERNETES_OVERHEAD_MIB if kubernetes else GUEST_OVERHEAD_MIB


def _memory_shortfall(memories: list[int], available_mib: int | None = None,
                      overhead: int = GUEST_OVERHEAD_MIB) -> tuple[int, int] | None:
    """(needed, available) MiB when the host cannot hold machines of these sizes, else None."""
    need = sum(m + overhead for m in memories)
    have = available_mib if available_mib is not None else host.available_memory() >> 20
    return (need, have) if need > have else None


def check_capacity(machines, available_mib: int | None = None, kubernetes: str | None = None) -> None:
    """Refuse machines whose memory the host does not have (before creating any)."""
    overhead = overhead_mib(kubernetes)
    shortfall = _memory_shortfall([m.memory_mib for m in machines], available_mib, overhead)
    if shortfall:
        need, have = shortfall
        raise UsageError(f"the lab needs about {need} MiB ({overhead} MiB QEMU overhead per machine) "
                         f"but the host has {have} MiB available")


def up(spec: LabSpec, progress: Progress | None = None) -> Lab:
    progress = progress or Progress()
    host.prepare(log=progress.note)
    backend = backend_for(spec.backend)
    backend.check()
    kit = None
    if spec.containerd or spec.kubernetes:  # built from source when absent or damaged, as images are
        from .artifacts import prerequisites
        from .artifacts.versions import KubeVersion

        if spec.containerd:
            prerequisites.ensure_containerd(spec.containerd, progress)
        if spec.kubernetes:
            kit = prerequisites.ensure_kit(KubeVersion.parse(spec.kubernetes), progress)
    if kit and spec.node_image:
        from .images import node

        image = node.ensure(spec.suite, spec.kubernetes, progress, preload=spec.preload, containerd=spec.containerd)
    else:
        from .images import containerd_image

        image = containerd_image.base_image(spec.suite, spec.containerd, progress)
    lab = Lab.create(spec, {
        "id": image.id, "directory": str(image.directory), "versions": image.versions,
    })
    try:
        backend.up(lab, progress)
        if kit:
            from .serve import lab as services

            services.start(lab, kit, progress)
        lab.set_status("up")
        progress.note(f"lab `{lab.name}` is up: {len(spec.machines)} machine(s); state in {lab.directory}")
        return lab
    except BaseException as exc:
        interrupted = isinstance(exc, KeyboardInterrupt)
        progress.note(f"lab `{lab.name}`: {'interrupted' if interrupted else 'failed'}; removing what was created")
        # After a failure the state folder (serial logs) stays for diagnosis;
        # `lab.down -n NAME` removes it. An interrupt leaves nothing.
        _teardown(lab, backend, progress, keep_folder=not interrupted)
        raise


def _teardown(lab: Lab, backend: MachineBackend, progress: Progress, keep_folder: bool = False) -> None:
    from .serve import lab as services

    lab.set_status("destroying")
    try:
        removed = [f"server {s}" for s in services.stop(lab)]
        removed += backend.destroy(lab)
    except BaseException as exc:  # leave the state file so `lab.down` can finish the job
        progress.note(f"lab `{lab.name}`: teardown incomplete ({exc}); run `invoke lab.down -n {lab.name}`")
        raise
    for item in removed:
        progress.note(f"removed {item}")
    if keep_folder:
        lab.set_status("failed")
        progress.note(f"lab `{lab.name}`: logs kept in {lab.directory}; `invoke lab.down -n {lab.name}` removes them")
    else:
        lab.remove()


def down(name: str, progress: Progress | None = None) -> None:
    progress = progress or Progress()
    lab = Lab.load(name)
    backend = backend_for(lab.state["backend"])
    _teardown(lab, backend, progress)
    progress.note(f"lab `{name}` removed")


def down_all(progress: Progress | None = None) -> list[str]:
    """Every lab, then every kubelab object that no lab claims."""
    progress = progress or Progress()
    failures = []
    for name in Lab.names():
        try:
            down(name, progress)
        except HarnessError as exc:
            failures.append(f"{name}: {exc}")
    # Vagrant's machines are libvirt domains too: one libvirt sweep finds every backend's leftovers.
    backend = backend_for("libvirt")
    backend.check()
    removed = backend.remove_leftovers(keep_labs=set(Lab.names()))
    from .serve import lab as services
    from .serve import process

    for pid, argv in services.orphans(keep_labs=set(Lab.names())):
        if process.stop(process.Daemon("server", pid, process.start_time(pid) or 0, tuple(argv), "", "")):
            removed.append(f"server pid {pid} ({' '.join(argv)[:120]})")
    for item in removed:
        progress.note(f"removed leftover {item}")
    if failures:
        raise HarnessError("some labs could not be removed:\n  " + "\n  ".join(failures))
    return removed
