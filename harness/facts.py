"""Facts: named values derived from a run's observations (scenario `facts:`).

Pure: (fact definitions, the record's observations) -> {name: value}. A fact
whose observation is missing, gated out by versions, or not met is UNKNOWN,
never a default, so a matrix never shows a value nobody saw.

In a control run of a scenario with faults, a `seconds` fact is NO_FAULT: its clock
starts at a phase boundary (verify starts at the fix), and with no fault injected
there was no fix to time from, so a figure would only look like one.
"""

from __future__ import annotations

import re

from .model import FactDef

UNKNOWN = "unknown"
NO_FAULT = "n/a (control run)"


def _seen(observations: list[dict], check: str) -> list[dict]:
    """The check's evaluations, in run order; not-applicable entries (probe "") left out."""
    return [o for o in observations if o.get("check") == check and o.get("probe")]


def derive_one(fact: FactDef, observations: list[dict], control: bool = False):
    if fact.kind == "cases":
        for check, value in fact.cases:
            if any(o.get("met") is True for o in _seen(observations, check)):
                return value
        return UNKNOWN
    seen = _seen(observations, fact.check)
    met = [o for o in seen if o.get("met") is True]
    if fact.kind == "seconds":
        if control:
            return NO_FAULT
        return round(met[-1]["after"], 1) if met else UNKNOWN
    if fact.kind == "matched":
        if not met:
            return UNKNOWN
        text = met[-1].get("matched") or ""
        if not fact.regex:
            return text or UNKNOWN
        m = re.search(fact.regex, text)
        return m.group(1) if m else UNKNOWN
    if not seen or seen[-1].get("met") is False:
        return UNKNOWN
    return seen[-1].get("value", UNKNOWN)


def derive(facts: tuple[FactDef, ...], observations: list[dict], control: bool = False) -> dict:
    """control: a control run of a scenario that has faults (seconds facts are NO_FAULT)."""
    return {f.name: derive_one(f, observations, control) for f in facts}
