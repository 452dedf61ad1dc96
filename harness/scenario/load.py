"""Scenario files -> validated Scenario, or every problem at once.

Order: parse (with positions) -> imports (deep merge, the importing file
wins) -> variables (`{{ vars.NAME }}`) -> strict validation -> model. Each
problem reads `file:line: field.path: found X; allowed: Y`. Unknown keys are
errors. Nothing here touches a machine.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from ..errors import HarnessError, ScenarioError, YamlProblem
from ..faults import FAULTS
from ..images.recipe import SUITES
from ..lab import MAX_MACHINE_NAME, NAME_RE
from ..params import Param
from ..probes import PROBES
from ..paths import project_root
from ..model import (API_VERSION, CLUSTER, DEFAULT_POD_CIDR, DEFAULT_SERVICE_CIDR, FAULT_PHASES, INSTALL_TRACKS, KIND,
                     NOT_SET, ROLE_SELECTORS, ROLES, Check, Count, EvidenceDef, FactDef, FaultDef, InstallDef, LabDef,
                     MachineDef, ProbeRef, Scenario, StepDef)
from .yamlsrc import Source, format_path, read

VAR_RE = re.compile(r"\{\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
DURATION_RE = re.compile(r"^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$")
RANGE_RE = re.compile(r"^(>=|<=|>|<|==|!=)\s*(\d+(?:\.\d+){0,2})$")
# A claim id: the catalogue's K8, H1, S9, or an author's own (NET1, ch3-dns); defined in a claims file
CLAIM_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")
# kubernetes: the release the scenario installs (install.kubernetes, or the matrix row), not read from a guest
VERSION_COMPONENTS = ("containerd", "runc", "kernel", "systemd", "kubernetes")
CHECK_MATCHERS = ("pattern", "absent", "count", "equals")
# Where inside the install track an expect/observe check may run instead of in its own phase.
CHECK_POINTS = ("before-cni",)
IMPLEMENTED_TRACKS = ("none", "kubeadm")
INSTALL_KEYS = ("track", "kubernetes", "pod_cidr", "service_cidr", "cni", "prepare", "kubernetes_version_in_config",
                "preload", "init_fails", "kubelet_health_check", "kubernetes_api_call")
GO_DURATION_RE = re.compile(r"^(?=\d)(\d+h)?(\d+m)?(\d+s)?$")  # what kubeadm's timeouts take, e.g. 1m30s
PREPARE_ITEMS = ("ip_forward", "br_netfilter")
CNIS = ("flannel", "none")
BACKENDS = ("libvirt", "vagrant")


def scenarios_dir() -> Path:
    return Path(os.environ.get("KUBELAB_SCENARIOS", project_root() / "scenarios"))


def find(name: str) -> Path:
    """A scenario by name (scenarios/<name>.yaml) or by path."""
    p = Path(name)
    if p.suffix in (".yaml", ".yml") and p.exists():
        return p
    candidate = scenarios_dir() / f"{name}.yaml"
    if candidate.exists():
        return candidate
    known = ", ".join(sorted(f"`{f.stem}`" for f in scenarios_dir().glob("*.yaml"))) or "none"
    raise ScenarioError([f"no scenario `{name}` (looked for {candidate}); scenarios: {known}"])


def all_files() -> list[Path]:
    return sorted(scenarios_dir().glob("*.yaml"))


# -- imports and variables -------------------------------------------------
def _merge(base, over):
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _merge(base[k], v) if k in base else v
        return out
    return over


def _with_imports(path: Path, problems: list[str], stack: tuple = ()) -> Source | None:
    try:
        src = read(path)
    except YamlProblem as exc:
        problems.append(str(exc))
        return None
    except OSError as exc:
        problems.append(f"{path}: cannot read: {exc.strerror}")
        return None
    if not isinstance(src.data, dict):
        file, line = src.positions.get((), (str(path), 1))
        problems.append(f"{file}:{line}: (top level): found {_show(src.data)}; allowed: a mapping of scenario fields")
        return None
    imports = src.data.pop("import", [])
    if isinstance(imports, str):
        imports = [imports]
    if not isinstance(imports, list) or not all(isinstance(i, str) for i in imports):
        file, line = src.where(("import",))
        problems.append(f"{file}:{line}: import: found {imports!r}; allowed: a list of file paths")
        return src
    merged, positions = {}, {}
    for i, rel in enumerate(imports):
        target = (path.parent / rel).resolve()
        file, line = src.where(("import", i))
        if target in stack or target == path.resolve():
            chain = " -> ".join(p.name for p in (*stack, path.resolve(), target))
            problems.append(f"{file}:{line}: import[{i}]: `{rel}` closes an import cycle: {chain}")
            continue
        if not target.exists():
            problems.append(f"{file}:{line}: import[{i}]: found `{rel}`; allowed: a file relative to {path.parent} (it does not exist)")
            continue
        sub = _with_imports(target, problems, stack + (path.resolve(),))
        if sub is not None:
            merged = _merge(merged, sub.data)
            positions.update(sub.positions)
    positions.update({k: v for k, v in src.positions.items() if k[:1] != ("import",)})
    return Source(_merge(merged, src.data), positions)


def _substitute(src: Source, problems: list[str]) -> None:
    variables = src.data.pop("vars", {}) or {}
    if not isinstance(variables, dict):
        file, line = src.where(("vars",))
        problems.append(f"{file}:{line}: vars: found {variables!r}; allowed: a mapping of names to values")
        variables = {}

    def walk(value, path):
        if isinstance(value, dict):
            return {k: walk(v, path + (k,)) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, path + (i,)) for i, v in enumerate(value)]
        if isinstance(value, str) and "{{" in value:
            whole = VAR_RE.fullmatch(value.strip())
            for m in VAR_RE.finditer(value):
                if m.group(1) not in variables:
                    file, line = src.where(path)
                    known = ", ".join(f"`{k}`" for k in variables) or "none"
                    problems.append(f"{file}:{line}: {format_path(path)}: undefined variable `{m.group(1)}`; defined: {known}")
                    return value
            if whole:  # a whole-value reference keeps the variable's type
                return variables[whole.group(1)]
            return VAR_RE.sub(lambda m: str(variables[m.group(1)]), value)
        return value

    src.data = walk(src.data, ())


# -- validation ------------------------------------------------------------
def parse_duration(value) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if value >= 0 else None
    if not isinstance(value, str) or not value:
        return None
    m = DURATION_RE.match(value.strip())
    if not m or not any(m.groups()):
        return None
    h, mi, s, ms = m.groups()
    return int(h or 0) * 3600 + int(mi or 0) * 60 + float(s or 0) + int(ms or 0) / 1000


def parse_range(text: str) -> list[tuple[str, tuple[int, ...]]] | None:
    out = []
    for part in str(text).split(","):
        m = RANGE_RE.match(part.strip())
        if not m:
            return None
        out.append((m.group(1), tuple(int(x) for x in m.group(2).split("."))))
    return out


class _Checker:
    def __init__(self, src: Source, problems: list[str]):
        self.src, self.problems = src, problems
        self.machines: list[str] = []
        self.roles: dict[str, str] = {}
        self.claim_ids: set | None = None  # the ids claims files define, when lint checks checks' `claims:`
        self.claim_files = ""

    def bad(self, path, message: str) -> None:
        file, line = self.src.where(path)
        self.problems.append(f"{file}:{line}: {format_path(path)}: {message}")

    def mapping(self, value, path, required: tuple = (), optional: tuple = (), hints: dict | None = None) -> dict | None:
        if not isinstance(value, dict):
            self.bad(path, f"found {_show(value)}; allowed: a mapping with keys {', '.join(required + optional)}")
            return None
        for key in value:
            if key not in required + optional:
                hint = f" ({hints[key]})" if hints and key in hints else ""
                self.bad(path + (key,), f"unknown key `{key}`; allowed: {', '.join(required + optional)}{hint}")
        for key in required:
            if key not in value:
                self.bad(path, f"missing required key `{key}`")
        return value

    def listing(self, value, path) -> list:
        if value is None:
            return []
        if not isinstance(value, list):
            self.bad(path, f"found {_show(value)}; allowed: a list")
            return []
        return value

    def string(self, value, path, pattern: re.Pattern | None = None, allowed: str = "a string") -> str | None:
        if not isinstance(value, str) or not value.strip():
            self.bad(path, f"found {_show(value)}; allowed: {allowed}")
            return None
        if pattern and not pattern.match(value):
            self.bad(path, f"found {value!r}; allowed: {allowed}")
            return None
        return value

    def integer(self, value, path, low: int, high: int | None = None) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            span = f"{low}..{high}" if high is not None else f"at least {low}"
            self.bad(path, f"found {_show(value)}; allowed: an integer {span}")
            return None
        return value

    def duration(self, value, path) -> float | None:
        seconds = parse_duration(value)
        if seconds is None:
            self.bad(path, f"found {_show(value)}; allowed: a duration like 500ms, 30s, 5m, 1h30m")
        return seconds

    def regex(self, value, path) -> str | None:
        if self.string(value, path, allowed="a regular expression") is None:
            return None
        try:
            re.compile(value)
        except re.error as exc:
            self.bad(path, f"found {value!r}; allowed: a valid regular expression ({exc})")
            return None
        return value

    def name(self, value, path) -> str | None:
        return self.string(value, path, re.compile(r"^[a-z0-9][a-z0-9-]*$"),
                           "a kebab-case name (lowercase letters, digits, dashes)")

    def target(self, value, path, cluster: bool = False) -> str:
        """`@all`, `@control-plane`, `@workers`, a machine (`name` or `@name`); `cluster` for API probes."""
        if value is None:
            return "@all"
        allowed = "`@all`, `@control-plane`, `@workers`, `@<machine>` or a machine name" + (", or `cluster`" if cluster else "")
        text = self.string(value, path, allowed=allowed)
        if text is None:
            return "@all"
        if text == "@all" or (cluster and text == CLUSTER):
            return text
        if text in ROLE_SELECTORS:
            role = ROLE_SELECTORS[text]
            if self.roles and role not in self.roles.values():
                self.bad(path, f"found {text!r}; no machine of the lab has role `{role}`")
            return text
        machine = text[1:] if text.startswith("@") else text
        if self.machines and machine not in self.machines:
            self.bad(path, f"found {text!r}; allowed: {allowed}; machines: {', '.join(self.machines)}")
        return text

    def params(self, value, path, spec: dict[str, Param], what: str) -> dict:
        if value is None:
            value = {}
        if not isinstance(value, dict):
            self.bad(path, f"found {_show(value)}; allowed: a mapping of {what} parameters")
            return {}
        for key, given in value.items():
            if key not in spec:
                allowed = ", ".join(spec) or "none"
                self.bad(path + (key,), f"unknown parameter `{key}` of {what}; allowed: {allowed}")
                continue
            why = spec[key].problem(given)
            if why:
                self.bad(path + (key,), why)
        for key, p in spec.items():
            if p.required and key not in value:
                self.bad(path, f"missing required parameter `{key}` of {what}")
        return value


def _show(value) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing"
    return repr(value)


def _exit_code_like(value) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, str) and value.isdigit())


def _check(c: _Checker, raw, path, kind: str) -> Check | None:
    keys = ("name", "probe", "target", *CHECK_MATCHERS, "within", "stable_for", "versions", "after_reboot", "source",
            "at", "claims")
    m = c.mapping(raw, path, required=("name", "probe"), optional=keys[2:])
    if m is None:
        return None
    name = c.name(m.get("name"), path + ("name",)) if "name" in m else None
    probe = None
    praw = m.get("probe")
    if isinstance(praw, dict) and len(praw) == 1:
        pkind, pargs = next(iter(praw.items()))
        if pkind not in PROBES:
            c.bad(path + ("probe", pkind), f"unknown probe `{pkind}`; allowed: {', '.join(PROBES)}")
        else:
            args = c.params(pargs, path + ("probe", pkind), PROBES[pkind].ARGS, f"probe `{pkind}`")
            probe = ProbeRef(pkind, dict(args))
    elif "probe" in m:
        c.bad(path + ("probe",), f"found {_show(praw)}; allowed: one probe as `{{kind: {{args}}}}`, kinds: {', '.join(PROBES)}")
    matchers = [k for k in CHECK_MATCHERS if k in m]
    if kind == "observe" and matchers:
        c.bad(path + (matchers[0],), f"`observe` records values and asserts nothing; remove `{matchers[0]}` or move the check to expect/verify")
    elif kind != "observe" and len(matchers) != 1:
        found = ", ".join(f"`{k}`" for k in matchers) or "none"
        c.bad(path, f"found matchers {found}; allowed: exactly one of {', '.join(CHECK_MATCHERS)}")
    for key in ("pattern", "absent"):
        if key in m:
            c.regex(m[key], path + (key,))
    count = None
    if "count" in m:
        cm = c.mapping(m["count"], path + ("count",), required=("pattern",), optional=("min", "max"))
        if cm is not None:
            if "pattern" in cm:
                c.regex(cm["pattern"], path + ("count", "pattern"))
            low = c.integer(cm.get("min", 0), path + ("count", "min"), 0)
            high = cm.get("max")
            if high is not None:
                high = c.integer(high, path + ("count", "max"), low or 0)
            count = Count(cm.get("pattern", ""), low or 0, high)
    within = c.duration(m.get("within", 0), path + ("within",)) or 0.0
    stable_for = c.duration(m.get("stable_for", 0), path + ("stable_for",)) or 0.0
    versions = _versions(c, m["versions"], path + ("versions",)) if "versions" in m else {}
    after_reboot = m.get("after_reboot", False)
    if not isinstance(after_reboot, bool):
        c.bad(path + ("after_reboot",), f"found {_show(after_reboot)}; allowed: true or false")
    source = m.get("source", "")
    if source and not isinstance(source, str):
        c.bad(path + ("source",), f"found {_show(source)}; allowed: a citation string (upstream file and version)")
    at = m.get("at", "")
    if at and (kind not in ("expect", "observe") or at not in CHECK_POINTS):
        c.bad(path + ("at",), f"found {_show(at)}; allowed: {', '.join(CHECK_POINTS)} (in expect and observe)")
    if probe is not None and probe.kind == "command" and "equals" in m and not _exit_code_like(m["equals"]):
        # `command` reads the exit code as its value; a text here could never (or always) match
        c.bad(path + ("equals",), f"found {_show(m['equals'])}; a `command` probe's value is its exit code "
                                  "(an integer); match its output with `pattern`")
    claims = _claim_ids(c, m.get("claims"), path + ("claims",))
    if name is None or probe is None:
        return None
    on_cluster = PROBES[probe.kind].target == "cluster"
    default_target = "cluster" if on_cluster else None
    target = c.target(m.get("target", default_target), path + ("target",), cluster=True)
    if on_cluster != (target == "cluster"):
        c.bad(path + ("target",), f"found {target!r}; allowed: "
              + ("`cluster` (probe `%s` reads the cluster's API)" % probe.kind if on_cluster
                 else "a machine selector (probe `%s` runs on machines)" % probe.kind))
    return Check(name=name, probe=probe, target=target, at=str(at or ""),
                 pattern=m.get("pattern"), absent=m.get("absent"), count=count,
                 equals=m.get("equals", NOT_SET), within=within, stable_for=stable_for, versions=versions,
                 after_reboot=bool(after_reboot), source=str(source or ""), claims=claims)


def _claim_ids(c: _Checker, raw, path) -> tuple[str, ...]:
    """A check's `claims: [K8]`: ids a claims file defines (checked when lint knows the files)."""
    out = []
    for i, claim in enumerate(c.listing(raw, path)):
        if not c.string(claim, path + (i,), CLAIM_RE, "a claim id like H1, K8 or NET3 (letters, digits, - and _)"):
            continue
        if c.claim_ids is not None and claim not in c.claim_ids:
            c.bad(path + (i,), f"found {claim!r}; no claims file defines it (claims files: {c.claim_files}); "
                               "define it there, or fix the id")
        out.append(claim)
    return tuple(dict.fromkeys(out))


