"""A lab on a boot image already chosen: its machines and servers up, and all of it down again.

lifecycle.up decides which image a lab boots, and may first build a node image,
which is itself provisioned on a lab brought up here; so this module never asks
for an image, and node-image building and lifecycle do not import each other.
Once anything exists, any failure or Ctrl-C tears down what was made.
"""

from __future__ import annotations

from . import host
from .lab import Lab, LabSpec
from .machines import backend_for
from .machines.base import MachineBackend
from .progress import Progress


def ready(backend: str, progress: Progress) -> MachineBackend:
    """The host prepared and the backend checked, before anything is built or created."""
    host.prepare(log=progress.note)
    chosen = backend_for(backend)
    chosen.check()
    return chosen


def start(spec: LabSpec, image, backend: MachineBackend, progress: Progress) -> Lab:
    """Create the lab's machines from `image` (a store.Image) and, with a kit, its registry
    and file server; on any failure, remove what was made."""
    kit = None
    if spec.kubernetes:
        from .artifacts import kit as kits
        from .artifacts.versions import KubeVersion

        kit = kits.load_kit(KubeVersion.parse(spec.kubernetes))
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
        teardown(lab, backend, progress, keep_folder=not interrupted)
        raise


def teardown(lab: Lab, backend: MachineBackend, progress: Progress, keep_folder: bool = False) -> None:
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
    teardown(lab, backend_for(lab.state["backend"]), progress)
    progress.note(f"lab `{name}` removed")
