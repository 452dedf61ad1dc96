"""One shell command that prints several things, split back into them.

A layer asks a node for everything it needs in one SSH round trip (each costs
about a second under TCG); `== name` lines mark where each part begins.
"""

from __future__ import annotations


def script(parts: list[tuple[str, str]]) -> str:
    """`echo '== name'; command` for each part, every part run whatever the others did."""
    return "; ".join(f"echo '== {name}'; {{ {command}; }} 2>&1" for name, command in parts)


def split(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("== "):
            current = line[3:].strip()
            out[current] = ""
        elif current is not None:
            out[current] += line + "\n"
    return out