def _checks(c: _Checker, raw, path, kind: str, items=None) -> tuple[Check, ...]:
    """The checks of a section; `items`, its (index, entry) pairs where the section holds more
    than checks (verify's layers), so that every problem keeps its entry's own index."""
    out, seen = [], set()
    for i, item in (enumerate(c.listing(raw, path)) if items is None else items):
        chk = _check(c, item, path + (i,), kind)
        if chk is None:
            continue
        if chk.name in seen:
            c.bad(path + (i, "name"), f"duplicate check name `{chk.name}` in {path[0]}")
        seen.add(chk.name)
        out.append(chk)
    return tuple(out)


def _lab(c: _Checker, raw, path) -> LabDef | None:
    m = c.mapping(raw, path, required=("suite", "machines"), optional=("backend", "network", "overlap", "containerd"))
    if m is None:
        return None
    suite = m.get("suite")
    if "suite" in m and (not isinstance(suite, str) or suite not in SUITES):
        c.bad(path + ("suite",), f"found {_show(suite)}; allowed: {', '.join(SUITES)}")
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
            c.bad(mp + ("name",), f"found {_show(name)}; allowed: a name of lowercase letters, digits and single dashes, at most {MAX_MACHINE_NAME} characters")
            continue
        if name in [x.name for x in machines]:
            c.bad(mp + ("name",), f"duplicate machine name `{name}`")
            continue
        role = mm.get("role", "node")
        if role not in ROLES:
            c.bad(mp + ("role",), f"found {_show(role)}; allowed: {', '.join(ROLES)}")
        cpus = c.integer(mm.get("cpus", 1), mp + ("cpus",), 1)  # this host's cores: admission's question
        memory = c.integer(mm.get("memory", 1024), mp + ("memory",), 256)
        machines.append(MachineDef(name, str(role), cpus or 1, memory or 1024))
    c.machines = [x.name for x in machines]
    c.roles = {x.name: x.role for x in machines}
    backend = m.get("backend")
    if backend is not None and backend not in BACKENDS:
        c.bad(path + ("backend",), f"found {_show(backend)}; allowed: {', '.join(BACKENDS)}")
    network = m.get("network")
    if network is not None and _network_problem(network):
        c.bad(path + ("network",), f"found {_show(network)}; allowed: {_network_problem(network)}")
    overlap = m.get("overlap", "")
    if overlap not in ("", "intended"):
        c.bad(path + ("overlap",), f"found {_show(overlap)}; allowed: intended")
    containerd = _containerd(c, m, path, suite)
    if isinstance(suite, str) and suite in SUITES and machines:
        return LabDef(str(suite), tuple(machines), backend, network, "intended" if overlap == "intended" else "",
                      containerd)
    return None


