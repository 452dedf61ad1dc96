"""What a lab needs built from source before it can boot, built when it is absent or damaged.

A lab with Kubernetes needs its release's kit; a lab on a containerd built from
source needs that build. Like a missing guest or node image, a missing one is
built on the spot (with Go's progress), after a line saying what is built, why,
and about how long it takes; a kit or build whose store entries are all intact
is used as it is. "Intact" is the store's own check: every file still has the
sha256 recorded when it was built (store.lookup).

The builders are parameters, so the decision is tested without Go.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import paths
from ..progress import Progress
from . import store

# Measured on a 2-core host: the kit with a cold Go cache about 15 minutes (README, the
# `artifacts` tests); 1.35.4's kit with Go's cache warm from 1.36.3, 366 s.
KIT_MIN = {"cold": 15, "warm": 6}
# containerd, ctr and the shim: one module, far less Go than Kubernetes' seven programs.
# Warm (after the kit) 106 s here; cold not timed on its own: a guess, said as one.
CONTAINERD_MIN = {"cold": 5, "warm": 2}
MEASURED_ON = "a 2-core host"


def entries_state(label: str, record: dict) -> list[str]:
    """What is wrong with the store entries a record names (empty when every one is intact)."""
    problems = []
    for name, ref in sorted(record.items()):
        entry, found = store.lookup(ref["key"])
        if entry is None:
            problems.append(f"{label} {name}: " + ("; ".join(found[:2]) if found else "missing from the store"))
    return problems


def _read(path: Path) -> tuple[dict | None, str]:
    try:
        return json.loads(path.read_text()), ""
    except FileNotFoundError:
        return None, "not built yet"
    except (OSError, ValueError) as exc:
        return None, f"its record {path} is unreadable ({exc})"


def kit_problems(tag: str) -> list[str]:
    """Why the kit of `tag` ("v1.36.3") cannot be used as it is; empty when it can."""
    from .kit import kits_dir

    record, why = _read(kits_dir() / f"kubernetes-{tag}.json")
    if record is None:
        return [why]
    from .kit import KIT_SCHEMA

    if record.get("schema") != KIT_SCHEMA:
        return [f"it was made by an older kubelab (kit schema {record.get('schema')}, now {KIT_SCHEMA})"]
    try:
        problems = entries_state("component", record["components"]) + entries_state("image", record["images"])
        problems += [f"{what} {record[key]} is missing" for key, what in (("registry", "registry storage"),
                                                                         ("files", "file server tree"))
                     if not Path(record[key]).is_dir()]
    except (KeyError, TypeError) as exc:
        return [f"its record lacks {exc}"]
    return problems


def containerd_problems(tag: str) -> list[str]:
    """Why the containerd build `tag` ("v2.4.2") cannot be used as it is; empty when it can."""
    from .containerd import record_path

    record, why = _read(record_path(tag))
    if record is None:
        return [why]
    try:
        return entries_state("component", record["components"])
    except (KeyError, TypeError) as exc:
        return [f"its record lacks {exc}"]


def go_cache_warm() -> bool:
    """Something was built here to the end before (a kit or containerd record exists) and Go's
    build cache still holds it: what the warm figure was measured with."""
    from .kit import kits_dir

    cache = paths.go_dir() / "build"
    return any(kits_dir().glob("*.json")) and cache.is_dir() and any(cache.iterdir())


def estimate(minutes: dict[str, int], warm: bool) -> str:
    """About how long a build takes, as measured on MEASURED_ON (more cores: less)."""
    how = "with Go's build cache warm" if warm else "with a cold Go cache"
    return f"{minutes['warm' if warm else 'cold']} min {how} on {MEASURED_ON}"


def _say(problems: list[str]) -> str:
    if problems == ["not built yet"]:
        return "not built yet"
    return "damaged: " + "; ".join(problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")


def ensure_kit(version, progress: Progress, build=None, check=None) -> dict:
    """The kit of `version` (a KubeVersion), built first if it is absent or damaged.
    `build(version, progress)` and `check(text) -> version` default to the real Go build
    and the module proxy's check."""
    from . import kit as kits

    problems = kit_problems(version.tag)
    if not problems:
        return kits.load_kit(version)
    build = build or kits.build_kit
    check = check or kits.check_version
    version = check(str(version))
    progress.note(f"the Kubernetes {version} kit is {_say(problems)}: building it from Go modules, "
                  f"about {estimate(KIT_MIN, go_cache_warm())} (`invoke artifacts.build "
                  f"--kubernetes {version}` does the same)")
    return build(version, progress)


def ensure_containerd(text: str, progress: Progress, build=None, check=None) -> dict:
    """The containerd build of release `text` ("2.4.2"), built first if absent or damaged."""
    from . import containerd as built

    tag = built.parse(text)
    problems = containerd_problems(tag)
    if not problems:
        return built.load_record(tag)
    build = build or built.build_containerd
    tag = (check or built.check_version)(tag)
    progress.note(f"containerd {tag.lstrip('v')} is {_say(problems)}: building it from Go modules, "
                  f"about {estimate(CONTAINERD_MIN, go_cache_warm())}, a guess "
                  f"(`invoke artifacts.build --containerd {tag.lstrip('v')}` does the same)")
    return build(tag, progress)
