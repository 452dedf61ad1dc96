"""Declared parameters of faults and probes, checked before any machine exists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_TYPE_NAMES = {str: "a string", int: "an integer", bool: "true or false", float: "a number"}


@dataclass(frozen=True)
class Param:
    type: type
    required: bool = True
    default: Any = None
    help: str = ""
    choices: tuple = ()

    def problem(self, value) -> str | None:
        """Why `value` is not acceptable, or None."""
        ok = isinstance(value, self.type) and not (self.type is int and isinstance(value, bool))
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            return f"found {value!r}; allowed: {_TYPE_NAMES.get(self.type, self.type.__name__)}"
        if self.choices and value not in self.choices:
            return f"found {value!r}; allowed: {', '.join(repr(c) for c in self.choices)}"
        return None


def resolve(spec: dict[str, Param], given: dict) -> dict:
    """Defaults filled in; assumes `given` was validated."""
    return {name: given.get(name, p.default) for name, p in spec.items()}