def _containerd(c: _Checker, m: dict, path, suite) -> str:
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
        c.bad(path + ("containerd",), f"found {_show(value)}; allowed: a release like \"2.2.9\" (2.2 to 2.4, quoted)")
        return ""
    if suite != SUITE:
        c.bad(path + ("containerd",), f"a containerd built from source goes into the {SUITE} image; "
                                      f"this lab's suite is {_show(suite)}")
    return tag.lstrip("v")


def _overlap_warnings(c: _Checker, lab: LabDef, install: InstallDef, recover=()) -> list[str]:
    """A lab network inside the cluster's pod or Service range: almost always a mistake
    (node addresses routed as pods or Services), so said before anything is created.
    A rebuild's ranges are held to it always: a rebuild is how an overlap is undone."""
    import ipaddress

    if not lab.network or install.track == "none":
        return []
    out = []
    net = ipaddress.ip_network(lab.network)
    ranges = [] if lab.overlap == "intended" else [
        (("lab", "network"), "install", "pod_cidr", install.pod_cidr),
        (("lab", "network"), "install", "service_cidr", install.service_cidr)]
    for i, s in enumerate(recover):
        ranges += [(("recover", i, "reinstall", key), f"recover[{i}].reinstall", key, cidr)
                   for key, cidr in s.networks.items()]
    for where, owner, key, cidr in ranges:
        if net.overlaps(ipaddress.ip_network(cidr)):
            file, line = c.src.where(where)
            what = "pod" if key == "pod_cidr" else "Service"
            hint = ("choose a range outside it" if owner != "install"
                    else "if that is the point, declare it with `lab: {overlap: intended}`")
            out.append(f"{file}:{line}: lab.network: {lab.network} overlaps {owner}.{key} {cidr}: the nodes' "
                       f"addresses lie in the cluster's {what} range; {hint}")
    return out


