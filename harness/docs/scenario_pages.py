"""A page per scenario, written from its file as the loader reads it: summary, claims, the lab,
the faults armed and what proves they took, each check with its upstream source, the recovery,
the version gates, and the committed books' evidence for its claims (a snippet include, so the
page changes only where the book's evidence did)."""

from __future__ import annotations

from pathlib import Path

from ..faults import FAULTS
from ..model import NOT_SET, Check, Scenario
from ..evidence.book_render import code
from .text import cell

BOOKS = "books"  # under docs/: the example course's evidence books, as the book writes them


def _gate(versions: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in versions.items())


def _matcher(c: Check) -> str:
    if c.pattern is not None:
        return f"matches {code(c.pattern)}"
    if c.absent is not None:
        return f"does not match {code(c.absent)}"
    if c.count is not None:
        high = f"..{c.count.max}" if c.count.max is not None else "+"
        return f"{c.count.min}{high} lines match {code(c.count.pattern)}"
    if c.equals is not NOT_SET:
        return f"equals {code(_yaml(c.equals))}"
    return "recorded"


def _yaml(value) -> str:
    """A value as the scenario file writes it."""
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if isinstance(value, str) else str(value)


def _probe(c: Check) -> str:
    args = ", ".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in c.probe.args.items())
    return code(f"{c.probe.kind}" + (f" {{{args}}}" if args else ""))


def _timing(c: Check) -> str:
    parts = [f"within {c.within:g} s" if c.within else "", f"stable for {c.stable_for:g} s" if c.stable_for else ""]
    return ", ".join(p for p in parts if p)


def _checks(title: str, checks: tuple[Check, ...], intro: str) -> list[str]:
    """A check a list item: its name and claims, what it reads where, what it expects and when,
    and the source of the text it matches (a list, not a table: regular expressions are long)."""
    if not checks:
        return []
    lines = [f"## {title}", "", intro, ""]
    for c in checks:
        when = "; ".join(p for p in (_timing(c), _gate(c.versions), "after the reboot" if c.after_reboot else "",
                                     f"at {c.at}" if c.at else "") if p)
        claims = f" ({', '.join(c.claims)})" if c.claims else ""
        lines.append(f"- **`{c.name}`**{claims}: {_probe(c)} on {code(c.target)} {_matcher(c)}"
                     + (f"; {when}" if when else "") + "." + ("  " if c.source else ""))  # a line break
        if c.source:
            lines.append(f"    Source: {' '.join(c.source.split())}")
    return lines + [""]


def _faults(s: Scenario) -> list[str]:
    if not s.faults:
        return []
    lines = ["## Faults", ""]
    for f in s.faults:
        fault = FAULTS[f.kind]({**f.params}, {})
        lines += [f"### `{f.kind}` on {code(f.target)}, {f.phase}", "", cell(fault.summary), ""]
        if f.params:
            lines += ["Parameters: " + ", ".join(f"`{k}`: {code(v)}" for k, v in f.params.items()), ""]
        lines += ["It takes when (armed checks; a run whose armed check fails ends INFRA, never as a verdict):", ""]
        try:
            armed, recovery = fault.armed_checks(), fault.recover()
        except KeyError:  # it reads the machine's facts (containerd's config path, say): shown by a dry-run
            lines += ["Its commands depend on the machine (read at run time): `invoke scenario "
                      f"{s.name} --dry-run` prints them.", ""]
            continue
        lines += [f"- {cell(c.name)}: {_probe(c)} {_matcher(c)}" for c in armed] + [""]
        lines += ["Its own recovery (`recover_faults: true`):", "", "```sh", *recovery, "```", ""]
    return lines


def _recover(s: Scenario) -> list[str]:
    if not s.recover:
        return []
    lines = ["## Recovery", "", "| step | on | does | when |", "|---|---|---|---|"]
    for step in s.recover:
        does = {"run": code(step.run or ""), "reboot": "reboot and wait", "recover-faults": "each fault's own recovery",
                "reinstall": "install again from scratch" + (f" with {step.networks}" if step.networks else ""),
                "power-cycle": "power off and on" + (f", kernel arguments {code(step.kernel_args)}"
                                                      if step.kernel_args else "")}.get(step.action, step.action)
        lines.append(f"| `{step.name}` | {code(step.target)} | {does} | {cell(_gate(step.versions))} |")
    return lines + [""]


