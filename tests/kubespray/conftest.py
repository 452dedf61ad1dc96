"""`kubespray` tests read a real kubespray checkout the user brings: its path is KUBELAB_KUBESPRAY.

Without it they are skipped with that reason, under CI=true too: a fresh machine has no
checkout and none can be fetched (kubespray is no package anywhere reachable).
"""

import os
from pathlib import Path

import pytest

from harness.kubespray import checkout, venv


@pytest.fixture(scope="session")
def kubespray_path() -> Path:
    value = os.environ.get("KUBELAB_KUBESPRAY")
    if not value:
        pytest.skip("KUBELAB_KUBESPRAY is not set: point it at a clone of kubernetes-sigs/kubespray "
                    "(user-supplied, so skipped under CI=true as well)")
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
        pytest.skip(f"no complete kubespray venv at {v.path}: make it with "
                    "harness.kubespray.venv.ensure(<checkout>/requirements.txt) (pip from PyPI)")
    return v