def _is_cidr(value) -> bool:
    import ipaddress

    try:
        return isinstance(value, str) and ipaddress.ip_network(value, strict=True).version == 4
    except ValueError:
        return False


def _network_problem(value) -> str:
    import ipaddress

    try:
        net = ipaddress.ip_network(str(value), strict=True)
    except ValueError:
        return "a network like 192.168.150.0/24 (address/prefix, host bits zero)"
    if net.version != 4 or net.prefixlen != 24 or not net.is_private:
        return "a private IPv4 /24, like 10.244.1.0/24"
    return ""


def _install(c: _Checker, raw, path, lab: LabDef | None) -> InstallDef:
    if raw is None or raw == "none":
        return InstallDef()
    if isinstance(raw, str):
        if raw not in INSTALL_TRACKS:
            c.bad(path, f"found {_show(raw)}; allowed: none, or a mapping with track: {', '.join(IMPLEMENTED_TRACKS[1:])}")
        else:
            c.bad(path, f"found {raw!r}; allowed: none, or a mapping like {{track: {raw}, kubernetes: <version>}}")
        return InstallDef()
    m = c.mapping(raw, path, required=("track",), optional=INSTALL_KEYS[1:])
    if m is None:
        return InstallDef()
    track = m.get("track")
    if track not in INSTALL_TRACKS:
        c.bad(path + ("track",), f"found {_show(track)}; allowed: {', '.join(INSTALL_TRACKS)}")
        return InstallDef()
    if track not in IMPLEMENTED_TRACKS:
        c.bad(path + ("track",), f"found {track!r}; the {track} track is not available in this kubelab yet; "
                                 f"allowed now: {', '.join(IMPLEMENTED_TRACKS)}")
        return InstallDef()
    if track == "none":
        return InstallDef()
    from ..artifacts.versions import DEFAULT_KUBERNETES, KubeVersion

    version = str(m.get("kubernetes", DEFAULT_KUBERNETES))
    try:
        KubeVersion.parse(version).check_supported()
    except HarnessError as exc:
        c.bad(path + ("kubernetes",), f"found {_show(m.get('kubernetes'))}; {str(exc).split(': ', 1)[-1]}")
    cidrs = {}
    for key, default in (("pod_cidr", DEFAULT_POD_CIDR), ("service_cidr", DEFAULT_SERVICE_CIDR)):
        cidrs[key] = str(m.get(key, default))
        if not _is_cidr(cidrs[key]):
            c.bad(path + (key,), f"found {_show(m.get(key))}; allowed: an IPv4 network like {default}")
    cni = m.get("cni", "flannel")
    if cni not in CNIS:
        c.bad(path + ("cni",), f"found {_show(cni)}; allowed: {', '.join(CNIS)}")
    prepare = m.get("prepare", list(PREPARE_ITEMS))
    if not isinstance(prepare, list) or any(p not in PREPARE_ITEMS for p in prepare):
        c.bad(path + ("prepare",), f"found {_show(prepare)}; allowed: a list of {', '.join(PREPARE_ITEMS)} (or [])")
        prepare = list(PREPARE_ITEMS)
    pinned = m.get("kubernetes_version_in_config", True)
    preload = m.get("preload", True)
    init_fails = m.get("init_fails", False)
    for key, value in (("kubernetes_version_in_config", pinned), ("preload", preload)):
        if not isinstance(value, bool):
            c.bad(path + (key,), f"found {_show(value)}; allowed: true or false")
    init_fails_versions = {}
    if isinstance(init_fails, dict):  # only where these versions are found
        init_fails_versions = _versions(c, init_fails, path + ("init_fails",))
        init_fails = True
    elif not isinstance(init_fails, bool):
        c.bad(path + ("init_fails",), f"found {_show(init_fails)}; allowed: true, false, or a version range "
                                      "like {containerd: \"<2.0\"} where init is expected to stop")
    durations = {}
    for key in ("kubelet_health_check", "kubernetes_api_call"):
        durations[key] = m.get(key, "")
        if durations[key] != "" and not (isinstance(durations[key], str) and GO_DURATION_RE.match(durations[key])):
            c.bad(path + (key,), f"found {_show(durations[key])}; allowed: a duration like 40s or 1m30s")
            durations[key] = ""
    if durations["kubernetes_api_call"] and init_fails is False:
        c.bad(path + ("kubernetes_api_call",), "applies only to an init the fault stops; set `init_fails` too, "
                                               "or leave it out (the track's value holds: harness/tuning.py)")
    if lab is not None:
        planes = [x.name for x in lab.machines if x.role == "control-plane"]
        others = [x.name for x in lab.machines if x.role not in ("control-plane", "worker")]
        if len(planes) != 1:
            c.bad(("lab", "machines"), f"the {track} track needs exactly one machine with role control-plane; "
                                       f"found {len(planes)}")
        if others:
            c.bad(("lab", "machines"), f"the {track} track takes roles control-plane and worker; "
                                       f"{', '.join(others)} {'has' if len(others) == 1 else 'have'} another")
    return InstallDef(track, version, cidrs["pod_cidr"], cidrs["service_cidr"], cni if cni in CNIS else "flannel",
                      tuple(prepare), pinned is not False, preload is not False, init_fails is True,
                      durations["kubelet_health_check"], init_fails_versions, durations["kubernetes_api_call"])


