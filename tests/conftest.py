"""Tiers: unit tests need nothing; `vm` tests boot real guests on this host.

A test that needs what this host lacks (a backend that cannot run guests, a tool
scripts/setup installs) is skipped with a reason naming what is missing, except
under CI=true, where it is a failure: CI has all of it, so a missing piece is a fault.
"""

import os
import shutil

import pytest

IN_CI = os.environ.get("CI") == "true"


def unavailable(reason: str):
    if IN_CI:
        pytest.fail(f"CI=true, so this is a failure, not a skip: {reason}", pytrace=False)
    pytest.skip(reason)


def require_tool(tool: str, how: str) -> str:
    """The path of `tool`, else skipped (failed under CI=true) naming it and `how` to get it."""
    path = shutil.which(tool)
    if path is None:
        unavailable(f"`{tool}` is not installed ({how})")
    return path


@pytest.fixture(scope="session")
def libvirt_backend():
    from harness import host
    from harness.errors import HarnessError
    from harness.machines.libvirt import LibvirtBackend

    try:
        host.prepare(log=lambda m: None)
        backend = LibvirtBackend()
        backend.check()
    except HarnessError as exc:
        unavailable(f"libvirt backend unavailable: {exc}")
    return backend


@pytest.fixture(scope="session")
def bookworm_image(libvirt_backend):
    from harness.images import build
    from harness.images.recipe import Recipe
    from harness.progress import Progress

    return build.ensure(Recipe.debian("bookworm"), Progress())


@pytest.fixture(scope="session")
def kit():
    """The default Kubernetes kit, built from source (cold: Go builds of every component)."""
    import shutil

    from harness.artifacts import kit as kits
    from harness.artifacts.versions import DEFAULT_KUBERNETES
    from harness.progress import Progress

    for tool in ("go", "skopeo", "docker-registry", "gcc"):
        if not shutil.which(tool) and not (tool == "go" and os.access("/usr/local/go/bin/go", os.X_OK)):
            unavailable(f"`{tool}` is missing; scripts/setup installs what the kit needs")
    return kits.build_kit(kits.check_version(DEFAULT_KUBERNETES), Progress())


@pytest.fixture(scope="session")
def sid_node_image(kit):
    from harness.images import node
    from harness.progress import Progress

    # preloaded: what the kubeadm scenarios boot (its build pulls every kit image through the mirror)
    return node.ensure("sid", kit["kubernetes"], Progress(), preload=True)
