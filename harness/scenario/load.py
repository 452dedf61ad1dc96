"""Scenario files -> validated Scenario, or every problem at once.

Order: parse (with positions) -> imports (deep merge, the importing file
wins) -> variables (`{{ vars.NAME }}`) -> strict validation -> model. Each
problem reads `file:line: field.path: found X; allowed: Y`. Unknown keys are
errors. Nothing here touches a machine.

Parsing is yamlsrc.py; imports and variables, imports.py; validation, the section
readers (schema_*.py, install_rules.py) on checker.py's Checker; the lab-network
warnings, overlap.py. This module runs them in that order.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..errors import ScenarioError
from ..model import API_VERSION, CLUSTER, FAULT_PHASES, HOST, KIND, Scenario
from ..tracks import TRACKS, track_of
from .checker import Checker, show
from .imports import substitute, with_imports
from .install_rules import read_install
from .overlap import overlap_warnings
from .schema_checks import read_checks, read_verify
from .schema_lab import read_lab
from .schema_records import read_evidence, read_facts
from .schema_steps import read_faults, read_steps
from .yamlsrc import Source


def _tracks(can: str) -> str:
    """The names of the tracks that can do something (`reinstalls`), for a problem's text."""
    return " or ".join(n for n, t in TRACKS.items() if getattr(t, can))


def _play_again(track) -> str:
    return ("add a recovery step `reinstall: true` (the play again)" if track.reinstalls
            else "and this track cannot reinstall")