def _faults(c: _Checker, raw, path) -> tuple[FaultDef, ...]:
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
            c.bad(fp + ("kind",), f"found {_show(kind)}; allowed: {', '.join(FAULTS)}")
            continue
        phase = m.get("phase", "before-install")
        if phase not in FAULT_PHASES:
            c.bad(fp + ("phase",), f"found {_show(phase)}; allowed: {', '.join(FAULT_PHASES)}")
        params = c.params(m.get("params"), fp + ("params",), FAULTS[kind].PARAMS, f"fault `{kind}`")
        out.append(FaultDef(kind, c.target(m.get("target"), fp + ("target",)), phase, dict(params)))
    return tuple(out)


STEP_ACTIONS = ("run", "reboot", "recover_faults", "reinstall", "power_cycle")


def _versions(c: _Checker, raw, path) -> dict:
    """A version gate: component -> range, e.g. {containerd: "<2.0"}."""
    versions = {}
    for comp, rng in (c.mapping(raw, path, optional=VERSION_COMPONENTS) or {}).items():
        if comp in VERSION_COMPONENTS and parse_range(rng) is None:
            c.bad(path + (comp,), f"found {rng!r}; allowed: comparisons like '>=1.7', '<2.0' or '>=1.7,<2.0'")
        versions[comp] = str(rng)
    return versions


