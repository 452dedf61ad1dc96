"""Evaluating a Check on one machine: poll the probe until met or out of time.

A condition counts as met once it has held for `stable_for` (so a passing
glance at a flapping state is not a success); it must first become true
within `within`. A machine's probes poll a quarter second apart, so a
condition is seen well within a second of becoming true; cluster probes poll
every 5 to 10 s (each poll is API requests to a control plane with little
CPU to spare under TCG), except that a reading may ask to be taken again
sooner (`Reading.again_in`: a proof whose pods are not running yet).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from .. import signals
from ..probes import Context, Probe, Reading, make
from ..probes.facts import numeric
from .checker import parse_range
from ..model import NOT_SET, Check

POLL = 0.25


@dataclass(frozen=True)
class Outcome:
    met: bool
    reading: Reading
    matched: str
    after: float  # seconds from the start of evaluation to first met (or to giving up)
    at: float  # wall clock (epoch) of that moment
    polls: int
    command: str
    exit_code: int | None


def applies(check: Check, facts: dict) -> bool:
    """Whether the machine's versions fall in the check's version ranges."""
    return in_ranges(check.versions, facts)


def in_ranges(versions: dict, facts: dict) -> bool:
    """Whether the machine's versions fall in every range of `versions` ({} holds everywhere)."""
    for component, text in versions.items():
        have = numeric(facts.get(component, ""))
        if not have:
            return False
        for op, want in parse_range(text) or []:
            a, b = have + (0,) * (3 - len(have)), want + (0,) * (3 - len(want))
            if not {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]:
                return False
    return True


def _same(value, wanted) -> bool:
    if type(value) is type(wanted) or value is None or wanted is None:
        return value == wanted
    if isinstance(value, (list, dict)) or isinstance(wanted, (list, dict)):
        return value == wanted
    return str(value).lower() == str(wanted).lower()


def _line_of(text: str, m: re.Match) -> str:
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    return text[start:] if end < 0 else text[start:end]


def match(check: Check, reading: Reading) -> tuple[bool, str]:
    """(met, the verbatim line or value that decided it)."""
    text = reading.text or ""
    if check.pattern is not None:
        m = re.search(check.pattern, text, re.M)
        return (True, _line_of(text, m)) if m else (False, "")
    if check.absent is not None:
        m = re.search(check.absent, text, re.M)
        return (False, _line_of(text, m)) if m else (True, "")
    if check.count is not None:
        n = len(re.findall(check.count.pattern, text, re.M))
        ok = n >= check.count.min and (check.count.max is None or n <= check.count.max)
        return ok, f"{n} match(es)"
    if check.equals is not NOT_SET:
        return _same(reading.value, check.equals), _show(reading.value)
    return True, text.strip() or _show(reading.value)  # observe: what was printed is the evidence


def _show(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return "absent" if value is None else str(value)


def evaluate(check: Check, remote, ctx: Context = Context(), clock=time.monotonic, sleep=time.sleep,
             probe: Probe | None = None, wall=time.time, on_poll=None) -> Outcome:
    """`on_poll(polls, reading)`: told after every poll (the progress line of a long wait)."""
    probe = probe or make(check.probe.kind, check.probe.args)
    command = probe.command(ctx)
    start = clock()
    first_true = first_true_wall = None
    polls = 0
    while True:
        reading, exit_code = probe.observe(remote, command)
        signals.raise_if_stopped()  # a library may have swallowed the stop while observing
        polls += 1
        if on_poll:
            on_poll(polls, reading)
        ok, matched = match(check, reading)
        now = clock()
        if ok:
            if first_true is None:
                first_true, first_true_wall = now, wall()
            if now - first_true >= check.stable_for:
                return Outcome(True, reading, matched, first_true - start, first_true_wall, polls, command,
                               exit_code)
        else:
            first_true = None
            if now - start >= check.within:
                return Outcome(False, reading, matched, now - start, wall(), polls, command, exit_code)
        sleep(reading.again_in or probe.poll_interval or POLL)
