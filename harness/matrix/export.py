"""CI export: one job per matrix cell on an existing CI engine, plus a merge job.

Runners are self-hosted and labelled for libvirt/KVM (TCG works, slowly). Each
cell job runs `invoke matrix` for exactly its cell with a harness deadline
shorter than the job's timeout, so the report is written and uploaded before
the engine would kill the job. Every matrix value is a quoted string: YAML
would read 1.30 as the number 1.3.
"""

from __future__ import annotations

import yaml

from ..errors import UsageError

FORMATS = ("github", "gitlab")
# Jobs one matrix may generate: GitHub Actions "a job matrix can generate a maximum of
# 256 jobs per workflow run"; GitLab `parallel:matrix` "cannot generate more than 200 jobs".
JOB_LIMITS = {"github": 256, "gitlab": 200}
RUNNER_LABELS = ("self-hosted", "linux", "libvirt")
# What a job needs beyond the harness deadline: setup before, teardown and upload after.
JOB_MARGIN_MIN = 20
ARTIFACT_PREFIX = "kubelab-cell-"


class _Quoted(str):
    pass


def _quoted_representer(dumper, data):
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style='"')


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Quoted, _quoted_representer)


def _dump(doc) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=200)


def _entries(cells) -> list[dict]:
    # A built-containerd cell runs with no suite column of its own (`--suite ""`).
    return [{"cell": _Quoted(c.id), "kubernetes": _Quoted(c.kubernetes), "suite": _Quoted("" if c.built else c.suite),
             "containerd": _Quoted(c.built), "scenarios": _Quoted(",".join(c.scenarios))} for c in cells]


def _check(fmt: str, cells) -> None:
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt}: choose from {', '.join(FORMATS)}")
    if not cells:
        raise UsageError("matrix.export: the matrix has no cell to run (every pair unsupported?)")
    if len(cells) > JOB_LIMITS[fmt]:
        raise UsageError(f"matrix.export --format {fmt}: {len(cells)} cells, but one {fmt} matrix may generate "
                         f"at most {JOB_LIMITS[fmt]} jobs; split the axes over several workflows")


def _cell_command(deadline_min: int, k: str, suite: str, containerd: str, scenarios: str, cell: str) -> str:
    return (f'.venv/bin/invoke matrix --scenario "{scenarios}" --kubernetes "{k}" --suite "{suite}" '
            f'--containerd "{containerd}" --deadline {deadline_min} --out "matrix-out/{cell}"')


def github(cells, deadline_min: int) -> str:
    _check("github", cells)
    m = "${{ matrix.%s }}"
    doc = {
        "name": "kubelab matrix",
        "on": {"workflow_dispatch": {}},
        "jobs": {
            "cell": {
                "name": "cell " + m % "cell",
                "runs-on": list(RUNNER_LABELS),
                "timeout-minutes": deadline_min + JOB_MARGIN_MIN,
                "strategy": {"fail-fast": False, "matrix": {"include": _entries(cells)}},
                "steps": [
                    {"uses": "actions/checkout@v4"},
                    {"name": "set up", "run": "bash scripts/setup"},
                    {"name": "run the cell",
                     "run": _cell_command(deadline_min, m % "kubernetes", m % "suite", m % "containerd", m % "scenarios",
                                         m % "cell")},
                    {"name": "upload the cell's report", "if": "always()", "uses": "actions/upload-artifact@v4",
                     "with": {"name": ARTIFACT_PREFIX + m % "cell", "path": "matrix-out/" + m % "cell",
                              "if-no-files-found": "error"}},
                ],
            },
            "merge": {
                "needs": ["cell"],
                "if": "always()",
                "runs-on": ["self-hosted", "linux"],
                "timeout-minutes": 15,
                "steps": [
                    {"uses": "actions/checkout@v4"},
                    {"uses": "actions/download-artifact@v4", "with": {"pattern": ARTIFACT_PREFIX + "*", "path": "cells"}},
                    {"name": "merge", "run": "bash scripts/setup && .venv/bin/invoke matrix.merge --out matrix-merged --parts 'cells/*/matrix.json'"},
                    {"uses": "actions/upload-artifact@v4", "if": "always()",
                     "with": {"name": "kubelab-matrix", "path": "matrix-merged"}},
                ],
            },
        },
    }
    return _dump(doc)


def gitlab(cells, deadline_min: int) -> str:
    _check("gitlab", cells)
    doc = {
        "stages": ["cells", "merge"],
        "cell": {
            "stage": "cells",
            "tags": ["libvirt", "kvm"],
            "timeout": f"{deadline_min + JOB_MARGIN_MIN} minutes",
            "parallel": {"matrix": [{"CELL": e["cell"], "KUBERNETES": e["kubernetes"], "SUITE": e["suite"],
                                     "CONTAINERD": e["containerd"], "SCENARIOS": e["scenarios"]} for e in _entries(cells)]},
            "script": ["bash scripts/setup",
                       _cell_command(deadline_min, "$KUBERNETES", "$SUITE", "$CONTAINERD", "$SCENARIOS", "$CELL")],
            "artifacts": {"when": "always", "name": ARTIFACT_PREFIX + "$CELL", "paths": ["matrix-out/$CELL/"]},
        },
        "merge": {
            "stage": "merge",
            "when": "always",
            "needs": [{"job": "cell", "artifacts": True}],
            "tags": ["libvirt"],
            "timeout": "15 minutes",
            "script": ["bash scripts/setup",
                       ".venv/bin/invoke matrix.merge --out matrix-merged --parts 'matrix-out/*/matrix.json'"],
            "artifacts": {"when": "always", "name": "kubelab-matrix", "paths": ["matrix-merged/"]},
        },
    }
    return _dump(doc)


def export(fmt: str, cells, deadline_min: int) -> str:
    _check(fmt, cells)
    return github(cells, deadline_min) if fmt == "github" else gitlab(cells, deadline_min)
