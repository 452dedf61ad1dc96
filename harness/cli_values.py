"""The values kubelab's tasks take, as option kinds (harness/cli_options.py): releases,
suites, scenarios, labs. Each checks what can be known without the network or a machine;
whether the Go module proxy serves a release is asked when the build starts."""

from __future__ import annotations

from pathlib import Path

from .cli_options import Called, Choice, Name
from .errors import UsageError
from .images.recipe import LAYERS, SUITES
from .lab import MAX_LAB_NAME, MAX_MACHINE_NAME


def kubernetes_release(text: str) -> str:
    """'1.36.3' (a release kubelab builds) -> '1.36.3'."""
    from .artifacts.versions import KubeVersion

    version = KubeVersion.parse(text)
    version.check_supported()
    return str(version)


def containerd_release(text: str) -> str:
    """'2.2.9' or 'v2.2.9' (a series kubelab builds from source) -> '2.2.9'."""
    from .artifacts.containerd import parse

    return parse(text).lstrip("v")


def scenario_name(text: str) -> str:
    """A scenario's name (scenarios/NAME.yaml) or path, as given, if the file is there."""
    from .errors import ScenarioError
    from .scenario.files import find

    try:
        find(text)
    except ScenarioError as exc:
        raise UsageError("; ".join(exc.problems)) from None
    return text


def existing_lab(text: str) -> str:
    from .lab import Lab

    return Lab.load(text).name


def first_scenario() -> str | None:
    from .scenario.files import all_files

    files = all_files()
    return files[0].stem if files else None


def _default_kubernetes_sample() -> str:
    from .artifacts.versions import DEFAULT_KUBERNETES

    return DEFAULT_KUBERNETES


def _matrix_record(text: str) -> Path:
    from .matrix.report import load

    load(Path(text))
    return Path(text)


def _run_folder(text: str) -> Path:
    from .evidence.rerender import read_run

    read_run(Path(text))
    return Path(text)


def ssh_targets(text: str) -> str:
    """`root@10.0.0.5,root@10.0.0.6:2222`, as given, if every item is USER@HOST[:PORT]."""
    from .verify.access import parse_ssh_targets

    parse_ssh_targets(text)
    return text


def claims_file(text: str) -> Path:
    """A claims file that is there (its content is checked, every problem at once, by the task)."""
    path = Path(text)
    if not path.is_file():
        raise UsageError(f"--claims {text!r}: {'not a file' if path.exists() else 'no such file'}")
    return path


def _claims_sample() -> str:
    from .paths import project_root

    return str(project_root() / "claims" / "course.yaml")


def book_folder(text: str) -> Path:
    """The folder of an earlier evidence book (its book.json)."""
    from .evidence.book import load

    load(Path(text))
    return Path(text)


def verify_layers(text: str) -> tuple[str, ...]:
    """`all` or layer names, comma-separated -> the layers in run order."""
    from . import verify

    try:
        return verify.chosen(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


KUBERNETES = Called(kubernetes_release, "a Kubernetes release kubelab builds, like 1.36.3 (1.34-1.37)",
                    ("abc", "1.36", "1.20.0"), _default_kubernetes_sample)
CONTAINERD = Called(containerd_release, "a containerd release kubelab builds from source, like 2.2.9 (2.2-2.4)",
                    ("abc", "1.7.0"), "2.2.9")
def kubespray_checkout(raw: str) -> str:
    """A kubespray checkout's path, checked to be one (every file kubelab reads is there)."""
    from .kubespray import checkout

    return str(checkout.load(Path(raw).expanduser().resolve(), "--kubespray").path)


def git_sources(raw: str) -> dict[str, str]:
    """`NAME=PATH,...`: clones of the projects the kit builds from a git tag."""
    from .artifacts import git_source

    return git_source.parse([v.strip() for v in raw.split(",") if v.strip()])


def _git_source_names() -> str:
    from .artifacts.git_source import REPOSITORIES

    return ", ".join(sorted(REPOSITORIES))


SUITE = Choice(*SUITES)
RECIPE = Choice(*LAYERS)
SCENARIO = Called(scenario_name, "a scenario name (scenarios/NAME.yaml) or a path to one",
                  ("no-such-scenario",), first_scenario)
LAB = Called(existing_lab, "the name of an existing lab (`invoke lab.status` lists them)", ("no-such-lab",))
NEW_LAB = Name("lab", MAX_LAB_NAME)
MACHINE = Name("machine", MAX_MACHINE_NAME)
MATRIX_RECORD = Called(_matrix_record, "a matrix.json written by `invoke matrix`",
                       ("/nonexistent-kubelab/matrix.json", "/dev/null"))
RUN_FOLDER = Called(_run_folder, "a run folder (runs/<scenario>/<timestamp>) holding its run.json",
                    ("/nonexistent-kubelab/run", "/dev/null"))
SSH_TARGETS = Called(ssh_targets, "USER@HOST[:PORT], comma-separated", ("no-at-sign", ","))
VERIFY_LAYERS = Called(verify_layers, "all, or layer names, comma-separated", ("no-such-layer", ","), "all")
CLAIMS_FILE = Called(claims_file, "a claims file, like claims/course.yaml",
                     ("/nonexistent-kubelab/claims.yaml", "/dev/null"), _claims_sample)
KUBESPRAY = Called(kubespray_checkout, "a kubespray checkout (a clone of kubernetes-sigs/kubespray)",
                   ("/nonexistent-kubelab/kubespray", "/dev/null"))
GIT_SOURCES = Called(git_sources, f"NAME=PATH of a local clone, comma-separated; NAME one of {_git_source_names()}",
                     ("no-equals-sign", "no-such-project=/tmp"))
BOOK_FOLDER = Called(book_folder, "the folder of an earlier `invoke evidence` book (with its book.json)",
                     ("/nonexistent-kubelab/book", "/dev/null"))