def _steps(c: _Checker, raw, path) -> tuple[StepDef, ...]:
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
            c.bad(sp + ("power_cycle",), f"found {_show(m['power_cycle'])}; allowed: true, or "
                                         "{kernel_args: ...} for one boot with those kernel arguments")
        for flag in ("reboot", "recover_faults"):
            if flag in m and m[flag] is not True:
                c.bad(sp + (flag,), f"found {_show(m[flag])}; allowed: true")
        networks = {}
        if isinstance(m.get("reinstall"), dict):
            given = c.mapping(m["reinstall"], sp + ("reinstall",), optional=("pod_cidr", "service_cidr")) or {}
            for key, value in ((k, v) for k, v in given.items() if k in ("pod_cidr", "service_cidr")):
                if not _is_cidr(value):
                    c.bad(sp + ("reinstall", key), f"found {_show(value)}; allowed: an IPv4 network like 172.20.0.0/16")
                networks[key] = str(value)
        elif "reinstall" in m and m["reinstall"] is not True:
            c.bad(sp + ("reinstall",), f"found {_show(m['reinstall'])}; allowed: true, or a mapping of pod_cidr "
                                       "and service_cidr to rebuild with")
        versions = _versions(c, m["versions"], sp + ("versions",)) if "versions" in m else {}
        if "run" in m:
            c.string(m["run"], sp + ("run",), allowed="a shell command")
        timeout = c.duration(m.get("timeout", 120), sp + ("timeout",))
        name = c.name(m.get("name"), sp + ("name",)) if "name" in m else None
        if name:
            out.append(StepDef(name, c.target(m.get("target"), sp + ("target",)), m.get("run"),
                               m.get("reboot") is True, m.get("recover_faults") is True, timeout or 120.0,
                               "reinstall" in m, networks, versions, "power_cycle" in m, kernel_args))
    return tuple(out)


