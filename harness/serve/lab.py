"""A lab's servers: started on its network's host address after the network exists,
recorded in the lab state at once, stopped with the lab. `orphans` finds any
whose lab is gone (a SIGKILLed run), for `lab.down --all`.
"""

from __future__ import annotations

from pathlib import Path

from .. import paths
from ..progress import Progress
from . import files, process, registry


def start(lab, kit: dict, progress: Progress) -> None:
    host = lab.state["network"]["gateway"]
    workdir = lab.directory / "services"
    services = lab.state.setdefault("services", {})
    with progress.step(f"registry for kit {kit['kubernetes']} at http://{host}:{registry.PORT}"):
        daemon = registry.start(Path(kit["registry"]) / "data", host, registry.PORT, workdir)
        services["registry"] = daemon.to_state()
        lab.save()
    with progress.step(f"file server at http://{host}:{files.PORT}"):
        # served through a link in the lab folder, so the process names its lab (see `orphans`)
        root = workdir / "files"
        root.unlink(missing_ok=True)
        root.symlink_to(kit["files"])
        daemon = files.start(root, host, files.PORT, workdir)
        services["files"] = daemon.to_state()
        lab.save()


def stop(lab) -> list[str]:
    stopped = []
    for name, state in sorted((lab.state.get("services") or {}).items()):
        daemon = process.Daemon.from_state(state)
        if process.stop(daemon):
            stopped.append(f"{daemon.name} (pid {daemon.pid}, {daemon.url})")
    lab.state["services"] = {}
    lab.save()
    return stopped


def orphans(keep_labs: set[str]) -> list[tuple[int, list[str]]]:
    """Servers started for a lab folder that no kept lab owns."""
    root = str(paths.labs_dir()) + "/"
    found = []
    for pid, argv in process.find(root):
        owner = next((a[len(root):].split("/")[0] for a in argv if a.startswith(root)), None)
        if owner and owner not in keep_labs:
            found.append((pid, argv))
    return found
