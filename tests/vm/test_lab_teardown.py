"""Teardown on real guests: `lab.down`, Ctrl-C during `lab.up`, and the janitor after SIGKILL.

Runs after test_lab_libvirt.py has removed its lab, so `lab.down --all` here
removes only what these tests made (in CI no other lab exists).
"""

import os
import signal

import pytest

from harness import lifecycle
from harness.lab import Lab

from .helpers import ignore_sigint, invoke, objects_of, remove_lab_whatever_happened, unique_lab_name, wait_for


def test_down_leaves_no_domain_volume_or_network(libvirt_backend, bookworm_image):
    name = unique_lab_name("down")
    lab = lifecycle.up(lifecycle.plan_lab(1, "bookworm", 1, 768, name))
    try:
        assert sorted(o.split()[0] for o in objects_of(name)) == ["domain", "network", "volume", "volume"]
        proc = invoke("lab.down", "-n", name)
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out
    finally:
        if lab.directory.exists():
            lifecycle.down(name)
    assert objects_of(name) == []
    assert not lab.directory.exists()


def _start_up_and_wait_for_domains(name, **kw):
    proc = invoke("lab.up", "--machines", "2", "--name", name, "--memory", "768", **kw)
    wait_for(lambda: any(o.startswith("domain") for o in objects_of(name)), 120, f"a domain of lab {name}")
    return proc


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_signal_during_up_leaves_nothing(libvirt_backend, bookworm_image, signum):
    """Ctrl-C, a CI runner's cancel (SIGTERM) and a closed terminal (SIGHUP) all tear down."""
    name = unique_lab_name(signum.name[3:].lower())
    try:
        proc = _start_up_and_wait_for_domains(name)
        proc.send_signal(signum)
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 128 + signum, out
        assert f"interrupted ({signum.name})" in out
        assert objects_of(name) == [], out
        assert not Lab.path_for(name).exists()
    finally:
        remove_lab_whatever_happened(name)


def test_sigint_inherited_as_ignored_still_stops_up(libvirt_backend, bookworm_image):
    name = unique_lab_name("ign")
    try:
        proc = _start_up_and_wait_for_domains(name, preexec_fn=ignore_sigint)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 130, out
        assert objects_of(name) == [], out
    finally:
        remove_lab_whatever_happened(name)


def test_sigkill_during_up_then_down_all_leaves_nothing(libvirt_backend, bookworm_image):
    others = [n for n in Lab.names()]
    if others and os.environ.get("CI") != "true":
        pytest.skip(f"`lab.down --all` would also remove your labs {others}")
    name = unique_lab_name("kill")
    try:
        proc = _start_up_and_wait_for_domains(name)
        proc.kill()
        proc.communicate(timeout=30)
        assert objects_of(name), "SIGKILL should have left objects behind for the janitor"
        down = invoke("lab.down", "--all")
        out, _ = down.communicate(timeout=180)
        assert down.returncode == 0, out
        assert objects_of(name) == []
        assert not Lab.path_for(name).exists()
    finally:
        remove_lab_whatever_happened(name)
