"""The run's watch on its machines (harness/scenario/watch.py), with a stand-in lab handle: a loss
is cut once and noted once; a server loss names the server; a backend that cannot answer is no
news; a suspended host is told by its boot clock running ahead of the monotonic one."""

import time

from harness.scenario import watch


class Handle:
    machines = ["cp1", "w1"]

    def __init__(self):
        self.found, self.cuts = {}, []

    def health(self):
        if self.found is None:
            raise ConnectionError("libvirtd restarting")
        return dict(self.found)

    def cut(self, what, cause):
        self.cuts.append(what)


def test_a_lost_machine_is_cut_and_noted_once_and_named_in_the_cause():
    handle, notes = Handle(), []
    w = watch.MachineWatch(handle, note=notes.append)
    assert w.look() == {} and w.cause() == ""
    handle.found = {"w1": "its QEMU process ended under the run"}
    assert w.look() == {"w1": "its QEMU process ended under the run"}
    assert w.look() == {}  # seen already
    assert handle.cuts == ["w1"] and notes == ["machine w1: its QEMU process ended under the run"]
    assert w.cause() == "machine w1: its QEMU process ended under the run"


def test_a_lost_server_is_named_by_its_own_cause():
    handle, notes = Handle(), []
    w = watch.MachineWatch(handle, note=notes.append)
    handle.found = {"server registry": "the lab's registry at http://192.168.100.1:5000/v2/ (pid 7) is gone"}
    w.look()
    assert handle.cuts == ["server registry"]
    assert w.cause() == "the lab's registry at http://192.168.100.1:5000/v2/ (pid 7) is gone"


def test_a_backend_that_cannot_answer_is_no_news():
    handle = Handle()
    handle.found = None
    w = watch.MachineWatch(handle)
    assert w.look() == {} and w.lost == {}


def test_a_suspended_host_is_seen_from_its_clocks(monkeypatch):
    clocks = {"boot": 1000.0, "mono": 500.0}
    monkeypatch.setattr(time, "clock_gettime", lambda which: clocks["boot"])
    monkeypatch.setattr(time, "monotonic", lambda: clocks["mono"])
    handle = Handle()
    w = watch.MachineWatch(handle)
    assert w.look() == {}
    clocks["boot"] += 2.0
    clocks["mono"] += 2.0
    assert w.look() == {}  # both ran on together: awake
    clocks["boot"] += 62.0
    clocks["mono"] += 2.0  # the monotonic clock stood for a minute: the host slept
    lost = w.look()
    assert sorted(lost) == ["cp1", "w1"]
    assert lost["cp1"].startswith("the host was suspended for 60 s under the run")
