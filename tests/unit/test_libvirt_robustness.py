"""libvirt backend robustness: a pool rescan during another lab's volume build, a volume still being built
when the janitor deletes it, a kernel panic while booting, a machine that will not power off."""

import libvirt
import pytest

from harness import tuning
from harness.machines.libvirt import delete_volume, refresh_pool


class _Error(libvirt.libvirtError):
    def __init__(self, message, code=libvirt.VIR_ERR_INTERNAL_ERROR):
        Exception.__init__(self, message)
        self._message, self._code = message, code

    def get_error_message(self):
        return self._message

    def get_error_code(self):
        return self._code


class _Pool:
    def __init__(self, error=None):
        self.error, self.refreshed = error, 0

    def refresh(self, flags):
        self.refreshed += 1
        if self.error:
            raise self.error


def test_a_pool_busy_building_another_labs_volume_is_not_an_error():
    # libvirt's wording, storage_driver.c (storagePoolRefresh), seen in CI while `lab.up` ran beside a probe
    pool = _Pool(_Error("internal error: pool 'kubelab' has asynchronous jobs running."))
    refresh_pool(pool)
    assert pool.refreshed == 1


def test_any_other_refresh_failure_is_raised():
    pool = _Pool(_Error("cannot open directory '/var/lib/kubelab/volumes': No such file or directory"))
    with pytest.raises(libvirt.libvirtError):
        refresh_pool(pool)


# -- a kernel panic while booting (TCG flake) --------------------------------------------
import base64  # noqa: E402
import struct  # noqa: E402
import threading  # noqa: E402
from pathlib import Path  # noqa: E402

from harness.errors import BackendError, MachineTimeout  # noqa: E402
from harness.machines.libvirt import LibvirtBackend  # noqa: E402
from harness.remote.ssh import SshTarget  # noqa: E402

PANIC = ("[    1.553642] Oops: int3: 0000 [#1] SMP NOPTI\n"
         "[    1.557117] Kernel panic - not syncing: Fatal exception in interrupt\n")


class _Dom:
    def __init__(self, log: Path, panic_again: bool):
        self.log, self.panic_again, self.resets = log, panic_again, 0

    def isActive(self):
        return True

    def reset(self, flags):
        self.resets += 1
        with self.log.open("a") as f:  # the console keeps appending across a reset
            f.write("[    0.000000] Linux version 7.2.13\n" + (PANIC if self.panic_again else ""))


class _Lab:
    def __init__(self, log: Path):
        self.log = log

    def serial_log(self, name):
        return self.log

    def ssh_target(self, name):  # nothing listens on port 1 of loopback: refused at once
        blob = struct.pack(">I", 11) + b"ssh-ed25519" + struct.pack(">I", 32) + bytes(range(32))
        return SshTarget(name=name, host="127.0.0.1", port=1, user="root", key_path=Path("/nonexistent"),
                         host_key="ssh-ed25519 " + base64.b64encode(blob).decode())


def _wait(tmp_path, panic_again):
    log = tmp_path / "cp1.log"
    log.write_text(PANIC)
    dom, notes = _Dom(log, panic_again), []
    backend = LibvirtBackend.__new__(LibvirtBackend)  # no libvirt connection needed for the wait
    with pytest.raises((BackendError, MachineTimeout)) as exc:
        backend._wait_ssh(_Lab(log), "cp1", dom, 1.5, threading.Event(), note=notes.append)
    return dom, notes, exc.value


# libvirt's wording, storage_driver.c (storageVolDelete), seen in CI: the janitor ran after `lab.up` was
# SIGKILLed inside createXML, while libvirtd was still making that overlay
_BUILDING = "Requested operation is not valid: volume 'kubelab-tkill-d8cd.node2.qcow2' is still being allocated."


class _Volume:
    def __init__(self, errors):
        self.errors, self.attempts = list(errors), 0

    def delete(self, flags):
        self.attempts += 1
        if self.errors:
            raise self.errors.pop(0)


def test_a_volume_still_being_built_is_deleted_once_its_build_ends():
    vol = _Volume([_Error(_BUILDING, libvirt.VIR_ERR_OPERATION_INVALID)] * 2)
    assert delete_volume(vol, wait=5, poll=0) is True
    assert vol.attempts == 3


def test_a_volume_whose_build_never_ends_is_an_error_naming_it():
    vol = _Volume([_Error(_BUILDING, libvirt.VIR_ERR_OPERATION_INVALID)] * 1000)
    with pytest.raises(libvirt.libvirtError, match="kubelab-tkill-d8cd.node2.qcow2"):
        delete_volume(vol, wait=0.05, poll=0.01)
    assert vol.attempts > 1


def test_a_volume_already_gone_is_not_removed_and_other_failures_are_raised_at_once():
    gone = _Volume([_Error("Storage volume not found", libvirt.VIR_ERR_NO_STORAGE_VOL)])
    assert delete_volume(gone, wait=5, poll=0) is False
    denied = _Volume([_Error("cannot unlink file: Permission denied")] * 5)
    with pytest.raises(libvirt.libvirtError, match="Permission denied"):
        delete_volume(denied, wait=5, poll=0)
    assert denied.attempts == 1


def test_a_kernel_panic_while_booting_resets_the_machine_once(tmp_path):
    dom, notes, error = _wait(tmp_path, panic_again=False)
    assert dom.resets == 1
    assert notes == ["machine cp1: kernel panic while booting (Oops: int3: 0000 [#1] SMP NOPTI); resetting it"]
    assert isinstance(error, MachineTimeout)  # then the ordinary SSH wait, with its own deadline


