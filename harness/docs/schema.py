"""The scenario file's fields, read from the loader itself rather than written down twice.

The loader (harness/scenario/load.py) is code, not a table, so its schema is found by asking it,
the way a user finds it from its messages: for every mapping in the shipped scenarios, an unknown
key is put in and the loader's answer ("unknown key `?`; allowed: ...") names the section's keys;
for every field, a value of no type any field takes is put in and the answer ("found ...; allowed:
...") says what the field takes. A field's default is the value the loader passes on for it when a
file leaves the field out (a Checker that watches its own calls). A field the loader gains shows
up here with no change to this module.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..scenario import checker as checker_module
from ..scenario.imports import substitute, with_imports
from ..scenario.load import validate

UNKNOWN = "x-kubelab-docs-probe"  # a key no section has
_ALLOWED = re.compile(r"; allowed: (.*)$")
_KEYS = re.compile(r"unknown key `" + re.escape(UNKNOWN) + r"`; allowed: (.*?)(?: \(|$)")


def general(path: tuple) -> str:
    """expect[3].probe -> expect[].probe: one entry stands for every entry of a list."""
    out = ""
    for part in path:
        out += "[]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@dataclass
class Field:
    path: str                           # expect[].within
    allowed: set[str] = field(default_factory=set)
    defaults: set[str] = field(default_factory=set)
    required_in: set[str] = field(default_factory=set)   # section paths where the loader requires it
    examples: set[str] = field(default_factory=set)       # scenario files that set it


@dataclass
class Schema:
    sections: dict[str, list[str]] = field(default_factory=dict)   # section path -> keys, loader order
    fields: dict[str, Field] = field(default_factory=dict)
    crashes: list[str] = field(default_factory=list)  # a value the loader raised on instead of naming it

    def field(self, path: str) -> Field:
        return self.fields.setdefault(path, Field(path))


class _Watching(checker_module.Checker):
    """Records the value the loader passes for a field the file does not set: its default."""

    schema: Schema

    def _default(self, value, path) -> None:
        if not _present(self.src.data, path):
            self.schema.field(general(path)).defaults.add(_show(value))

    def mapping(self, value, path, required=(), optional=(), hints=None):
        keys = self.schema.sections.setdefault(general(path), [])
        keys += [k for k in (*required, *optional) if k not in keys]
        for k in required:
            self.schema.field(general(path + (k,))).required_in.add(general(path))
        return super().mapping(value, path, required, optional, hints)

    def integer(self, value, path, low, high=None):
        self._default(value, path)
        return super().integer(value, path, low, high)

    def duration(self, value, path):
        self._default(value, path)
        return super().duration(value, path)

    def target(self, value, path, cluster=False):
        if value is not None:
            self._default(value, path)
        else:
            self._default("@all", path)
        return super().target(value, path, cluster)


def _present(data, path) -> bool:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return False
    return True


def _show(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:g}" if isinstance(value, float) else str(value)
    return str(value)


def _walk(data, path=()):
    """Every (path, value) below a document, mappings and lists included."""
    yield path, data
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _walk(v, path + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _walk(v, path + (i,))


def _set(data, path, value) -> None:
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value


def _problems(src, file: Path, schema: Schema, watch: bool = False) -> list[str]:
    problems: list[str] = []
    try:
        validate(src, file, problems, checker=type("Watching", (_Watching,), {"schema": schema}) if watch
                 else checker_module.Checker)
    except Exception as exc:  # noqa: BLE001 - a loader bug: reported, the reading goes on
        schema.crashes.append(f"{file.name}: {type(exc).__name__}: {exc}")
    return problems


def read(files: list[Path]) -> Schema:
    """The schema as the loader enforces it on these files (the shipped scenarios)."""
    schema = Schema()
    for file in files:
        problems: list[str] = []
        src = with_imports(file, problems)
        if src is None or problems:
            continue
        substitute(src, problems)
        base = src.data
        _problems(src, file, schema, watch=True)  # keys and defaults
        for path, value in list(_walk(base)):
            if not path or not isinstance(path[-1], str):
                continue
            where = general(path)
            schema.field(where).examples.add(file.stem)
            src.data = copy.deepcopy(base)
            _set(src.data, path, _OddValue())
            _allowed(schema, _problems(src, file, schema), path)
            if isinstance(value, dict):
                src.data = copy.deepcopy(base)
                _set(src.data, path + (UNKNOWN,), 1)
                for problem in _problems(src, file, schema):
                    if m := _KEYS.search(problem):
                        keys = schema.sections.setdefault(where, [])
                        keys += [k.strip() for k in m.group(1).split(",") if k.strip() not in keys]
                # a key this file leaves out: what the loader says of it when it is there
                for key in schema.sections.get(where, []):
                    if key not in value:
                        src.data = copy.deepcopy(base)
                        _set(src.data, path + (key,), _OddValue())
                        _allowed(schema, _problems(src, file, schema), path + (key,))
        src.data = base
    return schema


def _allowed(schema: Schema, problems: list[str], path: tuple) -> None:
    """What the loader says a field takes, from its problem at that field."""
    for problem in problems:
        if f": {checker_module.format_path(path)}: " in problem and (m := _ALLOWED.search(problem)):
            schema.field(general(path)).allowed.add(m.group(1))


class _OddValue:
    """Shown as `<odd>` in the loader's "found ..." half; no field takes it."""

    def __repr__(self) -> str:
        return "<odd>"

    def __str__(self) -> str:
        return "<odd>"
