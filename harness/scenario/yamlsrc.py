"""YAML with positions: plain Python data plus the file and line of every field.

Field paths are tuples such as ("faults", 0, "params", "module"); `where()`
finds the closest known position for a path, so a missing key is reported
at its parent's line.

What is accepted is bounded, so a file that is not what it claims to be is
refused with its name and line, never a traceback or a hang: at most
MAX_BYTES of UTF-8 text, MAX_ALIASES alias uses, MAX_NODES nodes once
aliases are expanded ("billion laughs"), MAX_DEPTH levels of nesting, and no
alias that contains itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..errors import YamlProblem

Path_ = tuple
MAX_BYTES = 256 * 1024
MAX_ALIASES = 100
MAX_NODES = 20_000
MAX_DEPTH = 64


@dataclass
class Source:
    data: object
    positions: dict = field(default_factory=dict)  # path -> (file, line)

    def where(self, path: Path_) -> tuple[str, int]:
        while path not in self.positions and path:
            path = path[:-1]
        return self.positions.get(path, ("?", 0))


def format_path(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


class _Budget:
    """Counts what a document expands to while it is converted."""

    def __init__(self, file: str):
        self.file = file
        self.nodes = 0
        self.seen: set[int] = set()
        self.aliases = 0
        self.open: set[int] = set()  # nodes being converted: one met again is a cycle

    def enter(self, node, path) -> None:
        line = node.start_mark.line + 1
        if id(node) in self.open:
            raise YamlProblem(self.file, line, f"{format_path(path)}: an alias refers to a node that contains it "
                                               "(a recursive structure is not a scenario)")
        if id(node) in self.seen and isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise YamlProblem(self.file, line, f"more than {MAX_ALIASES} alias uses; write the values out")
        self.seen.add(id(node))
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise YamlProblem(self.file, line, f"the document expands to more than {MAX_NODES} values "
                                               "(aliases inside aliases?); a scenario is far smaller")
        if len(path) > MAX_DEPTH:
            raise YamlProblem(self.file, line, f"{format_path(path[:3])}...: nested more than {MAX_DEPTH} levels deep")


def parse(text: str, file: str) -> Source:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        raise YamlProblem(file, line, f"YAML syntax: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise YamlProblem(file, 0, f"not YAML: {exc}") from None
    finally:
        loader.dispose()
    source = Source(None, {})
    if node is None:
        return source
    source.data = _convert(node, (), file, source.positions, loader, _Budget(file))
    return source


def _convert(node, path, file, positions, loader, budget: _Budget):
    budget.enter(node, path)
    positions[path] = (file, node.start_mark.line + 1)
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
        budget.open.add(id(node))
        try:
            return _convert_collection(node, path, file, positions, loader, budget)
        finally:
            budget.open.discard(id(node))
    return loader.construct_object(node, deep=True)


def _convert_collection(node, path, file, positions, loader, budget):
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node)
            if not isinstance(key, str):
                raise YamlProblem(file, key_node.start_mark.line + 1,
                                  f"{format_path(path)}: keys must be strings, found {key!r}")
            if key in out:
                raise YamlProblem(file, key_node.start_mark.line + 1,
                                  f"{format_path(path + (key,))}: duplicate key `{key}`")
            out[key] = _convert(value_node, path + (key,), file, positions, loader, budget)
            # a block value starts on the line after its key; problems belong at `key:`
            positions[path + (key,)] = (file, key_node.start_mark.line + 1)
        return out
    return [_convert(v, path + (i,), file, positions, loader, budget) for i, v in enumerate(node.value)]


def read(path: Path) -> Source:
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise YamlProblem(str(path), 0, f"{size} bytes; a scenario file is at most {MAX_BYTES} (is this the right file?)")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise YamlProblem(str(path), line, f"not UTF-8 text (byte {exc.start}: {raw[exc.start:exc.start + 1]!r}); "
                                           "scenario files are UTF-8 YAML") from None
    return parse(text, str(path))