def test_a_second_panic_is_an_error_naming_the_reset(tmp_path):
    dom, _, error = _wait(tmp_path, panic_again=True)
    assert dom.resets == 1
    assert isinstance(error, BackendError) and "panicked while booting, again after 1 reset(s)" in str(error)


class _SchedDom:
    def __init__(self, error=None):
        self.params, self.error = None, error

    def setSchedulerParameters(self, params):
        if self.error:
            raise self.error
        self.params = params


TCG = tuning.decide("qemu")


class _RolesLab:
    def __init__(self, roles):
        self.state = {"machines": [{"name": n, "role": r} for n, r in roles.items()]}


class _Notes:
    def __init__(self):
        self.lines = []

    def note(self, line):
        self.lines.append(line)


def test_once_booted_the_control_plane_gets_four_times_a_workers_cpu_share():
    from harness.machines.libvirt import LibvirtBackend

    doms, notes = {"cp1": _SchedDom(), "w1": _SchedDom()}, _Notes()
    LibvirtBackend()._set_role_shares(_RolesLab({"cp1": "control-plane", "w1": "worker"}), doms, TCG, notes)
    assert doms["cp1"].params == {"cpu_shares": 2048} and doms["w1"].params == {"cpu_shares": 512}
    assert notes.lines == ["host CPU shares: cp1 2048, w1 512"]


def test_under_kvm_every_machine_keeps_libvirts_share():
    from harness.machines.libvirt import LibvirtBackend

    doms, notes = {"cp1": _SchedDom(), "w1": _SchedDom()}, _Notes()
    LibvirtBackend()._set_role_shares(_RolesLab({"cp1": "control-plane", "w1": "worker"}), doms,
                                      tuning.decide("kvm"), notes)
    assert doms["cp1"].params is None and doms["w1"].params is None and notes.lines == []


def test_host_preparation_guests_keep_equal_shares_and_a_refusal_is_a_note():
    from harness.machines.libvirt import LibvirtBackend

    doms, notes = {"node1": _SchedDom()}, _Notes()
    LibvirtBackend()._set_role_shares(_RolesLab({"node1": "node"}), doms, TCG, notes)
    assert doms["node1"].params is None and notes.lines == []
    doms = {"cp1": _SchedDom(_Error("Requested operation is not valid: cgroup CPU controller is not mounted"))}
    LibvirtBackend()._set_role_shares(_RolesLab({"cp1": "control-plane"}), doms, TCG, notes)
    assert notes.lines == ["machine cp1: CPU shares left as they are "
                           "(Requested operation is not valid: cgroup CPU controller is not mounted)"]


def test_under_tcg_machines_boot_in_turn_when_the_host_has_too_few_cores():
    from harness.machines.libvirt import boot_groups

    two_nodes = [("cp1", 2), ("w1", 1)]
    assert boot_groups(two_nodes, in_turn=True, host_cores=2) == [["cp1"], ["w1"]]
    assert boot_groups(two_nodes, in_turn=True, host_cores=4) == [["cp1", "w1"]]
    assert boot_groups(two_nodes, in_turn=False, host_cores=2) == [["cp1", "w1"]]  # KVM: all at once
    assert boot_groups([("a", 1), ("b", 1), ("c", 1)], in_turn=True, host_cores=2) == [["a", "b"], ["c"]]
    assert boot_groups([("big", 4), ("w1", 1)], in_turn=True, host_cores=2) == [["big"], ["w1"]]


# -- what node-image building asks of the backend ----------------------------------------
class _Stopping:
    """A domain that goes off `polls` checks after its ACPI shutdown (never, with None)."""

    def __init__(self, polls, disk="/v/kubelab-img.node1.qcow2"):
        self.polls, self.shutdowns, self.destroyed, self.disk = polls, 0, False, disk

    def isActive(self):
        if self.shutdowns and self.polls is not None:
            self.polls -= 1
        return not (self.shutdowns and self.polls is not None and self.polls < 0)

    def shutdown(self):
        self.shutdowns += 1

    def destroy(self):
        self.destroyed = True

    def XMLDesc(self, flags):
        return (f"<domain><devices><disk device='disk'><source file='{self.disk}'/></disk>"
                "<disk device='disk'><source file='/v/seed'/></disk></devices></domain>")


class _LabOf:
    name = "img"


def _backend_with(dom, monkeypatch):
    """The backend on `dom`, its clock a counter that each look at it moves by 10 s."""
    import types

    backend = LibvirtBackend()
    monkeypatch.setattr(backend, "_domain", lambda lab, machine: dom)
    clock = iter(range(0, 10_000, 10))
    monkeypatch.setattr("harness.machines.libvirt.time",
                        types.SimpleNamespace(monotonic=lambda: next(clock), sleep=lambda s: None))
    return backend


def test_power_off_is_the_guests_own_shutdown_waited_for(monkeypatch):
    dom = _Stopping(polls=3)
    _backend_with(dom, monkeypatch).power_off(_LabOf(), "node1", timeout=60)
    assert dom.shutdowns == 1 and not dom.destroyed and not dom.isActive()


def test_a_machine_that_will_not_power_off_is_an_error_not_forced(monkeypatch):
    dom = _Stopping(polls=None)
    with pytest.raises(BackendError, match="machine `node1` of lab `img` did not power off within 30s"):
        _backend_with(dom, monkeypatch).power_off(_LabOf(), "node1", timeout=30)
    assert not dom.destroyed  # a disk cut off mid-write would be sealed into the image


def test_the_disk_file_is_the_root_disk_of_the_definition(monkeypatch):
    assert _backend_with(_Stopping(0), monkeypatch).disk_file(_LabOf(), "node1") == \
        Path("/v/kubelab-img.node1.qcow2")
