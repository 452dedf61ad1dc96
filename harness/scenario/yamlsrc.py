"""YAML with positions: plain Python data plus the file and line of every field.

Field paths are tuples such as ("faults", 0, "params", "module"); `where()`
finds the closest known position for a path, so a missing key is reported
at its parent's line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

Path_ = tuple


@dataclass
class Source:
    data: object
    positions: dict = field(default_factory=dict)  # path -> (file, line)

    def where(self, path: Path_) -> tuple[str, int]:
        while path not in self.positions and path:
            path = path[:-1]
        return self.positions.get(path, ("?", 0))


class YamlProblem(Exception):
    def __init__(self, file: str, line: int, message: str):
        self.file, self.line, self.message = file, line, message
        super().__init__(f"{file}:{line}: {message}")


def format_path(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def parse(text: str, file: str) -> Source:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        raise YamlProblem(file, line, f"YAML syntax: {exc.problem or exc.context}") from None
    finally:
        loader.dispose()
    source = Source(None, {})
    if node is None:
        return source
    source.data = _convert(node, (), file, source.positions, loader)
    return source


def _convert(node, path, file, positions, loader):
    positions[path] = (file, node.start_mark.line + 1)
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
            out[key] = _convert(value_node, path + (key,), file, positions, loader)
            # a block value starts on the line after its key; problems belong at `key:`
            positions[path + (key,)] = (file, key_node.start_mark.line + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(v, path + (i,), file, positions, loader) for i, v in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


def read(path: Path) -> Source:
    return parse(path.read_text(), str(path))
