"""Reference pages written from what the code enforces: the scenario file's fields (the loader,
schema.py), the probes and faults (their registries and declared parameters), and the tasks
(their own `--help`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..faults import FAULTS
from ..params import Param
from ..paths import project_root
from ..probes import PROBES
from . import field_help
from .schema import Schema
from ..evidence.book_render import code
from .text import cell

# user data below these, not fields of the file (their own pages list what they take)
_DATA = ("install.variables.", "faults[].params.", ".probe.")


def undocumented(schema: Schema) -> list[str]:
    """Fields the loader takes that have no sentence in field_help."""
    return sorted(p for p in _fields(schema) if field_help.help_for(p) is None)


def _fields(schema: Schema) -> list[str]:
    out = []
    for section, keys in schema.sections.items():
        if any(d in section + "." for d in _DATA):
            continue
        out += [f"{section}.{k}" if section else k for k in keys]
    return out


def scenario_file(schema: Schema) -> str:
    lines = ["# Scenario file reference", "",
             "Every field the loader (`harness/scenario/load.py`) takes, read from the loader itself: the keys each "
             "section allows and what each field takes are the loader's own answers to a wrong value, and a "
             "default is the value it uses when a file leaves the field out. `invoke scenario.lint` checks a file "
             "against exactly this. How to write a scenario: [Writing scenarios](../writing-scenarios.md); probe and "
             "fault parameters: [Probes and faults](probes-and-faults.md).", ""]
    for section, keys in schema.sections.items():
        if any(d in section + "." for d in _DATA):
            continue
        lines += [f"## `{section or '(top level)'}`", "", "| field | required | takes | default | what for |",
                  "|---|---|---|---|---|"]
        for k in keys:
            path = f"{section}.{k}" if section else k
            f = schema.fields.get(path)
            required = "yes" if f and section in f.required_in else ""
            takes = "; ".join(sorted(f.allowed)) if f and f.allowed else "any value"
            default = ", ".join(f"`{d}`" for d in sorted(f.defaults)) if f and f.defaults else ""
            lines.append(f"| `{k}` | {required} | {cell(takes)} | {default} | {cell(field_help.help_for(path) or '')} |")
        lines.append("")
    return "\n".join(lines)


def _param_rows(params: dict[str, Param]) -> list[str]:
    if not params:
        return ["No parameters.", ""]
    rows = ["| parameter | type | required | default | allowed | notes |", "|---|---|---|---|---|---|"]
    for name, p in params.items():
        default = "" if p.required or p.default is None else code(repr(p.default) if isinstance(p.default, str)
                                                                   else str(p.default).lower()
                                                                   if isinstance(p.default, bool) else str(p.default))
        choices = ", ".join(code(repr(c)) for c in p.choices)
        rows.append(f"| `{name}` | {p.type.__name__} | {'yes' if p.required else ''} | {default} | {choices} | "
                    f"{cell(p.help)} |")
    return rows + [""]


def _first_line(doc: str | None) -> str:
    return " ".join((doc or "").strip().split("\n\n")[0].split())


def probes_and_faults() -> str:
    lines = ["# Probes and faults", "",
             "Written from the registries (`harness/probes`, `harness/faults`) and each one's declared parameters.",
             "", "## Probes", "",
             "A probe reads one thing: a command on a machine, the cluster's API, or the host's record of a "
             "kubespray play. A check names one probe (`probe: {KIND: {ARGS}}`).", ""]
    for kind, probe in PROBES.items():
        reads = {"cluster": "the cluster's API", "host": "the play the run recorded"}.get(probe.target, "a machine")
        text = ("text a component or command wrote: a `pattern` on it cites its `source:`" if probe.UPSTREAM_TEXT
                else "a value kubelab reads and formats")
        lines += [f"### `{kind}`", "", f"Reads {reads}; its text is {text}.", ""]
        doc = _first_line(probe.parse.__doc__ if probe.parse.__doc__ else probe.__doc__)
        if doc:
            lines += [doc, ""]
        lines += _param_rows(probe.ARGS)
    lines += ["## Faults", "", "A fault breaks a machine in a known way, proves it took (its armed checks), and "
              "knows its own recovery (`recover_faults: true`).", ""]
    for kind, fault in FAULTS.items():
        lines += [f"### `{kind}`", "", cell(fault.summary), ""] + _param_rows(fault.PARAMS)
    return "\n".join(lines)


def task_names() -> list[str]:
    """Every task of tasks.py, as `invoke --list` names them."""
    out = _invoke("--list")
    names = []
    for line in out.splitlines()[1:]:
        if line.startswith("  ") and not line.startswith("   "):
            names.append(line.split()[0])
    return names


def _invoke(*args: str) -> str:
    env = dict(os.environ, COLUMNS="100")
    proc = subprocess.run([str(Path(sys.executable).with_name("invoke")), *args], cwd=project_root(),
                          capture_output=True, text=True, timeout=120, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"invoke {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return proc.stdout


def tasks() -> str:
    lines = ["# Tasks", "", "Each task's own `invoke --help TASK`, as it prints it.", ""]
    for name in task_names():
        lines += [f"## `invoke {name}`", "", "```text", _invoke("--help", name).rstrip(), "```", ""]
    return "\n".join(lines)
