"""What the vm tests look at: libvirt's own view of kubelab's objects."""

import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.machines.libvirt import LibvirtBackend, lab_of
from harness.paths import project_root
from harness.scenario.files import all_files
from harness.scenario.load import load

# Every scenario file under scenarios/, found there (a new file runs without being listed here).
# The kind follows its install track: host scenarios install no Kubernetes, cluster ones do.
SCENARIOS = {p.stem: load(p) for p in all_files()}
HOST_SCENARIOS = [n for n, s in SCENARIOS.items() if s.install.track == "none"]
CLUSTER_SCENARIOS = [n for n, s in SCENARIOS.items() if s.install.track == "kubeadm"]
# kubespray's run the user's checkout: tests/kubespray, with -m kubespray and KUBELAB_KUBESPRAY
KUBESPRAY_SCENARIOS = [n for n, s in SCENARIOS.items() if s.install.track == "kubespray"]


def tier(name: str) -> tuple:
    """The marks of a scenario's run: every host scenario, and each cluster scenario whose file
    says `ci: true`, runs in the default tier (CI); the other cluster scenarios, 4-15 minutes
    each under TCG, only with `-m cluster`."""
    scenario = SCENARIOS[name]
    return () if scenario.install.track == "none" or scenario.ci else (pytest.mark.cluster,)


def gates_on(name: str, component: str) -> bool:
    """Whether the scenario's checks, steps or expected init failure depend on `component`'s version."""
    s = SCENARIOS[name]
    return component in s.install.init_fails_versions or \
        any(component in c.versions for c in s.expect + s.verify + s.observe + s.recover)


def objects_of(lab: str) -> list[str]:
    """Every libvirt domain, network and kubelab volume that belongs to `lab`."""
    return [o for o in LibvirtBackend().leftovers() if lab_of(o.split(" ", 1)[1]) == lab]


def box_volumes() -> list[str]:
    """Vagrant boxes uploaded into kubelab's pool."""
    pool = LibvirtBackend().storage_pool(create=False)
    if pool is None:
        return []
    return [f"volume {v.name()}" for v in pool.listAllVolumes(0) if "_vagrant_box_image_" in v.name()]


def backend_or_unavailable(name: str):
    """The backend, checked; skipped with the reason (a failure under CI=true) when unusable."""
    from harness import lifecycle
    from harness.errors import HarnessError
    from tests.conftest import unavailable

    backend = lifecycle.backend_for(name)
    try:
        backend.check()
    except HarnessError as exc:
        unavailable(f"{name} backend unavailable: {exc}")
    return backend


def assert_matrix_left_nothing(out) -> None:
    """Every lab a matrix's runs record (none: stopped before its lab existed) is gone from libvirt."""
    import json

    for run_json in (out / "cells").glob("*/*/*/run.json"):
        lab = json.loads(run_json.read_text())["lab"].get("name")
        assert lab is None or objects_of(lab) == [], f"lab {lab} left objects behind"


def unique_lab_name(kind: str) -> str:
    return f"t{kind}-{secrets.token_hex(2)}"


def invoke(*args: str, **kw) -> subprocess.Popen:
    exe = Path(sys.executable).with_name("invoke")
    return subprocess.Popen([str(exe), *args], cwd=project_root(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kw)


def wait_for(predicate, timeout: float, what: str, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def remove_lab_whatever_happened(name: str) -> None:
    """A test's last word: its lab is gone even when an assertion failed first."""
    from harness import lifecycle
    from harness.errors import HarnessError
    from harness.lab import Lab

    if Lab.path_for(name).exists():
        try:
            lifecycle.down(name)
        except HarnessError:
            pass
    backend = LibvirtBackend()
    keep = {n for n in Lab.names() if n != name}
    if objects_of(name):
        backend.remove_leftovers(keep_labs=keep)


def ignore_sigint():
    """preexec_fn: what a job started in the background by a non-interactive shell inherits."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
