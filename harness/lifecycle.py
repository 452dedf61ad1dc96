"""Bringing labs up and down: input checks, the image a lab boots, teardown on failure.

`up` refuses bad input before anything exists and picks the boot image (a node
image is built first when a kit needs one); bringup.py then creates the lab,
and once it starts creating, any failure or Ctrl-C tears down what was made.
`down_all` also sweeps objects no state file knows (left by a SIGKILL).
"""

from __future__ import annotations

import os
import secrets

from .bringup import down, ready, start
from .capacity import memory_shortfall, overhead_mib
from .errors import HarnessError, UsageError
from .images.recipe import check_suite
from .lab import MAX_LAB_NAME, MAX_MACHINE_NAME, Lab, LabSpec, MachineSpec, check_name
from .machines import BACKENDS, backend_for
from .progress import Progress

MAX_MACHINES = 16


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
    shortfall = memory_shortfall([memory] * machines, available_mib, overhead) \
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


def up(spec: LabSpec, progress: Progress | None = None) -> Lab:
    progress = progress or Progress()
    backend = ready(spec.backend, progress)
    if spec.containerd or spec.kubernetes:  # built from source when absent or damaged, as images are
        from .artifacts import prerequisites
        from .artifacts.versions import KubeVersion

        if spec.containerd:
            prerequisites.ensure_containerd(spec.containerd, progress)
        if spec.kubernetes:
            prerequisites.ensure_kit(KubeVersion.parse(spec.kubernetes), progress)
    if spec.kubernetes and spec.node_image:
        from .images import node

        image = node.ensure(spec.suite, spec.kubernetes, progress, preload=spec.preload, containerd=spec.containerd)
    else:
        from .images import containerd_image

        image = containerd_image.base_image(spec.suite, spec.containerd, progress, recipe=spec.recipe)
    return start(spec, image, backend, progress)


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
