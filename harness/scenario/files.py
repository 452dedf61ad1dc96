"""Where scenario files live: scenarios/ (or $KUBELAB_SCENARIOS), found by name or by path."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ScenarioError
from ..paths import project_root


def scenarios_dir() -> Path:
    return Path(os.environ.get("KUBELAB_SCENARIOS", project_root() / "scenarios"))


def find(name: str) -> Path:
    """A scenario by name (scenarios/<name>.yaml) or by path."""
    p = Path(name)
    if p.suffix in (".yaml", ".yml") and p.exists():
        return p
    candidate = scenarios_dir() / f"{name}.yaml"
    if candidate.exists():
        return candidate
    known = ", ".join(sorted(f"`{f.stem}`" for f in scenarios_dir().glob("*.yaml"))) or "none"
    raise ScenarioError([f"no scenario `{name}` (looked for {candidate}); scenarios: {known}"])


def all_files() -> list[Path]:
    return sorted(scenarios_dir().glob("*.yaml"))
