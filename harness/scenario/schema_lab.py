"""The lab section: suite, machines, backend, network, and a containerd built from source."""

from __future__ import annotations

from ..images.recipe import SUITES
from ..lab import MAX_MACHINE_NAME, NAME_RE
from ..machines import BACKENDS
from ..model import ROLES, LabDef, MachineDef
from .checker import Checker, show
from .overlap import network_problem


def read_lab(c: Checker, raw, path) -> LabDef | None:
    m = c.mapping(raw, path, required=("suite", "machines"), optional=("backend", "network", "overlap", "containerd"))
    if m is None:
        return None
    suite = m.get("suite")
    if "suite" in m and (not isinstance(suite, str) or suite not in SUITES):
        c.bad(path + ("suite",), f"found {show(suite)}; allowed: {', '.join(SUITES)}")
    machines = []
    raw_machines = c.listing(m.get("machines"), path + ("machines",))
    if "machines" in m and m["machines"] in (None, []):
        c.bad(path + ("machines",), f"found {'nothing' if m['machines'] is None else 'an empty list'}; allowed: at least one machine")
    for i, item in enumerate(raw_machines):
        mp = path + ("machines", i)
        mm = c.mapping(item, mp, required=("name",), optional=("role", "cpus", "memory"))
        if mm is None:
            continue
        if "name" not in mm:
            continue
        name = mm.get("name")
        if not isinstance(name, str) or not NAME_RE.match(name) or len(name) > MAX_MACHINE_NAME:
            c.bad(mp + ("name",), f"found {show(name)}; allowed: a name of lowercase letters, digits and single dashes, at most {MAX_MACHINE_NAME} characters")
            continue
        if name in [x.name for x in machines]:
            c.bad(mp + ("name",), f"duplicate machine name `{name}`")
            continue
        role = mm.get("role", "node")
        if role not in ROLES:
            c.bad(mp + ("role",), f"found {show(role)}; allowed: {', '.join(ROLES)}")
        cpus = c.integer(mm.get("cpus", 1), mp + ("cpus",), 1)  # this host's cores: admission's question
        memory = c.integer(mm.get("memory", 1024), mp + ("memory",), 256)
        machines.append(MachineDef(name, str(role), cpus or 1, memory or 1024))
    c.machines = [x.name for x in machines]
    c.roles = {x.name: x.role for x in machines}
    backend = m.get("backend")
    if backend is not None and backend not in BACKENDS:
        c.bad(path + ("backend",), f"found {show(backend)}; allowed: {', '.join(BACKENDS)}")
    network = m.get("network")
    if network is not None and network_problem(network):
        c.bad(path + ("network",), f"found {show(network)}; allowed: {network_problem(network)}")
    overlap = m.get("overlap", "")
    if overlap not in ("", "intended"):
        c.bad(path + ("overlap",), f"found {show(overlap)}; allowed: intended")
    containerd = _containerd(c, m, path, suite)
    if isinstance(suite, str) and suite in SUITES and machines:
        return LabDef(str(suite), tuple(machines), backend, network, "intended" if overlap == "intended" else "",
                      containerd)
    return None


def _containerd(c: Checker, m: dict, path, suite) -> str:
    """lab.containerd: a release built from source (artifacts/containerd.py), into sid only."""
    from ..artifacts.containerd import parse
    from ..errors import UsageError
    from ..images.containerd_image import SUITE

    if "containerd" not in m:
        return ""
    value = m["containerd"]
    try:
        tag = parse(str(value)) if isinstance(value, str) else parse("")
    except UsageError:
        c.bad(path + ("containerd",), f"found {show(value)}; allowed: a release like \"2.2.9\" (2.2 to 2.4, quoted)")
        return ""
    if suite != SUITE:
        c.bad(path + ("containerd",), f"a containerd built from source goes into the {SUITE} image; "
                                      f"this lab's suite is {show(suite)}")
    return tag.lstrip("v")
