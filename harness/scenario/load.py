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

from ..errors import HarnessError
from ..faults import FAULTS
from ..images.recipe import SUITES
from ..lab import MAX_MACHINE_NAME, NAME_RE
from ..params import Param
from ..probes import PROBES
from ..paths import project_root
from .model import (API_VERSION, FAULT_PHASES, INSTALL_TRACKS, KIND, NOT_SET, Check, Count, EvidenceDef,
                    FaultDef, LabDef, MachineDef, ProbeRef, Scenario, StepDef)
from .yamlsrc import Source, YamlProblem, format_path, read

VAR_RE = re.compile(r"\{\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
DURATION_RE = re.compile(r"^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$")
RANGE_RE = re.compile(r"^(>=|<=|>|<|==|!=)\s*(\d+(?:\.\d+){0,2})$")
CLAIM_RE = re.compile(r"^[KSH]\d+$")
VERSION_COMPONENTS = ("containerd", "runc", "kernel", "systemd")
CHECK_MATCHERS = ("pattern", "absent", "count", "equals")
IMPLEMENTED_TRACKS = ("none",)


class ScenarioError(HarnessError):
    exit_code = 2

    def __init__(self, problems: list[str]):
        self.problems = problems
        n = len(problems)
        super().__init__(f"{n} problem{'s' if n != 1 else ''} in scenario files:\n  " + "\n  ".join(problems))


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

    def bad(self, path, message: str) -> None:
        file, line = self.src.where(path)
        self.problems.append(f"{file}:{line}: {format_path(path)}: {message}")

    def mapping(self, value, path, required: tuple = (), optional: tuple = ()) -> dict | None:
        if not isinstance(value, dict):
            self.bad(path, f"found {_show(value)}; allowed: a mapping with keys {', '.join(required + optional)}")
            return None
        for key in value:
            if key not in required + optional:
                self.bad(path + (key,), f"unknown key `{key}`; allowed: {', '.join(required + optional)}")
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

    def target(self, value, path) -> str:
        if value is None:
            return "@all"
        text = self.string(value, path, allowed="`@all`, `@<machine>` or a machine name")
        if text is None:
            return "@all"
        machine = text[1:] if text.startswith("@") else text
        if text != "@all" and self.machines and machine not in self.machines:
            self.bad(path, f"found {text!r}; allowed: `@all` or one of {', '.join(self.machines)}")
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


def _check(c: _Checker, raw, path, kind: str) -> Check | None:
    keys = ("name", "probe", "target", *CHECK_MATCHERS, "within", "stable_for", "versions", "after_reboot", "source")
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
    versions = {}
    if "versions" in m:
        vm = c.mapping(m["versions"], path + ("versions",), optional=VERSION_COMPONENTS)
        for comp, rng in (vm or {}).items():
            if comp in VERSION_COMPONENTS and parse_range(rng) is None:
                c.bad(path + ("versions", comp), f"found {rng!r}; allowed: comparisons like '>=1.7', '<2.0' or '>=1.7,<2.0'")
            versions[comp] = str(rng)
    after_reboot = m.get("after_reboot", False)
    if not isinstance(after_reboot, bool):
        c.bad(path + ("after_reboot",), f"found {_show(after_reboot)}; allowed: true or false")
    source = m.get("source", "")
    if source and not isinstance(source, str):
        c.bad(path + ("source",), f"found {_show(source)}; allowed: a citation string (upstream file and version)")
    if name is None or probe is None:
        return None
    return Check(name=name, probe=probe, target=c.target(m.get("target"), path + ("target",)),
                 pattern=m.get("pattern"), absent=m.get("absent"), count=count,
                 equals=m.get("equals", NOT_SET), within=within, stable_for=stable_for, versions=versions,
                 after_reboot=bool(after_reboot), source=str(source or ""))


def _checks(c: _Checker, raw, path, kind: str) -> tuple[Check, ...]:
    out, seen = [], set()
    for i, item in enumerate(c.listing(raw, path)):
        chk = _check(c, item, path + (i,), kind)
        if chk is None:
            continue
        if chk.name in seen:
            c.bad(path + (i, "name"), f"duplicate check name `{chk.name}` in {path[0]}")
        seen.add(chk.name)
        out.append(chk)
    return tuple(out)


def _lab(c: _Checker, raw, path) -> LabDef | None:
    m = c.mapping(raw, path, required=("suite", "machines"))
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
        c.string(role, mp + ("role",))
        cpus = c.integer(mm.get("cpus", 1), mp + ("cpus",), 1, os.cpu_count() or 1)
        memory = c.integer(mm.get("memory", 1024), mp + ("memory",), 256)
        machines.append(MachineDef(name, str(role), cpus or 1, memory or 1024))
    c.machines = [x.name for x in machines]
    return LabDef(str(suite), tuple(machines)) if isinstance(suite, str) and suite in SUITES and machines else None


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


def _steps(c: _Checker, raw, path) -> tuple[StepDef, ...]:
    out = []
    for i, item in enumerate(c.listing(raw, path)):
        sp = path + (i,)
        m = c.mapping(item, sp, required=("name",), optional=("target", "run", "reboot", "recover_faults", "timeout"))
        if m is None:
            continue
        actions = [k for k in ("run", "reboot", "recover_faults") if k in m]
        if len(actions) != 1:
            found = ", ".join(f"`{a}`" for a in actions) or "none"
            c.bad(sp, f"found actions {found}; allowed: exactly one of run, reboot, recover_faults")
        for flag in ("reboot", "recover_faults"):
            if flag in m and m[flag] is not True:
                c.bad(sp + (flag,), f"found {_show(m[flag])}; allowed: true")
        if "run" in m:
            c.string(m["run"], sp + ("run",), allowed="a shell command")
        timeout = c.duration(m.get("timeout", 120), sp + ("timeout",))
        name = c.name(m.get("name"), sp + ("name",)) if "name" in m else None
        if name:
            out.append(StepDef(name, c.target(m.get("target"), sp + ("target",)), m.get("run"),
                               m.get("reboot") is True, m.get("recover_faults") is True, timeout or 120.0))
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


def validate(src: Source, path: Path, problems: list[str]) -> Scenario | None:
    before = len(problems)
    c = _Checker(src, problems)
    top = c.mapping(src.data, (), required=("apiVersion", "kind", "name", "summary", "lab"),
                    optional=("claims", "install", "faults", "expect", "recover", "verify", "observe", "evidence"))
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
    claims = []
    for i, claim in enumerate(c.listing(top.get("claims"), ("claims",))):
        if c.string(claim, ("claims", i), CLAIM_RE, "a claim id like H1, K8, S9 (evidence catalogue)"):
            claims.append(claim)
    install = top.get("install", "none")
    if install not in INSTALL_TRACKS:
        c.bad(("install",), f"found {_show(install)}; allowed: {', '.join(INSTALL_TRACKS)}")
    elif install not in IMPLEMENTED_TRACKS:
        c.bad(("install",), f"found {install!r}; the {install} track is not available in this kubelab yet; allowed now: {', '.join(IMPLEMENTED_TRACKS)}")
    lab = _lab(c, top.get("lab"), ("lab",)) if "lab" in top else None
    faults = _faults(c, top.get("faults"), ("faults",))
    expect = _checks(c, top.get("expect"), ("expect",), "expect")
    recover = _steps(c, top.get("recover"), ("recover",))
    verify = _checks(c, top.get("verify"), ("verify",), "verify")
    observe = _checks(c, top.get("observe"), ("observe",), "observe")
    evidence = _evidence(c, top.get("evidence"), ("evidence",))
    if faults and not expect and not top.get("expect"):
        c.bad(("expect",), "a scenario with faults needs at least one expectation (what the fault looks like)")
    raw_recover = top.get("recover") if isinstance(top.get("recover"), list) else []
    if faults and not any(isinstance(s, dict) and ("run" in s or "recover_faults" in s) for s in raw_recover):
        c.bad(("recover",), "a scenario with faults needs a recovery: a `run` step or `recover_faults: true`")
    if len(problems) > before or lab is None or name is None or summary is None:
        return None
    return Scenario(name=name, summary=summary, lab=lab, install=install, claims=tuple(claims), faults=faults,
                    expect=expect, recover=recover, verify=verify, observe=observe, evidence=evidence,
                    source_file=str(path), sha256=hashlib.sha256(path.read_bytes()).hexdigest())


def load(path: Path) -> Scenario:
    problems: list[str] = []
    scenario = load_into(Path(path), problems)
    if problems:
        raise ScenarioError(problems)
    assert scenario is not None
    return scenario


def load_into(path: Path, problems: list[str]) -> Scenario | None:
    """Load one file, appending its problems to `problems` (for linting many at once)."""
    before = len(problems)
    src = _with_imports(path, problems)
    if src is None or len(problems) > before:
        return None
    _substitute(src, problems)
    if len(problems) > before:
        return None
    return validate(src, path, problems)