def _install(s: Scenario) -> str:
    i = s.install
    if not i.installs_kubernetes:
        return "no Kubernetes (`install.track: none`)"
    return f"{i.track}, Kubernetes {i.kubernetes}, pods {i.pod_cidr}, Services {i.service_cidr}, CNI {i.cni}"


def evidence(s: Scenario, snippets: dict[str, str]) -> list[str]:
    """The books' snippet of each claim the scenario proves: {claim id: path under docs/}."""
    shown = [c for c in s.claims if c in snippets]
    if not shown:
        return []
    lines = ["## Evidence", "", "From the example course's evidence book, built on real guests "
             "([how](../evidence-book.md)); the lines are the runs' own.", ""]
    for claim in shown:  # the heading is the claim's anchor (#k8), which README and the books page link
        lines += [f"### {claim}", "", f'--8<-- "{snippets[claim]}"', ""]
    return lines


def evidence_pages(scenarios: list[Scenario], snippets: dict[str, str]) -> dict[str, str]:
    """{claim id: the first scenario whose page shows that claim's evidence}."""
    out: dict[str, str] = {}
    for s in scenarios:
        for claim in s.claims:
            if claim in snippets:
                out.setdefault(claim, s.name)
    return out


def claim_anchor(claim: str) -> str:
    return claim.lower()


def page(s: Scenario, snippets: dict[str, str]) -> str:
    machines = ", ".join(f"{m.name} ({m.role}, {m.cpus} vCPU, {m.memory} MiB)" for m in s.lab.machines)
    lines = [f"# {s.name}", "", cell(s.summary), "",
             f"- **Claims:** {', '.join(s.claims) or 'none'}",
             f"- **Lab:** Debian {s.lab.suite}: {machines}" + (f"; containerd {s.lab.containerd} built from source"
                                                               if s.lab.containerd else ""),
             f"- **Install:** {_install(s)}",
             f"- **Verify layers:** {', '.join(s.verify_layers) or 'none'}",
             f"- **File:** `scenarios/{Path(s.source_file).name}`; run it: `invoke scenario {s.name}`", ""]
    lines += _faults(s)
    lines += _checks("What the fault looks like (expect)", s.expect, "Each must hold while the fault is in place.")
    lines += _recover(s)
    lines += _checks("Proof of the recovery (verify)", s.verify, "Each must hold after the recovery.")
    lines += _checks("Recorded (observe)", s.observe, "Read and recorded, never asserted.")
    if s.facts:
        lines += ["## Facts", "", "| fact | from |", "|---|---|"]
        lines += [f"| `{f.name}` | {f.kind} of {', '.join(f'`{c}`' for c in f.checks())} |" for f in s.facts] + [""]
    lines += evidence(s, snippets)
    return "\n".join(lines).rstrip() + "\n"


def index(scenarios: list[Scenario]) -> str:
    lines = ["# Scenarios", "", "Every scenario under `scenarios/`, a page each, written from the file.", "",
             "| scenario | claims | install | summary |", "|---|---|---|---|"]
    for s in scenarios:
        lines.append(f"| [{s.name}]({s.name}.md) | {', '.join(s.claims)} | {s.install.track} | {cell(s.summary)} |")
    return "\n".join(lines) + "\n"


def first_sentence(text: str) -> str:
    """The summary's first sentence: up to the first full stop that ends a word before a space."""
    text = " ".join(text.split())
    for i, ch in enumerate(text):
        if ch == "." and (i + 1 == len(text) or text[i + 1] == " ") and i > 0 and text[i - 1].isalnum():
            return text[:i + 1]
    return text


def readme_table(scenarios: list[Scenario], snippets: dict[str, str] | None = None) -> str:
    """README's table: a line per scenario, linking its page, and each claim it proves to the
    evidence on that page when a committed book holds it."""
    snippets = snippets or {}
    lines = ["| scenario | claims | what it proves |", "|---|---|---|"]
    for s in scenarios:
        claims = ", ".join(f"[{c}](docs/scenarios/{s.name}.md#{claim_anchor(c)})" if c in snippets else c
                           for c in s.claims)
        lines.append(f"| [{s.name}](docs/scenarios/{s.name}.md) | {claims} | "
                     f"{cell(first_sentence(s.summary))} |")
    return "\n".join(lines) + "\n"
