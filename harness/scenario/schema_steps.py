"""What a scenario does to its machines: the faults it injects and the recover steps."""

from __future__ import annotations

from ..faults import FAULTS
from ..model import FAULT_PHASES, FaultDef, StepDef
from .checker import Checker, read_versions, show
from .overlap import is_cidr


def read_faults(c: Checker, raw, path) -> tuple[FaultDef, ...]:
    out = []
    for i, item in enumerate(c.listing(raw, path)):
        fp = path + (i,)
        m = c.mapping(item, fp, required=("kind",), optional=("target", "phase", "params"))
        if m is None:
            continue
        if "kind" not in m:
            continue
        kind = m.get("kind")
        if not isinstance(kind, str) or kind not in FAULTS:
            c.bad(fp + ("kind",), f"found {show(kind)}; allowed: {', '.join(FAULTS)}")
            continue
        phase = m.get("phase", "before-install")
        if phase not in FAULT_PHASES:
            c.bad(fp + ("phase",), f"found {show(phase)}; allowed: {', '.join(FAULT_PHASES)}")
        params = c.params(m.get("params"), fp + ("params",), FAULTS[kind].PARAMS, f"fault `{kind}`")
        out.append(FaultDef(kind, c.target(m.get("target"), fp + ("target",)), phase, dict(params)))
    return tuple(out)


STEP_ACTIONS = ("run", "reboot", "recover_faults", "reinstall", "power_cycle")


def read_steps(c: Checker, raw, path) -> tuple[StepDef, ...]:
    out = []
    for i, item in enumerate(c.listing(raw, path)):
        sp = path + (i,)
        m = c.mapping(item, sp, required=("name",),
                      optional=("target", "run", "reboot", "recover_faults", "reinstall", "power_cycle", "timeout",
                                "versions"))
        if m is None:
            continue
        actions = [k for k in STEP_ACTIONS if k in m]
        if len(actions) != 1:
            found = ", ".join(f"`{a}`" for a in actions) or "none"
            c.bad(sp, f"found actions {found}; allowed: exactly one of {', '.join(STEP_ACTIONS)}")
        kernel_args = ""
        if isinstance(m.get("power_cycle"), dict):
            given = c.mapping(m["power_cycle"], sp + ("power_cycle",), optional=("kernel_args",)) or {}
            if "kernel_args" in given:
                kernel_args = c.string(given["kernel_args"], sp + ("power_cycle", "kernel_args"),
                                       allowed="kernel arguments, like systemd.mask=kubelet.service") or ""
        elif "power_cycle" in m and m["power_cycle"] is not True:
            c.bad(sp + ("power_cycle",), f"found {show(m['power_cycle'])}; allowed: true, or "
                                         "{kernel_args: ...} for one boot with those kernel arguments")
        for flag in ("reboot", "recover_faults"):
            if flag in m and m[flag] is not True:
                c.bad(sp + (flag,), f"found {show(m[flag])}; allowed: true")
        networks = {}
        if isinstance(m.get("reinstall"), dict):
            given = c.mapping(m["reinstall"], sp + ("reinstall",), optional=("pod_cidr", "service_cidr")) or {}
            for key, value in ((k, v) for k, v in given.items() if k in ("pod_cidr", "service_cidr")):
                if not is_cidr(value):
                    c.bad(sp + ("reinstall", key), f"found {show(value)}; allowed: an IPv4 network like 172.20.0.0/16")
                networks[key] = str(value)
        elif "reinstall" in m and m["reinstall"] is not True:
            c.bad(sp + ("reinstall",), f"found {show(m['reinstall'])}; allowed: true, or a mapping of pod_cidr "
                                       "and service_cidr to rebuild with")
        versions = read_versions(c, m["versions"], sp + ("versions",)) if "versions" in m else {}
        if "run" in m:
            c.string(m["run"], sp + ("run",), allowed="a shell command")
        timeout = c.duration(m.get("timeout", 120), sp + ("timeout",))
        name = c.name(m.get("name"), sp + ("name",)) if "name" in m else None
        if name:
            out.append(StepDef(name, c.target(m.get("target"), sp + ("target",)), m.get("run"),
                               m.get("reboot") is True, m.get("recover_faults") is True, timeout or 120.0,
                               "reinstall" in m, networks, versions, "power_cycle" in m, kernel_args))
    return tuple(out)
