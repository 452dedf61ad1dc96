"""`--dry-run`: the plan the engine would execute, printed; nothing is created.

Machine facts come from the image manifest when the image is built (so
version-dependent commands and gates are exact); otherwise version-gated
checks are listed with their condition, and fault commands assume
containerd 1.x.
"""

from __future__ import annotations

from .. import tuning
from ..images import store
from ..images.recipe import Recipe
from ..model import Scenario
from ..probes.facts import COMMAND as FACTS_COMMAND
from ..tracks import track_of
from .plan import plan


def image_facts(suite: str, containerd: str = "", recipe: str = "debian") -> dict | None:
    """The facts of the image the lab would boot; with a built containerd, that version
    (its layer need not be made yet: the version is what the build stamps)."""
    image = store.find(Recipe.named(recipe, suite))
    if image is None:
        return None
    v = image.versions
    return {"os": v["os"], "kernel": v["kernel"], "containerd": containerd or v["containerd"], "runc": v["runc"],
            "systemd": v["systemd"], "pid1": "systemd", "cgroupfs": "cgroup2fs"}


def host_tuning() -> tuple[tuning.Tuning, str]:
    """The settings a lab here would get (this boot's acceleration verdict), and a line saying so."""
    from ..machines import accel

    verdict, tuned = accel.cached_verdict(), tuning.host_profile()
    if verdict is None:
        return tuned, "acceleration not measured yet this boot (the first lab.up does): the TCG settings are shown"
    return tuned, f"acceleration {verdict.describe()}; {tuned.profile.upper()} settings: {tuned.why}"


def install_context(scenario: Scenario, facts: dict | None, tuned: tuning.Tuning | None):
    """What the install track's steps depend on, before a lab exists: placeholders for
    the addresses and the token, the kit's images when it is built."""
    return track_of(scenario.install).dry_context(scenario, facts, tuned)


def _unbuilt(scenario: Scenario) -> list[str]:
    """What the run would build before its lab (a kit or a containerd build not made yet)."""
    from ..artifacts import containerd as built
    from ..artifacts import prerequisites
    from ..artifacts.kit import kits_dir
    from ..artifacts.versions import KubeVersion

    warm = prerequisites.go_cache_warm()
    out = []
    if scenario.lab.containerd and not built.record_path(built.parse(scenario.lab.containerd)).exists():
        out.append(f"# containerd {scenario.lab.containerd} is not built: the run builds it first, about "
                   f"{prerequisites.estimate(prerequisites.CONTAINERD_MIN, warm)}, a guess")
    version = KubeVersion.parse(scenario.install.kubernetes)
    if not (kits_dir() / f"kubernetes-{version.tag}.json").exists():
        out.append(f"# the Kubernetes {version} kit is not built: the run builds it first, about "
                   f"{prerequisites.estimate(prerequisites.KIT_MIN, warm)}")
    return out


def plan_lines(scenario: Scenario, suite: str, control: bool = False,
               tuned: tuning.Tuning | None = None) -> list[str]:
    """`tuned`: the acceleration's settings (default: what a lab on this host would get)."""
    facts = image_facts(suite, scenario.lab.containerd, track_of(scenario.install).guest_recipe)
    machines = [m.name for m in scenario.lab.machines]
    out = [f"# scenario {scenario.name} ({'control' if control else 'fault'} run) on {suite}"]
    out.append("# machines: " + ", ".join(f"{m.name} ({m.cpus} vCPU, {m.memory} MiB)" for m in scenario.lab.machines))
    built = f" (containerd {scenario.lab.containerd} built from source)" if scenario.lab.containerd else ""
    out.append(f"# facts from the image manifest{built}: " + (
        ", ".join(f"{k} {facts[k]}" for k in ("containerd", "runc", "kernel")) if facts
        else "none (image not built yet): version-dependent steps are shown with their condition"))
    if scenario.install.installs_kubernetes:
        out += _unbuilt(scenario)
        if tuned is None:
            tuned, said = host_tuning()
        else:
            said = f"{tuned.profile.upper()} settings: {tuned.why}"
        out.append(f"# {said}")
    if not facts and scenario.faults:
        out.append(f"# fault commands below assume containerd 1.x; `invoke images.build --suite {suite}` makes them exact")
    out += [f"[prepare] {m}: {FACTS_COMMAND}    # facts: versions" for m in machines]
    steps = plan(scenario, scenario.lab.roles(), {m: facts or {} for m in machines}, control,
                 facts_known=facts is not None, install=install_context(scenario, facts, tuned))
    skipped_install = not scenario.install.installs_kubernetes
    for step in steps:
        if skipped_install and step.phase in ("expect", "recover", "verify", "collect"):
            out.append("[install] (skipped: install track `none`)")
            skipped_install = False
        out.append(step.line())
        if step.action == "host-write":  # the file itself: what the host step after it reads
            out += [f"    | {line}" for line in step.content.splitlines()]
    if skipped_install:
        out.append("[install] (skipped: install track `none`)")
    out.append("[teardown] lab: remove machines, disks, network and servers")
    return out
