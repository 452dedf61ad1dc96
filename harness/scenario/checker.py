"""What every schema reader shares: the Checker (it records each problem as
`file:line: field.path: found X; allowed: Y`), how a found value is shown, and the
durations, version ranges, version gates and claim ids several sections take."""

from __future__ import annotations

import re

from ..durations import parse_duration
from ..model import CLUSTER, HOST, ROLE_SELECTORS
from ..params import Param
from .yamlsrc import Source, format_path

RANGE_RE = re.compile(r"^(>=|<=|>|<|==|!=)\s*(\d+(?:\.\d+){0,2})$")
# A claim id: the catalogue's K8, H1, S9, or an author's own (NET1, ch3-dns); defined in a claims file
CLAIM_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")
# kubernetes: the release the scenario installs (install.kubernetes, or the matrix row), not read from a guest
VERSION_COMPONENTS = ("containerd", "runc", "kernel", "systemd", "kubernetes")


def parse_range(text: str) -> list[tuple[str, tuple[int, ...]]] | None:
    out = []
    for part in str(text).split(","):
        m = RANGE_RE.match(part.strip())
        if not m:
            return None
        out.append((m.group(1), tuple(int(x) for x in m.group(2).split("."))))
    return out


class Checker:
    def __init__(self, src: Source, problems: list[str]):
        self.src, self.problems = src, problems
        self.machines: list[str] = []
        self.roles: dict[str, str] = {}
        self.claim_ids: set | None = None  # the ids claims files define, when lint checks checks' `claims:`
        self.linting = False  # scenario.lint's own rules apply (a run loads without them)
        self.claim_files = ""

    def bad(self, path, message: str) -> None:
        file, line = self.src.where(path)
        self.problems.append(f"{file}:{line}: {format_path(path)}: {message}")

    def mapping(self, value, path, required: tuple = (), optional: tuple = (), hints: dict | None = None) -> dict | None:
        if not isinstance(value, dict):
            self.bad(path, f"found {show(value)}; allowed: a mapping with keys {', '.join(required + optional)}")
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
            self.bad(path, f"found {show(value)}; allowed: a list")
            return []
        return value

    def string(self, value, path, pattern: re.Pattern | None = None, allowed: str = "a string") -> str | None:
        if not isinstance(value, str) or not value.strip():
            self.bad(path, f"found {show(value)}; allowed: {allowed}")
            return None
        if pattern and not pattern.match(value):
            self.bad(path, f"found {value!r}; allowed: {allowed}")
            return None
        return value

    def integer(self, value, path, low: int, high: int | None = None) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            span = f"{low}..{high}" if high is not None else f"at least {low}"
            self.bad(path, f"found {show(value)}; allowed: an integer {span}")
            return None
        return value

    def duration(self, value, path) -> float | None:
        seconds = parse_duration(value)
        if seconds is None:
            self.bad(path, f"found {show(value)}; allowed: a duration like 500ms, 30s, 5m, 1h30m")
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
        """`@all`, `@control-plane`, `@workers`, a machine (`name` or `@name`); `cluster` for API
        probes and `host` for what the host steps recorded."""
        if value is None:
            return "@all"
        allowed = ("`@all`, `@control-plane`, `@workers`, `@<machine>` or a machine name"
                   + (", `cluster` or `host`" if cluster else ""))
        text = self.string(value, path, allowed=allowed)
        if text is None:
            return "@all"
        if text == "@all" or (cluster and text in (CLUSTER, HOST)):
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
            self.bad(path, f"found {show(value)}; allowed: a mapping of {what} parameters")
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


def show(value) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing"
    return repr(value)


def read_versions(c: Checker, raw, path) -> dict:
    """A version gate: component -> range, e.g. {containerd: "<2.0"}."""
    versions = {}
    for comp, rng in (c.mapping(raw, path, optional=VERSION_COMPONENTS) or {}).items():
        if comp in VERSION_COMPONENTS and parse_range(rng) is None:
            c.bad(path + (comp,), f"found {rng!r}; allowed: comparisons like '>=1.7', '<2.0' or '>=1.7,<2.0'")
        versions[comp] = str(rng)
    return versions
