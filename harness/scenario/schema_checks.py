"""The check sections: expect, verify (with its `layers:` entries) and observe, and
the claim ids a check names."""

from __future__ import annotations

from ..model import NOT_SET, Check, Count, InstallDef, ProbeRef
from ..probes import PROBES
from .checker import CLAIM_RE, Checker, read_versions, show

CHECK_MATCHERS = ("pattern", "absent", "count", "equals")
# Where inside the install track an expect/observe check may run instead of in its own phase.
CHECK_POINTS = ("before-cni",)


def _exit_code_like(value) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, str) and value.isdigit())


def _check(c: Checker, raw, path, kind: str) -> Check | None:
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
            for arg in PROBES[pkind].REGEX_ARGS:  # a regex argument is compiled now, not after the install
                if args.get(arg) is not None:
                    c.regex(args[arg], path + ("probe", pkind, arg))
            probe = ProbeRef(pkind, dict(args))
    elif "probe" in m:
        c.bad(path + ("probe",), f"found {show(praw)}; allowed: one probe as `{{kind: {{args}}}}`, kinds: {', '.join(PROBES)}")
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
    versions = read_versions(c, m["versions"], path + ("versions",)) if "versions" in m else {}
    after_reboot = m.get("after_reboot", False)
    if not isinstance(after_reboot, bool):
        c.bad(path + ("after_reboot",), f"found {show(after_reboot)}; allowed: true or false")
    source = m.get("source", "")
    if source and not isinstance(source, str):
        c.bad(path + ("source",), f"found {show(source)}; allowed: a citation string (upstream file and version)")
    if c.linting and probe is not None and PROBES[probe.kind].UPSTREAM_TEXT and not source:
        for key in ("pattern", "absent", "count"):
            if key in m:
                c.bad(path + (key,), f"`{key}` matches the text probe `{probe.kind}` reads (a component's log, "
                                     "output or file), and the check names no `source:`; cite the upstream file "
                                     "and version that text comes from (or, for text kubelab's own command "
                                     "prints, `source: \"kubelab: ...\"` saying which)")
    at = m.get("at", "")
    if at and (kind not in ("expect", "observe") or at not in CHECK_POINTS):
        c.bad(path + ("at",), f"found {show(at)}; allowed: {', '.join(CHECK_POINTS)} (in expect and observe)")
    if probe is not None and probe.kind == "command" and "equals" in m and not _exit_code_like(m["equals"]):
        # `command` reads the exit code as its value; a text here could never (or always) match
        c.bad(path + ("equals",), f"found {show(m['equals'])}; a `command` probe's value is its exit code "
                                  "(an integer); match its output with `pattern`")
    claims = _claim_ids(c, m.get("claims"), path + ("claims",))
    if name is None or probe is None:
        return None
    reads = PROBES[probe.kind].target  # machine, cluster or host
    default_target = reads if reads in ("cluster", "host") else None
    target = c.target(m.get("target", default_target), path + ("target",), cluster=True)
    placed = target if target in ("cluster", "host") else "machine"
    if placed != reads:
        c.bad(path + ("target",), f"found {target!r}; allowed: " + {
            "cluster": f"`cluster` (probe `{probe.kind}` reads the cluster's API)",
            "host": f"`host` (probe `{probe.kind}` reads what the run's host steps recorded)",
            "machine": f"a machine selector (probe `{probe.kind}` runs on machines)"}[reads])
    return Check(name=name, probe=probe, target=target, at=str(at or ""),
                 pattern=m.get("pattern"), absent=m.get("absent"), count=count,
                 equals=m.get("equals", NOT_SET), within=within, stable_for=stable_for, versions=versions,
                 after_reboot=bool(after_reboot), source=str(source or ""), claims=claims)


def _claim_ids(c: Checker, raw, path) -> tuple[str, ...]:
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


def read_checks(c: Checker, raw, path, kind: str, items=None) -> tuple[Check, ...]:
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


def read_verify(c: Checker, raw, install: InstallDef) -> tuple[tuple[Check, ...], tuple[str, ...]]:
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
        if not install.installs_kubernetes:
            c.bad(("verify", i, "layers"), "the layers check a Kubernetes cluster; this scenario installs none "
                                           "(`install.track: none`)")
    return read_checks(c, raw, ("verify",), "verify", checks), tuple(n for n in layers_of.LAYERS if n in layers)