def validate(src: Source, path: Path, problems: list[str], claim_ids: set | None = None,
             claim_files: str = "", checker: type[Checker] = Checker) -> Scenario | None:
    """claim_ids: the ids the claims files define (lint); None leaves checks' `claims:` ids unchecked.
    checker: a Checker that also watches what it is asked (the docs read the schema so)."""
    before = len(problems)
    c = checker(src, problems)
    c.claim_ids, c.claim_files = claim_ids, claim_files
    c.linting = claim_ids is not None  # lint passes the ids (maybe none); a run passes None
    top = c.mapping(src.data, (), required=("apiVersion", "kind", "name", "summary", "lab"),
                    optional=("install", "faults", "expect", "recover", "verify", "observe", "evidence", "facts",
                              "ci"),
                    hints={"claims": "a claim id goes on the checks that prove it (`claims: [K8]` on an expect, "
                                     "verify or observe check); the scenario's list is derived from them"})
    if top is None:
        return None
    if "apiVersion" in top and top["apiVersion"] != API_VERSION:
        c.bad(("apiVersion",), f"found {show(top['apiVersion'])}; allowed: {API_VERSION}")
    if "kind" in top and top["kind"] != KIND:
        c.bad(("kind",), f"found {show(top['kind'])}; allowed: {KIND}")
    name = c.name(top.get("name"), ("name",)) if "name" in top else None
    if name and name != path.stem:
        c.bad(("name",), f"found {name!r}; allowed: {path.stem!r} (the name must match the file name)")
    summary = c.string(top.get("summary"), ("summary",)) if "summary" in top else None
    lab = read_lab(c, top.get("lab"), ("lab",)) if "lab" in top else None
    install = read_install(c, top.get("install"), ("install",), lab)
    track = track_of(install)  # read_install gives an implemented track, or none
    faults = read_faults(c, top.get("faults"), ("faults",))
    expect = read_checks(c, top.get("expect"), ("expect",), "expect")
    recover = read_steps(c, top.get("recover"), ("recover",))
    verify, verify_layers = read_verify(c, top.get("verify"), install)
    observe = read_checks(c, top.get("observe"), ("observe",), "observe")
    evidence = read_evidence(c, top.get("evidence"), ("evidence",))
    facts = read_facts(c, top.get("facts"), ("facts",), {x.name for x in expect + verify + observe})
    for i, f in enumerate(faults):
        if f.phase in FAULT_PHASES[1:] and not track.arms_inside_install:
            c.bad(("faults", i, "phase"), f"found {f.phase!r}; allowed without the {_tracks('arms_inside_install')} "
                                          "track: before-install")
    reinstalled = track.reinstalls and any(s.action == "reinstall" for s in recover)
    for section, checks in (("expect", expect), ("verify", verify), ("observe", observe)):
        raw = top.get(section) if isinstance(top.get(section), list) else []
        for chk in checks:
            # the entry's own index in the file (verify's list holds layers too)
            i = next((j for j, item in enumerate(raw) if isinstance(item, dict) and item.get("name") == chk.name), 0)
            if chk.at and not track.arms_inside_install:
                c.bad((section, i, "at"), f"found {chk.at!r}; points inside the install exist only on the "
                                          f"{_tracks('arms_inside_install')} track")
            # observe runs before the recovery too (plan.py), when a stopped play left no cluster
            if install.play_fails and chk.target == CLUSTER and section in ("expect", "observe"):
                c.bad((section, i, "target"), "a play the fault stops (`install.play_fails`) leaves no cluster to "
                                              "check before the recovery; check the host's play or the machines")
            elif install.play_fails and chk.target == CLUSTER and not reinstalled:
                c.bad((section, i, "target"), "a play the fault stops (`install.play_fails`) leaves no cluster to "
                                              f"check; {_play_again(track)}")
            if chk.target == HOST and not track.records_plays:
                c.bad((section, i, "probe"), f"probe `{chk.probe.kind}` reads the plays of the "
                                             f"{_tracks('records_plays')} track; this scenario installs with "
                                             f"`{install.track}`")
    if install.play_fails and verify_layers and not reinstalled:
        c.bad(("verify",), f"a play the fault stops (`install.play_fails`) leaves no cluster for the verify layers; "
                           f"{_play_again(track)}")
    if faults and not expect and not top.get("expect"):
        c.bad(("expect",), "a scenario with faults needs at least one expectation (what the fault looks like)")
    raw_recover = top.get("recover") if isinstance(top.get("recover"), list) else []
    if faults and not install.repairs_faults and \
            not any(isinstance(s, dict) and ("run" in s or "recover_faults" in s) for s in raw_recover):
        c.bad(("recover",), "a scenario with faults needs a recovery: a `run` step or `recover_faults: true` "
                            "(or `install.repairs_faults: true`, where the install is to undo them itself)")
    if install.repairs_faults and (not faults or raw_recover):
        c.bad(("install", "repairs_faults"), "says the install undoes the faults itself: give faults, and no "
                                             "`recover` section")
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
        if not track.reinstalls:
            names = _tracks("reinstalls")
            c.bad(("recover", i, "reinstall"), f"allowed only with a track that reinstalls ({names}); this "
                                               f"scenario's is `{install.track}`")
        elif recover[i].networks and not track.reinstall_takes_ranges:
            c.bad(("recover", i, "reinstall"), f"the {track.name} track reinstalls with the install section's ranges; "
                                               "other pod_cidr/service_cidr here are not supported yet")
    ci = top.get("ci", False)
    if not isinstance(ci, bool):
        c.bad(("ci",), f"found {show(ci)}; allowed: true or false")
    elif ci and install.track == "none":
        c.bad(("ci",), "CI runs every host scenario already; `ci` chooses among the scenarios that install "
                       "Kubernetes (leave it out)")
    if len(problems) > before or lab is None or name is None or summary is None:
        return None
    claims = tuple(dict.fromkeys(claim for chk in expect + verify + observe for claim in chk.claims))
    return Scenario(name=name, summary=summary, lab=lab, install=install, claims=claims, faults=faults,
                    expect=expect, recover=recover, verify=verify, verify_layers=verify_layers, observe=observe,
                    evidence=evidence, facts=facts, ci=ci is True,
                    warnings=tuple(overlap_warnings(c, lab, install, recover)),
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
    src = with_imports(path, problems)
    if src is None or len(problems) > before:
        return None
    substitute(src, problems)
    if len(problems) > before:
        return None
    return validate(src, path, problems, claim_ids, claim_files)
