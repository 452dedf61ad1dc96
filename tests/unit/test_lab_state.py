"""The lab state folder."""

import json
import stat

import pytest

from harness.errors import LabError, UsageError
from harness.lab import Lab, LabSpec, MachineSpec
from harness.machines.libvirt import lab_of, pick_subnet


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBELAB_HOME", str(tmp_path))
    return tmp_path


def spec(name="demo"):
    return LabSpec(name, "bookworm", "libvirt", (MachineSpec("node1", "node", 1, 512), MachineSpec("node2", "node", 1, 512)))


def test_create_writes_state_and_private_keys(home):
    lab = Lab.create(spec(), {"id": "img"})
    state = json.loads((home / "labs/demo/state.json").read_text())
    assert state["status"] == "creating" and [m["name"] for m in state["machines"]] == ["node1", "node2"]
    for key in (lab.client_key, lab.host_key_path("node1"), lab.host_key_path("node2")):
        assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert lab.host_public_key("node1") != lab.host_public_key("node2")


def test_objects_are_recorded_immediately(home):
    lab = Lab.create(spec(), {"id": "img"})
    lab.record("domains", "kubelab-demo.node1")
    assert Lab.load("demo").state["objects"]["domains"] == ["kubelab-demo.node1"]
    lab.forget("domains", "kubelab-demo.node1")
    assert Lab.load("demo").state["objects"]["domains"] == []


def test_existing_lab_is_not_overwritten(home):
    Lab.create(spec(), {"id": "img"})
    with pytest.raises(LabError, match="lab `demo` already exists"):
        Lab.create(spec(), {"id": "img"})


def test_unknown_lab_lists_known_ones(home):
    Lab.create(spec("one"), {"id": "img"})
    with pytest.raises(LabError, match="no lab `two` .*labs: `one`"):
        Lab.load("two")


def test_unknown_machine_lists_machines(home):
    lab = Lab.create(spec(), {"id": "img"})
    with pytest.raises(UsageError, match="no machine `node9`; its machines: `node1`, `node2`"):
        lab.machine("node9")


def test_ssh_target_needs_an_address(home):
    lab = Lab.create(spec(), {"id": "img"})
    with pytest.raises(LabError, match="has no address yet"):
        lab.ssh_target("node1")
    lab.machine("node1")["ip"] = "192.168.100.10"
    t = lab.ssh_target("node1")
    assert (t.host, t.port, t.user, t.key_path) == ("192.168.100.10", 22, "root", lab.client_key)
    assert t.host_key == lab.host_public_key("node1")


def test_object_names_map_back_to_their_lab():
    assert lab_of("kubelab-demo.node1.qcow2") == "demo"
    assert lab_of("kubelab-my-lab") == "my-lab"
    assert lab_of("default") is None


def test_subnet_choice_avoids_taken_networks():
    import ipaddress

    taken = [ipaddress.ip_network("192.168.100.0/24"), ipaddress.ip_network("192.168.96.0/21")]
    assert pick_subnet(taken, ["192.168.100.0/24", "192.168.101.0/24", "192.168.104.0/24"]) == "192.168.104.0/24"


def test_down_all_removes_each_lab_then_sweeps_what_no_lab_claims(home, monkeypatch):
    """`lab.down --all`: every lab through its own teardown, then the janitor, told to keep
    nothing (every lab is gone), for what no state file knows. The janitor itself runs on
    real libvirt in tests/vm/test_lab_teardown.py."""
    from harness import bringup, lifecycle
    from harness.progress import Progress
    from harness.serve import lab as services

    for name in ("one", "two"):
        Lab.create(spec(name), {"id": "img"})
    calls = []

    class Backend:
        def check(self):
            pass

        def destroy(self, lab):
            calls.append(("destroy", lab.name))
            return [f"domain kubelab-{lab.name}.node1"]

        def remove_leftovers(self, keep_labs):
            calls.append(("sweep", set(keep_labs)))
            return ["volume kubelab-gone.node1.qcow2"]

    monkeypatch.setattr(bringup, "backend_for", lambda name: Backend())
    monkeypatch.setattr(lifecycle, "backend_for", lambda name: Backend())
    monkeypatch.setattr(services, "stop", lambda lab: [])
    monkeypatch.setattr(services, "orphans", lambda keep_labs: [])
    removed = lifecycle.down_all(Progress(quiet=True))
    assert calls == [("destroy", "one"), ("destroy", "two"), ("sweep", set())]
    assert removed == ["volume kubelab-gone.node1.qcow2"] and Lab.names() == []


@pytest.mark.parametrize("name", ["br-netfilter-missing", "kubeadm-baseline", "kubespray-layer-check"])
def test_a_pooled_lab_records_the_shape_its_scenarios_ask_for(home, name):
    """A pool is made from a scenario's lab spec and checked against each run's: every part the
    spec holds (the guest recipe too) must come back from the state folder, or no run could
    use the pool (found in the vm tier when the recipe joined the shape)."""
    from harness.scenario.files import find
    from harness.scenario.labs import lab_spec, shape, state_shape
    from harness.scenario.load import load

    scenario = load(find(name))
    spec = lab_spec(scenario, scenario.lab.suite, "pool-1")
    lab = Lab.create(spec, {"id": "img"})
    want = shape(spec)
    assert state_shape(Lab.load("pool-1").state) == want[:5] + want[6:]
    assert state_shape(lab.state)[-1] == spec.recipe


class PausingBackend:
    def __init__(self, fails=None):
        self.paused, self.fails = [], fails

    def pause(self, lab, machine):
        if self.fails:
            raise self.fails
        self.paused.append(machine)
        return True


def test_a_pooled_lab_is_paused_between_its_runs_and_a_failed_pause_costs_no_verdict(home):
    """A pool left running kept its last cluster busy beside the next scenario of the cell."""
    import io

    from harness.errors import BackendError
    from harness.progress import Progress
    from harness.scenario.labs import PooledHandle

    lab = Lab.create(spec("pool-1"), {"id": "img"})
    backend, out = PausingBackend(), io.StringIO()
    PooledHandle(lab, backend).down(Progress(out))
    assert backend.paused == ["node1", "node2"]
    assert "lab `pool-1` kept for the next scenario of its pool (snapshot kubelab-fanout-base); " \
           "its machines paused until then" in out.getvalue()
    out = io.StringIO()
    PooledHandle(lab, PausingBackend(BackendError("pause of `node1` failed: no"))).down(Progress(out))
    assert "lab `pool-1`: pause of `node1` failed: no; its machines run on" in out.getvalue()
    assert "paused until then" not in out.getvalue()
