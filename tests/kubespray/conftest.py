"""`kubespray` tests read a real kubespray checkout the user brings: its path is KUBELAB_KUBESPRAY.

Without it they are skipped with that reason, under CI=true too: a fresh machine has no
checkout and none can be fetched (kubespray is no package anywhere reachable).
"""

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def kubespray_path() -> Path:
    value = os.environ.get("KUBELAB_KUBESPRAY")
    if not value:
        pytest.skip("KUBELAB_KUBESPRAY is not set: point it at a clone of kubernetes-sigs/kubespray "
                    "(user-supplied, so skipped under CI=true as well)")
    return Path(value)
