"""What a scenario keeps: the evidence it collects and the facts it reads off its checks."""

from __future__ import annotations

import re

from ..model import EvidenceDef, FactDef
from .checker import Checker


def read_evidence(c: Checker, raw, path) -> tuple[EvidenceDef, ...]:
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


def read_facts(c: Checker, raw, path, checks: set[str]) -> tuple[FactDef, ...]:
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
