"""`kubespray` tests read a real kubespray checkout the user brings: its path is KUBELAB_KUBESPRAY.

They are deselected by default (`-m kubespray` runs them). Asked for without a checkout, or
without the venv kubelab makes for it, they are skipped naming what is missing; under CI=true
that is a failure, as for every other missing prerequisite (tests/conftest.py unavailable()).
"""

import os
from pathlib import Path

import pytest

from harness.kubespray import checkout, venv
from tests.conftest import unavailable


@pytest.fixture(scope="session")
def kubespray_path() -> Path:
    value = os.environ.get("KUBELAB_KUBESPRAY")
    if not value:
        unavailable("KUBELAB_KUBESPRAY is not set: point it at a clone of kubernetes-sigs/kubespray")
    return Path(value)


@pytest.fixture(scope="session")
def ks(kubespray_path):
    """The checkout, validated and versioned."""
    return checkout.load(kubespray_path, "KUBELAB_KUBESPRAY")


@pytest.fixture(scope="session")
def made_venv(ks):
    """kubespray's venv of kubelab's, where it is made (skipped with how to make it otherwise)."""
    v = venv.for_requirements(ks.path / "requirements.txt")
    if not v.complete():
        unavailable(f"no complete kubespray venv at {v.path}: make it with "
                    "harness.kubespray.venv.ensure(<checkout>/requirements.txt) (pip from PyPI)")
    return v


@pytest.fixture(scope="session")
def git_clones():
    """Clones of what the kit builds from a git tag, named by KUBELAB_SRC_* as a user names them."""
    from harness.artifacts.git_source import REPOSITORIES

    missing = [f"{s.env} (a clone of {s.upstream})" for s in REPOSITORIES.values() if not os.environ.get(s.env)]
    if missing:
        unavailable("not set: " + ", ".join(missing))
    return {name: Path(os.environ[s.env]) for name, s in REPOSITORIES.items()}
