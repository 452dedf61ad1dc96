"""What `lab.status` shows: every lab, its machines and servers, and the kubelab objects
(domains, networks, volumes) that no lab claims, which `lab.down --all` removes."""

from __future__ import annotations

from . import lifecycle
from .lab import Lab
from .serve import process


def lab_lines(lab: Lab) -> list[str]:
    backend = lifecycle.backend_for(lab.state["backend"])
    net = lab.state.get("network") or {}
    lines = [f"{lab.name}: {lab.status}, {lab.state['suite']} ({lab.state['image']['id']}), "
             f"network {net.get('name', '-')} {net.get('subnet', '')}, created {lab.state['created_at']}"]
    lines += [f"  {m.name:<10} {m.role:<8} {m.state:<10} {m.ip}" for m in backend.machines(lab)]
    lines += [f"  server {svc['name']}: {svc['url']} (pid {svc['pid']}, log {svc['log']})"
              for svc in (lab.state.get("services") or {}).values()]
    run = lab.state.get("run")
    if run:
        if process.start_time(run["pid"]) == run["started"]:
            lines.append(f"  in use by the run of pid {run['pid']}: {run['folder']}")
        else:
            lines.append(f"  ORPHANED: the run that owned it (pid {run['pid']}) is gone; its record, incomplete: "
                         f"{run['folder']} (`invoke report {run['folder']}`); `invoke lab.down -n {lab.name}` "
                         "removes the lab")
    return lines


def unclaimed(leftovers: list[str], labs: list[str]) -> list[str]:
    """Leftover objects (`<kind> <name>`) whose name belongs to no lab in `labs`."""
    from .machines.libvirt import lab_of

    return [o for o in leftovers if lab_of(o.split(" ", 1)[1]) not in labs]


def status_lines() -> list[str]:
    names = Lab.names()
    lines = [] if names else ["no labs"]
    for name in names:
        lines += lab_lines(Lab.load(name))
    leftovers = unclaimed(lifecycle.backend_for("libvirt").leftovers(), names)
    if leftovers:
        lines.append("kubelab objects no lab claims (`invoke lab.down --all` removes them):")
        lines += [f"  {item}" for item in leftovers]
    return lines