def _evidence(c: _Checker, raw, path) -> tuple[EvidenceDef, ...]:
    out = []
    for i, item in enumerate(c.listing(raw, path)):
        ep = path + (i,)
        m = c.mapping(item, ep, optional=("journal", "file", "command", "target"))
        if m is None:
            continue
        kinds = [k for k in ("journal", "file", "command") if k in m]
        if len(kinds) != 1:
            c.bad(ep, f"found {', '.join(kinds) or 'none'}; allowed: exactly one of journal, file, command")
            continue
        what = c.string(m[kinds[0]], ep + (kinds[0],))
        if what:
            out.append(EvidenceDef(kinds[0], what, c.target(m.get("target"), ep + ("target",))))
    return tuple(out)


FACT_KINDS = ("seconds", "value", "matched", "cases")


def _facts(c: _Checker, raw, path, checks: set[str]) -> tuple[FactDef, ...]:
    """`- {name: ready_s, seconds: both-nodes-ready}`, `- {name: x, value: CHECK}`,
    `- {name: x, matched: CHECK, regex: 'in (\\d+)'}`,
    `- {name: cri_table, cases: [{when: CHECK, value: merged}, ...]}`; every CHECK must exist."""
    out = []
    known = ", ".join(sorted(checks)) or "none in this file"

    def check_name(value, p):
        if c.name(value, p) and value not in checks:
            c.bad(p, f"found {value!r}; allowed: the name of an expect, verify or observe check ({known})")

    for i, item in enumerate(c.listing(raw, path)):
        fp = path + (i,)
        m = c.mapping(item, fp, required=("name",), optional=FACT_KINDS + ("regex",))
        if m is None:
            continue
        kinds = [k for k in FACT_KINDS if k in m]
        if len(kinds) != 1:
            c.bad(fp, f"found {', '.join(kinds) or 'none'}; allowed: exactly one of {', '.join(FACT_KINDS)}")
            continue
        name = c.string(m.get("name"), fp + ("name",), re.compile(r"^[a-z][a-z0-9_]*$"),
                        "a snake_case name (lowercase letters, digits, underscores)")
        kind = kinds[0]
        regex = ""
        if "regex" in m:
            if kind != "matched":
                c.bad(fp + ("regex",), f"allowed only with `matched:` (this fact is `{kind}:`)")
                continue
            regex = c.regex(m["regex"], fp + ("regex",))
            if regex is None:
                continue
            if re.compile(regex).groups != 1:
                c.bad(fp + ("regex",), f"found {regex!r}; allowed: a regular expression with exactly one group "
                                       "(the part of the matched text the fact keeps)")
                continue
        if kind != "cases":
            check_name(m[kind], fp + (kind,))
            if name:
                out.append(FactDef(name, kind, check=m[kind], regex=regex))
            continue
        cases = []
        for j, case in enumerate(c.listing(m["cases"], fp + ("cases",))):
            cp = fp + ("cases", j)
            cm = c.mapping(case, cp, required=("when", "value"))
            if cm and "when" in cm and "value" in cm:
                check_name(cm["when"], cp + ("when",))
                cases.append((cm["when"], cm["value"]))
        if not cases:
            c.bad(fp + ("cases",), "allowed: a non-empty list of {when: CHECK, value: VALUE}")
        elif name:
            out.append(FactDef(name, "cases", cases=tuple(cases)))
    return tuple(out)


def _verify(c: _Checker, raw, install: InstallDef) -> tuple[tuple[Check, ...], tuple[str, ...]]:
    """The verify section: checks, and `{layers: all}` (or a list of layers) entries that run
    harness/verify's layers against the cluster after the checks."""
    from .. import verify as layers_of

    items = c.listing(raw, ("verify",))
    layers: list[str] = []
    checks = []
    for i, item in enumerate(items):
        if not (isinstance(item, dict) and "layers" in item):
            checks.append((i, item))
            continue
        m = c.mapping(item, ("verify", i), required=("layers",))
        if m is None:
            continue
        try:
            layers += [n for n in layers_of.chosen(m["layers"]) if n not in layers]
        except ValueError as exc:
            c.bad(("verify", i, "layers"), str(exc))
        if install.track == "none":
            c.bad(("verify", i, "layers"), "the layers check a Kubernetes cluster; this scenario installs none "
                                           "(`install.track: none`)")
    return _checks(c, raw, ("verify",), "verify", checks), tuple(n for n in layers_of.LAYERS if n in layers)


