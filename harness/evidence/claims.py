"""Claims files: the sentences of a course's notes, and the scenario checks that prove them.

A claims file (YAML, `kind: Claims`) names its chapters and, per claim, its id,
the sentence as the notes say it, its chapter, and `proven_by`: the scenarios
whose checks prove it. `- scenario: S` means the checks of S tagged with the
claim (`claims: [K8]` on the check); `checks: [...]` names them instead (an
author proving a claim of their own with a scenario they did not write), or
names a finding of one of the scenario's verify layers as the run records it,
`<layer>: <check>` (`etcd: host unit on cp1`): a finding that asserts decides
like a check, one that records a fact is quoted.
`suites` and `kubernetes` say which versions the claim is about (a version
pivot in the book). `facts` are the scenario facts the sentence quotes, with
what the notes say of them. A claim nothing here can prove yet says so:
`proven_by: []` with `unproven: why`.

Every problem of every file is reported at once, with file and line, before
anything runs. A tag on a check must point back: a check tagged K8 in a
scenario K8's `proven_by` does not cite would be a label nothing reads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ClaimsError, HarnessError, YamlProblem
from ..model import API_VERSION, Scenario
from ..paths import project_root
from ..scenario.checker import CLAIM_RE
from ..scenario.checker import show as _show
from ..scenario.yamlsrc import Source, format_path, read

KIND = "Claims"
TOP_KEYS = ("apiVersion", "kind", "course", "chapters", "claims")
CLAIM_KEYS = ("id", "chapter", "says", "proven_by", "facts", "unproven")
PROOF_KEYS = ("scenario", "checks", "suites", "kubernetes")
FACT_KEYS = ("scenario", "fact", "notes_say", "state")
CHECK_KINDS = ("expect", "verify", "observe")


@dataclass(frozen=True)
class Proof:
    scenario: str
    checks: tuple[str, ...] = ()  # resolved: the checks of `scenario` that prove the claim
    suites: tuple[str, ...] = ()  # () = the scenario's own suite
    kubernetes: tuple[str, ...] = ()  # () = the scenario's own release (kubeadm scenarios)


@dataclass(frozen=True)
class FactRef:
    scenario: str
    fact: str
    notes_say: str = ""  # what the notes state of it ("about 74 s"), shown beside the measurement
    state: tuple[str, ...] = ()  # facts of the same run that explain the value (restarts at the fix)


@dataclass(frozen=True)
class Claim:
    id: str
    chapter: str
    says: str
    proofs: tuple[Proof, ...] = ()
    facts: tuple[FactRef, ...] = ()
    unproven: str = ""  # why nothing proves it here (with proven_by: [])
    where: str = ""  # file:line of its `id:`


@dataclass(frozen=True)
class ClaimSet:
    files: tuple[str, ...]
    course: str
    chapters: dict  # id -> title, in file order
    claims: tuple[Claim, ...]
    scenarios: dict = field(default_factory=dict)  # name -> Scenario, every one a claim cites

    def select(self, chapters: tuple[str, ...] = ()) -> tuple[Claim, ...]:
        return tuple(c for c in self.claims if not chapters or c.chapter in chapters)


def claims_dir() -> Path:
    return Path(os.environ.get("KUBELAB_CLAIMS", project_root() / "claims"))


def all_files() -> list[Path]:
    return sorted(claims_dir().glob("*.yaml"))


class _File:
    """One claims file's problems, each at its line."""

    def __init__(self, src: Source, problems: list[str]):
        self.src, self.problems = src, problems

    def where(self, path) -> str:
        file, line = self.src.where(path)
        return f"{file}:{line}"

    def bad(self, path, message: str) -> None:
        self.problems.append(f"{self.where(path)}: {format_path(path)}: {message}")

    def mapping(self, value, path, required: tuple, optional: tuple = ()) -> dict:
        allowed = ", ".join(required + optional)
        if not isinstance(value, dict):
            self.bad(path, f"found {_show(value)}; allowed: a mapping with keys {allowed}")
            return {}
        for key in value:
            if key not in required + optional:
                self.bad(path + (key,), f"unknown key `{key}`; allowed: {allowed}")
        for key in required:
            if key not in value:
                self.bad(path, f"missing required key `{key}`")
        return value

    def strings(self, value, path, what: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
            self.bad(path, f"found {_show(value)}; allowed: a list of {what}")
            return ()
        return tuple(str(v) for v in value)

    def text(self, value, path, what: str) -> str:
        if not isinstance(value, str) or not value.strip():
            self.bad(path, f"found {_show(value)}; allowed: {what}")
            return ""
        return " ".join(value.split())


def _scenario(name: str, cache: dict, problems: list[str]) -> Scenario | None:
    """A cited scenario, loaded once; its own problems join the list (None: missing or broken)."""
    from ..scenario.files import find
    from ..scenario.load import load_into

    if name not in cache:
        try:
            path = find(name)
        except HarnessError:
            cache[name] = None
            return None
        cache[name] = load_into(path, problems)
        if cache[name] is None:
            cache[name] = False  # exists, with problems
    return cache[name] or None


def _check_kinds(scenario: Scenario) -> dict[str, str]:
    """check name -> expect | verify | observe (the first section that has it)."""
    out: dict[str, str] = {}
    for kind in CHECK_KINDS:
        for chk in getattr(scenario, kind):
            out.setdefault(chk.name, kind)
    return out


def _proof(f: _File, raw, path, claim_id: str, cache: dict) -> Proof | None:
    from ..artifacts.versions import KubeVersion
    from ..images.recipe import SUITES
    from ..scenario.files import scenarios_dir

    m = f.mapping(raw, path, ("scenario",), PROOF_KEYS[1:])
    name = f.text(m.get("scenario"), path + ("scenario",), "a scenario name") if "scenario" in m else ""
    suites = f.strings(m["suites"], path + ("suites",), "suites") if "suites" in m else ()
    for i, s in enumerate(suites):
        if s not in SUITES:
            f.bad(path + ("suites", i), f"found {s!r}; allowed: {', '.join(SUITES)}")
    releases = f.strings(m["kubernetes"], path + ("kubernetes",), "Kubernetes releases") if "kubernetes" in m else ()
    for i, v in enumerate(releases):
        try:
            KubeVersion.parse(v).check_supported()
        except HarnessError as exc:
            f.bad(path + ("kubernetes", i), f"found {v!r}; {str(exc).split(': ', 1)[-1]}")
    named = f.strings(m["checks"], path + ("checks",), "check names") if "checks" in m else None
    if not name:
        return None
    scenario = _scenario(name, cache, f.problems)
    if scenario is None:
        if cache.get(name) is False:
            f.bad(path + ("scenario",), f"scenario {name} has problems (listed with its file); fix them first")
        else:
            known = ", ".join(sorted(p.stem for p in scenarios_dir().glob("*.yaml"))) or "none"
            f.bad(path + ("scenario",), f"found {name!r}; no scenario by that name; scenarios: {known}")
        return None
    if releases and not scenario.install.installs_kubernetes:
        f.bad(path + ("kubernetes",), f"scenario {name} installs no Kubernetes (install track none); leave out "
                                      "`kubernetes`")
    kinds = _check_kinds(scenario)
    if named is not None:
        for i, check in enumerate(named):
            if check not in kinds and not _layer_finding(scenario, check):
                layers = ("; or a finding of its verify layers as `<layer>: <check>` "
                          f"({', '.join(scenario.verify_layers)})" if scenario.verify_layers else "")
                f.bad(path + ("checks", i), f"found {check!r}; scenario {name} has no such check; its checks: "
                                            + (", ".join(kinds) or "none") + layers)
        checks = tuple(c for c in named if c in kinds or _layer_finding(scenario, c))
    else:
        checks = tuple(c for c, _ in _tagged(scenario, claim_id))
        if not checks:
            f.bad(path + ("scenario",), f"no check of scenario {name} is tagged `claims: [{claim_id}]`; tag the "
                                        "checks that prove it, or name them here with `checks: [...]`")
    return Proof(name, checks, suites, releases)


def _layer_finding(scenario: Scenario, check: str) -> bool:
    """`<layer>: <check>` of a layer the scenario runs: what a finding is named in its run record
    (evidence/record.py); which checks a layer makes depends on the cluster, so the name is taken
    as written and the book says when no run recorded it."""
    layer, sep, rest = check.partition(": ")
    return bool(sep and rest.strip()) and layer in scenario.verify_layers


def _tagged(scenario: Scenario, claim_id: str) -> list[tuple[str, str]]:
    return [(chk.name, kind) for kind in CHECK_KINDS for chk in getattr(scenario, kind) if claim_id in chk.claims]


def _claim(f: _File, raw, path, chapters: dict, cache: dict) -> Claim | None:
    m = f.mapping(raw, path, ("id", "chapter", "says", "proven_by"), CLAIM_KEYS[4:])
    cid = m.get("id")
    if "id" in m and (not isinstance(cid, str) or not CLAIM_RE.match(cid)):
        f.bad(path + ("id",), f"found {_show(cid)}; allowed: an id like K8 or NET3 (a letter, then letters, "
                              "digits, - and _; at most 32)")
        cid = None
    chapter = m.get("chapter")
    if "chapter" in m and chapter not in chapters:
        f.bad(path + ("chapter",), f"found {_show(chapter)}; allowed: a chapter of `chapters:` "
                                   f"({', '.join(chapters) or 'none defined'})")
    says = f.text(m["says"], path + ("says",), "the sentence as the notes say it") if "says" in m else ""
    proofs: list[Proof] = []
    raw_proofs = m.get("proven_by")
    if "proven_by" in m and not isinstance(raw_proofs, list):
        f.bad(path + ("proven_by",), f"found {_show(raw_proofs)}; allowed: a list of {{scenario: NAME}} "
                                     "(or [] with `unproven: why`)")
        raw_proofs = []
    for i, item in enumerate(raw_proofs or []):
        proof = _proof(f, item, path + ("proven_by", i), cid or "?", cache) if cid else None
        if proof:
            proofs.append(proof)
    unproven = m.get("unproven", "")
    if "unproven" in m:
        unproven = f.text(unproven, path + ("unproven",), "why nothing proves the claim here")
    if raw_proofs == [] and "proven_by" in m and not unproven:
        f.bad(path + ("proven_by",), "empty: a claim no check proves needs `unproven: <why>` (say what is missing)")
    if raw_proofs and "unproven" in m:
        f.bad(path + ("unproven",), "allowed only with `proven_by: []` (this claim cites scenarios)")
    if cid and proofs and all(p.checks for p in proofs) and len(proofs) == len(raw_proofs or []):
        asserting = [c for p in proofs for c in p.checks
                     if _check_kinds(cache[p.scenario]).get(c) in ("expect", "verify")
                     or _layer_finding(cache[p.scenario], c)]
        if not asserting:
            f.bad(path + ("proven_by",), "only observe checks: they record and assert nothing; cite at least one "
                                         "expect or verify check")
    facts = []
    raw_facts = m.get("facts") or []
    if not isinstance(raw_facts, list):
        f.bad(path + ("facts",), f"found {_show(raw_facts)}; allowed: a list of {{scenario: S, fact: NAME}}")
        raw_facts = []
    for i, item in enumerate(raw_facts):
        fp = path + ("facts", i)
        fm = f.mapping(item, fp, ("scenario", "fact"), FACT_KEYS[2:])
        scenario, fact = fm.get("scenario"), fm.get("fact")
        if "scenario" in fm and scenario not in [p.scenario for p in proofs]:
            f.bad(fp + ("scenario",), f"found {_show(scenario)}; allowed: a scenario of this claim's proven_by "
                                      f"({', '.join(p.scenario for p in proofs) or 'none'})")
        elif "fact" in fm and cache.get(scenario) and fact not in [x.name for x in cache[scenario].facts]:
            f.bad(fp + ("fact",), f"found {_show(fact)}; scenario {scenario} has facts: "
                                  + (", ".join(x.name for x in cache[scenario].facts) or "none"))
        elif "scenario" in fm and "fact" in fm:
            notes = f.text(fm["notes_say"], fp + ("notes_say",), "what the notes say of it") \
                if "notes_say" in fm else ""
            state = f.strings(fm["state"], fp + ("state",), "fact names") if "state" in fm else ()
            known = [x.name for x in cache[scenario].facts] if cache.get(scenario) else []
            for j, name in enumerate(state):
                if known and name not in known:
                    f.bad(fp + ("state", j), f"found {name!r}; scenario {scenario} has facts: {', '.join(known)}")
            facts.append(FactRef(str(scenario), str(fact), notes, state))
    if not cid or chapter not in chapters or not says:
        return None
    return Claim(cid, str(chapter), says, tuple(proofs), tuple(facts), str(unproven or ""), f.where(path + ("id",)))


def _one_file(path: Path, problems: list[str], cache: dict) -> tuple[str, dict, list[Claim]]:
    try:
        src = read(path)
    except YamlProblem as exc:
        problems.append(str(exc))
        return "", {}, []
    except OSError as exc:
        problems.append(f"{path}:0: cannot read: {exc.strerror}")
        return "", {}, []
    f = _File(src, problems)
    top = f.mapping(src.data, (), ("apiVersion", "kind", "chapters", "claims"), ("course",))
    if "apiVersion" in top and top["apiVersion"] != API_VERSION:
        f.bad(("apiVersion",), f"found {_show(top['apiVersion'])}; allowed: {API_VERSION}")
    if "kind" in top and top["kind"] != KIND:
        f.bad(("kind",), f"found {_show(top['kind'])}; allowed: {KIND}")
    course = f.text(top["course"], ("course",), "the course's title") if "course" in top else ""
    chapters = {}
    if "chapters" in top:
        raw = top["chapters"]
        if not isinstance(raw, dict) or not raw:
            f.bad(("chapters",), f"found {_show(raw)}; allowed: a mapping of chapter ids to titles")
        else:
            for key, title in raw.items():
                chapters[key] = f.text(title, ("chapters", key), "the chapter's title") or key
    claims = []
    raw_claims = top.get("claims")
    if "claims" in top and (not isinstance(raw_claims, list) or not raw_claims):
        f.bad(("claims",), f"found {_show(raw_claims)}; allowed: a non-empty list of claims")
        raw_claims = []
    for i, item in enumerate(raw_claims or []):
        claim = _claim(f, item, ("claims", i), chapters, cache)
        if claim:
            claims.append(claim)
    return course, chapters, claims


def load(paths: list[Path], all_scenarios: bool = False) -> ClaimSet:
    """Every claims file in `paths` as one set, or ClaimsError with every problem.

    all_scenarios: also hold every scenario file's tags to the claims (lint): a check tagged
    with an id defined here must be in a scenario that claim's proven_by cites."""
    problems: list[str] = []
    cache: dict = {}
    course, chapters, claims, seen = "", {}, [], {}
    for path in paths:
        c, chs, cls = _one_file(Path(path), problems, cache)
        course = course or c
        for key, title in chs.items():
            chapters.setdefault(key, title)
        for claim in cls:
            if claim.id in seen:
                problems.append(f"{claim.where}: claims: duplicate claim id `{claim.id}` (first defined at "
                                f"{seen[claim.id]})")
                continue
            seen[claim.id] = claim.where
            claims.append(claim)
    if all_scenarios:
        from ..scenario.files import all_files as scenario_files

        for p in scenario_files():
            _scenario(p.stem, cache, [])  # their own problems are lint's to report, once
    problems += _untied_tags(claims, cache)
    if problems:
        raise ClaimsError(list(dict.fromkeys(problems)))
    used = {p.scenario for c in claims for p in c.proofs}
    return ClaimSet(tuple(str(p) for p in paths), course, chapters, tuple(claims),
                    {n: s for n, s in cache.items() if n in used and s})


def _untied_tags(claims: list[Claim], cache: dict) -> list[str]:
    """A check tagged with a claim defined here, in a scenario that claim does not cite."""
    out = []
    for claim in claims:
        cited = {p.scenario for p in claim.proofs}
        for name, scenario in sorted((n, s) for n, s in cache.items() if s):
            tagged = _tagged(scenario, claim.id)
            if tagged and name not in cited:
                checks = ", ".join(c for c, _ in tagged)
                out.append(f"{claim.where}: claims: {claim.id}: scenario {name} tags check(s) {checks} with "
                           f"`claims: [{claim.id}]`, but {claim.id}'s proven_by does not cite {name}; add "
                           f"`- scenario: {name}`, or remove the tag")
    return out


def defined_ids(paths: list[Path]) -> set[str]:
    """The claim ids the files define, read leniently (lint reports the files' problems itself)."""
    ids = set()
    for path in paths:
        try:
            data = read(Path(path)).data
        except (YamlProblem, OSError):
            continue
        items = data.get("claims") if isinstance(data, dict) else None
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                ids.add(item["id"])
    return ids
