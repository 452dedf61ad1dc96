"""The install-track registry: every track the loader accepts is one the plan, the engine and
dry-run reach through the registry, and no other module compares a track's name."""

import ast

import pytest

from harness.errors import HarnessError
from harness.model import InstallDef
from harness.paths import project_root
from harness.tracks import TRACKS, track_of
from harness.tracks.base import Track


def test_every_track_answers_the_whole_interface():
    assert set(TRACKS) == {"none", "kubeadm", "kubespray"}
    for name, track in TRACKS.items():
        assert isinstance(track, Track) and track.name == name
        assert track_of(InstallDef(track=name)) is track


def test_a_track_that_is_not_implemented_is_refused_by_name():
    with pytest.raises(HarnessError, match=r"install track `helm` is not implemented; implemented: none, kubeadm, kubespray"):
        track_of(InstallDef(track="helm"))


def test_none_installs_nothing_and_kubeadm_carries_its_release_into_the_node_image():
    none, kubeadm = TRACKS["none"], TRACKS["kubeadm"]
    assert not none.installs_kubernetes and not InstallDef().installs_kubernetes
    assert none.steps(InstallDef(), None, None, None) == []
    assert none.node_image_release(InstallDef()) is None
    with pytest.raises(NotImplementedError, match="cannot reinstall"):
        none.reinstall_steps(InstallDef(), None, None, rebuild=False, new_ranges=False)
    install = InstallDef(track="kubeadm", kubernetes="1.36.3")
    assert install.installs_kubernetes and kubeadm.reinstalls and kubeadm.arms_inside_install
    assert kubeadm.node_image_release(install) == "v1.36.3"


def _compares_a_track_name(node) -> bool:
    """`x.track == "..."` / `!=` / `in (...)` with a string literal: a caller deciding by name."""
    if not isinstance(node, ast.Compare):
        return False
    sides = [node.left, *node.comparators]
    names = any(isinstance(s, ast.Attribute) and s.attr == "track" for s in sides)
    literal = any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides)
    return names and literal


def test_no_module_outside_the_tracks_decides_by_a_track_name():
    root = project_root()
    # model.py defines installs_kubernetes itself; the loader reads the name from the file
    allowed = {"harness/model.py", "harness/scenario/load.py"}
    found = []
    for path in sorted((root / "harness").rglob("*.py")) + [root / "tasks.py"]:
        rel = str(path.relative_to(root))
        if rel.startswith("harness/tracks/") or rel in allowed:
            continue
        found += [f"{rel}:{n.lineno}" for n in ast.walk(ast.parse(path.read_text())) if _compares_a_track_name(n)]
    assert found == []
