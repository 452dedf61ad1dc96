"""Teardown on real guests: `lab.down`, Ctrl-C during `lab.up`, and the janitor after SIGKILL.

Each test removes only the labs it made, so they run beside labs of your own.
"""

import shutil
import signal

import pytest

from harness import lifecycle
from harness.lab import Lab
from harness.machines.libvirt import lab_of

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


def test_sigkill_during_up_then_the_janitor_leaves_nothing(libvirt_backend, bookworm_image):
    """SIGKILL during `lab.up` leaves objects behind; with the lab's state folder gone as well,
    only the janitor (what `lab.down --all` sweeps after removing each lab) can find them. It
    is told to keep every lab that existed before this test, so the test runs beside your own
    labs and removes only its own."""
    before = {lab_of(o.split(" ", 1)[1]) for o in libvirt_backend.leftovers()} | set(Lab.names())
    name = unique_lab_name("kill")
    try:
        proc = _start_up_and_wait_for_domains(name)
        proc.kill()
        proc.communicate(timeout=30)
        made = objects_of(name)
        assert made, "SIGKILL should have left objects behind for the janitor"
        others = [o for o in libvirt_backend.leftovers() if o not in made]
        shutil.rmtree(Lab.path_for(name))  # no state file knows them now
        removed = libvirt_backend.remove_leftovers(keep_labs=(before | set(Lab.names())) - {name})
        assert sorted(removed) == sorted(made)
        assert objects_of(name) == []
        assert set(others) <= set(libvirt_backend.leftovers())  # every other lab's objects are still there
    finally:
        remove_lab_whatever_happened(name)


def test_a_seed_libvirt_does_not_list_yet_is_still_found_and_removed(libvirt_backend):
    """A seed is a file written into the pool's folder; libvirt lists it only after the pool's
    next refresh, which it refuses while another lab uploads. A run killed in between left
    one the janitor's first listing missed (seen in CI): teardown and the janitor read the folder too."""
    from harness.machines.libvirt import POOL, seed_volume
    name = unique_lab_name("seed")
    pool = libvirt_backend.storage_pool()
    seed = libvirt_backend.pool_dir(pool) / seed_volume(name, "node1")
    try:
        unrefreshed = libvirt_backend.conn.storagePoolLookupByName(POOL)
        seed.write_bytes(b"seed")
        assert seed.name not in {v.name() for v in unrefreshed.listAllVolumes(0)}
        assert libvirt_backend._unlisted_files(unrefreshed) == [seed.name]
        assert libvirt_backend._remove_volume(seed.name)  # as `lab.down` removes a recorded volume
        assert not seed.exists()
        seed.write_bytes(b"seed")
        assert f"volume {seed.name}" in libvirt_backend.leftovers()
        removed = libvirt_backend.remove_leftovers(keep_labs=(set(Lab.names()) | {
            lab_of(o.split(" ", 1)[1]) for o in libvirt_backend.leftovers()}) - {name})
        assert removed == [f"volume {seed.name}"]
        assert not seed.exists()
    finally:
        seed.unlink(missing_ok=True)
        remove_lab_whatever_happened(name)
