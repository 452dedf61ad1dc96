"""Can the lab serve everything a kubespray checkout downloads for a Kubernetes release?

What the kit serves is matched against the checkout's list (serving.py); what is missing but
has a recipe here is built (extras.py) when it is all that is missing, so a run that something
else would stop builds nothing first; the rest is told apart as buildable-but-not-yet or not
buildable on this machine, with the variable that leaves it out (sources.py). The track's
preflight and `invoke artifacts.build --kubespray` (tracks/kubespray.py) both ask here.
"""

from __future__ import annotations

from collections.abc import Callable

from ..progress import Progress
from . import extras, serving, sources
from .downloads import Download


Proxy = Callable[[str, str], tuple[bool, str]]


def _build(gaps: list[sources.Gap], kit: dict, progress: Progress, label: str, hint: str = "",
           rebuild: bool = False) -> None:
    todo = [g.download for g in gaps]
    progress.note(f"kubespray {label} downloads " + ", ".join(f"{d.name} {d.version or d.tag}" for d in todo)
                  + f" beyond the kit: building, {extras.estimate(todo)}" + (f" ({hint})" if hint else ""))
    extras.ensure(todo, kit, progress, rebuild)


def _buildable(gaps: list[sources.Gap]) -> list[sources.Gap]:
    made = {d.name for d in extras.buildable([g.download for g in gaps])}
    return [g for g in gaps if g.buildable and g.download.name in made]


def _match(wanted: list[Download], kit: dict, proxy: Proxy | None, build_hint: str):
    served = serving.serving(wanted, kit)
    return served, sources.gaps(served.missing_files + served.missing_images, proxy or sources.proxy_answer,
                                build_hint)


def ensure_served(wanted: list[Download], kit: dict, progress: Progress, label: str, build_hint: str = "",
                  proxy: Proxy | None = None, build: bool = True) -> tuple[serving.Serving, list[sources.Gap]]:
    """The match, after building the extras when they are all that is missing (so a run that
    something else would stop builds nothing first; `build=False`: that something is outside the
    download list); with the gaps left."""
    served, gaps = _match(wanted, kit, proxy, build_hint)
    if served.complete or not build or len(_buildable(gaps)) < len(gaps):
        return served, gaps
    _build(gaps, kit, progress, label, f"{build_hint} does the same" if build_hint else "")
    return _match(wanted, kit, proxy, build_hint)


def build_all(wanted: list[Download], kit: dict, progress: Progress, label: str, rebuild: bool = False,
              proxy: Proxy | None = None) -> tuple[serving.Serving, list[sources.Gap]]:
    """Build every extra the list asks for that can be built, whatever else is missing."""
    served, gaps = _match(wanted, kit, proxy, "")
    todo = _buildable(gaps) if not rebuild else \
        [sources.Gap(d, True, "") for d in extras.buildable(wanted)]
    if todo:
        _build(todo, kit, progress, label, rebuild=rebuild)
        served, gaps = _match(wanted, kit, proxy, "")
    return served, gaps


def refusal(kubernetes: str, label: str, path, wanted: list[Download], served: serving.Serving,
            gaps: list[sources.Gap]) -> str:
    """Each download the lab lacks, told apart (buildable here, or not and what to do)."""
    images = sum(1 for d in wanted if d.kind == "image") - len(served.missing_images)
    blocked = [g for g in gaps if g.buildable is False]
    text = (f"the Kubernetes {kubernetes} kit cannot serve what kubespray {label} downloads for it ({path}); "
            "missing:\n  " + "\n  ".join(g.line() for g in gaps)
            + f"\nThe kit serves {', '.join(sorted(served.files)) or 'no file'} and {images} image(s) of the list.")
    if blocked:
        text += (f" {len(blocked)} of the missing cannot be built on this machine with these settings "
                 f"({', '.join(g.download.name for g in blocked)}); see docs/kubespray.md")
    else:
        text += " The rest is not built by kubelab yet (see docs/kubespray.md)"
    return text
