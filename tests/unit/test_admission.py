"""Admission: whether this host can run a lab is asked when a run starts, with the exact
shortfall, and nothing is created when the answer is no. (A scenario file is valid or not
whatever the host: tests/unit/test_scenario_lint.py.)"""

import os

import pytest

from harness import capacity, lifecycle
from harness.errors import UsageError
from harness.lab import MachineSpec
from harness.scenario.engine import Engine, Options
from harness.scenario.labs import BackendLabs
from harness.scenario.load import load

WIDE = """\
apiVersion: kubelab/v1
kind: Scenario
name: wide
summary: A machine with more vCPUs than the host has cores.
lab:
  suite: bookworm
  machines:
    - {name: node1, cpus: 8}
    - {name: node2, cpus: 2}
expect:
  - name: ip-forward-off
    target: node1
    probe: {sysctl: {key: net.ipv4.ip_forward}}
    equals: "0"
"""


def test_a_machine_wider_than_the_host_is_refused_with_the_shortfall():
    machines = [MachineSpec("node1", "node", 8, 1024), MachineSpec("node2", "node", 2, 1024)]
    with pytest.raises(UsageError) as info:
        capacity.check_capacity(machines, available_mib=1 << 20, host_cores=2)
    assert str(info.value) == ("this host cannot run the lab: machine node1 asks for 8 vCPUs and the host has "
                               "2 core(s), 6 short")


def test_machines_within_the_hosts_cores_and_memory_are_admitted():
    machines = [MachineSpec("node1", "node", 2, 1024), MachineSpec("node2", "node", 2, 1024)]
    capacity.check_capacity(machines, available_mib=1 << 20, host_cores=2)  # each fits; none is wider


def test_a_run_of_a_scenario_wider_than_the_host_ends_with_exit_2_and_creates_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)

    def must_not_run(*args, **kwargs):
        raise AssertionError("a lab was created for a scenario the host cannot run")

    monkeypatch.setattr(lifecycle, "up", must_not_run)
    path = tmp_path / "wide.yaml"
    path.write_text(WIDE)
    result = Engine(load(path), Options(runs_root=tmp_path / "runs"), BackendLabs()).run()
    assert (result.exit_code, result.result) == (2, "error")
    assert "machine node1 asks for 8 vCPUs and the host has 2 core(s), 6 short" in result.reason


def test_the_matrix_plan_names_a_cell_whose_machine_is_wider_than_the_host(tmp_path, monkeypatch):
    from pathlib import Path

    from harness.matrix import run
    from harness.matrix.cells import make_cells

    path = tmp_path / "wide.yaml"
    path.write_text(WIDE)
    scenarios = {"wide": load(path)}
    cells = make_cells(scenarios, ("1.36.3",), ("bookworm",))
    opts = run.Options(out=Path("/nonexistent"), memory_budget_mib=20000)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert ("    a machine asks for 8 vCPUs and this host has 2 core(s): its runs are refused when they start "
            "(INFRA)") in run.plan_lines(cells, scenarios, opts)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert not any("vCPUs and this host" in line for line in run.plan_lines(cells, scenarios, opts))