def validate(src: Source, path: Path, problems: list[str], claim_ids: set | None = None,
             claim_files: str = "") -> Scenario | None:
    """claim_ids: the ids the claims files define (lint); None leaves checks' `claims:` ids unchecked."""
    before = len(problems)
    c = _Checker(src, problems)
    c.claim_ids, c.claim_files = claim_ids, claim_files
    top = c.mapping(src.data, (), required=("apiVersion", "kind", "name", "summary", "lab"),
                    optional=("install", "faults", "expect", "recover", "verify", "observe", "evidence", "facts",
                              "ci"),
                    hints={"claims": "a claim id goes on the checks that prove it (`claims: [K8]` on an expect, "
                                     "verify or observe check); the scenario's list is derived from them"})
    if top is None:
        return None
    if "apiVersion" in top and top["apiVersion"] != API_VERSION:
        c.bad(("apiVersion",), f"found {_show(top['apiVersion'])}; allowed: {API_VERSION}")
    if "kind" in top and top["kind"] != KIND:
        c.bad(("kind",), f"found {_show(top['kind'])}; allowed: {KIND}")
    name = c.name(top.get("name"), ("name",)) if "name" in top else None
    if name and name != path.stem:
        c.bad(("name",), f"found {name!r}; allowed: {path.stem!r} (the name must match the file name)")
    summary = c.string(top.get("summary"), ("summary",)) if "summary" in top else None
    lab = _lab(c, top.get("lab"), ("lab",)) if "lab" in top else None
    install = _install(c, top.get("install"), ("install",), lab)
    faults = _faults(c, top.get("faults"), ("faults",))
    expect = _checks(c, top.get("expect"), ("expect",), "expect")
    recover = _steps(c, top.get("recover"), ("recover",))
    verify, verify_layers = _verify(c, top.get("verify"), install)
    observe = _checks(c, top.get("observe"), ("observe",), "observe")
    evidence = _evidence(c, top.get("evidence"), ("evidence",))
    facts = _facts(c, top.get("facts"), ("facts",), {x.name for x in expect + verify + observe})
    for i, f in enumerate(faults):
        if f.phase in FAULT_PHASES[1:] and install.track != "kubeadm":
            c.bad(("faults", i, "phase"), f"found {f.phase!r}; allowed without the kubeadm track: before-install")
    if faults and not expect and not top.get("expect"):
        c.bad(("expect",), "a scenario with faults needs at least one expectation (what the fault looks like)")
    raw_recover = top.get("recover") if isinstance(top.get("recover"), list) else []
    if faults and not any(isinstance(s, dict) and ("run" in s or "recover_faults" in s) for s in raw_recover):
        c.bad(("recover",), "a scenario with faults needs a recovery: a `run` step or `recover_faults: true`")
    reinstalls = [i for i, s in enumerate(recover) if s.action == "reinstall"]
    if install.init_fails and not reinstalls:
        c.bad(("recover",), "`install.init_fails: true` needs a recovery step `reinstall: true` "
                            "(kubeadm reset, then init, joins and CNI again)")
    if install.track == "none":  # a gate on the installed release, where none is installed, never holds
        for section, gated in (("expect", expect), ("verify", verify), ("observe", observe), ("recover", recover)):
            for i, item in enumerate(gated):
                if "kubernetes" in item.versions:
                    c.bad((section, i, "versions", "kubernetes"), "this scenario installs no Kubernetes "
                          "(`install.track: none`); gate on containerd, runc, kernel or systemd")
    for i in reinstalls:
        if install.track != "kubeadm":
            c.bad(("recover", i, "reinstall"), "allowed only with the kubeadm track (`install.track: kubeadm`)")
    ci = top.get("ci", False)
    if not isinstance(ci, bool):
        c.bad(("ci",), f"found {_show(ci)}; allowed: true or false")
    elif ci and install.track == "none":
        c.bad(("ci",), "CI runs every host scenario already; `ci` chooses among the scenarios that install "
                       "Kubernetes (leave it out)")
    if len(problems) > before or lab is None or name is None or summary is None:
        return None
    claims = tuple(dict.fromkeys(claim for chk in expect + verify + observe for claim in chk.claims))
    return Scenario(name=name, summary=summary, lab=lab, install=install, claims=claims, faults=faults,
                    expect=expect, recover=recover, verify=verify, verify_layers=verify_layers, observe=observe,
                    evidence=evidence, facts=facts, ci=ci is True,
                    warnings=tuple(_overlap_warnings(c, lab, install, recover)),
                    source_file=str(path), sha256=hashlib.sha256(path.read_bytes()).hexdigest())


def load(path: Path) -> Scenario:
    problems: list[str] = []
    scenario = load_into(Path(path), problems)
    if problems:
        raise ScenarioError(problems)
    assert scenario is not None
    return scenario


def load_into(path: Path, problems: list[str], claim_ids: set | None = None, claim_files: str = "") -> Scenario | None:
    """Load one file, appending its problems to `problems` (for linting many at once); with
    `claim_ids`, every id a check's `claims:` names must be one of them."""
    before = len(problems)
    src = _with_imports(path, problems)
    if src is None or len(problems) > before:
        return None
    _substitute(src, problems)
    if len(problems) > before:
        return None
    return validate(src, path, problems, claim_ids, claim_files)
