"""Teardown on real guests: `lab.down`, Ctrl-C during `lab.up`, and the janitor after SIGKILL.

Runs after test_lab_libvirt.py has removed its lab, so `lab.down --all` here
removes only what these tests made (in CI no other lab exists).
"""

import os
import signal

import pytest

from harness import lifecycle
from harness.lab import Lab

from .helpers import invoke, objects_of, unique_lab_name, wait_for


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


def _start_up_and_wait_for_domains(name):
    proc = invoke("lab.up", "--machines", "2", "--name", name, "--memory", "768")
    wait_for(lambda: any(o.startswith("domain") for o in objects_of(name)), 120, f"a domain of lab {name}")
    return proc


def test_sigint_during_up_leaves_nothing(libvirt_backend, bookworm_image):
    name = unique_lab_name("int")
    proc = _start_up_and_wait_for_domains(name)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode != 0, out
    assert "interrupted" in out
    assert objects_of(name) == [], out
    assert not Lab.path_for(name).exists()


def test_sigkill_during_up_then_down_all_leaves_nothing(libvirt_backend, bookworm_image):
    others = [n for n in Lab.names()]
    if others and os.environ.get("CI") != "true":
        pytest.skip(f"`lab.down --all` would also remove your labs {others}")
    name = unique_lab_name("kill")
    proc = _start_up_and_wait_for_domains(name)
    proc.kill()
    proc.communicate(timeout=30)
    assert objects_of(name), "SIGKILL should have left objects behind for the janitor"
    down = invoke("lab.down", "--all")
    out, _ = down.communicate(timeout=180)
    assert down.returncode == 0, out
    assert objects_of(name) == []
    assert not Lab.path_for(name).exists()
