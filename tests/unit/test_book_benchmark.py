"""benchmarks/book.py's breakdown of a run: every second of its phases goes to exactly one kind of
wait (read on the captured real run, tests/fixtures/runs/br-netfilter-missing)."""

import json
from pathlib import Path

import pytest

from tests.unit import benchmark_module

RUN = Path(__file__).parent.parent / "fixtures/runs/br-netfilter-missing/run.json"


def _bench():
    return benchmark_module.load("book")


def test_a_runs_kinds_of_wait_add_up_to_its_phases():
    bench = _bench()
    run = json.loads(RUN.read_text())
    phases, kinds = bench.run_breakdown(run)
    assert sum(kinds.values()) == pytest.approx(sum(phases.values()), abs=0.01)
    assert kinds["guest rebooting"] == pytest.approx(66.29, abs=1.0)  # the recovery's reboot step, 66.29 s
    assert kinds["lab up or restored"] == pytest.approx(phases["prepare"])
    assert set(kinds) <= set(bench.KINDS)


def test_time_covered_twice_is_counted_once():
    bench = _bench()
    assert bench._union([(0, 10), (5, 15), (20, 25)]) == 20


def test_the_guests_cpu_is_read_per_phase_and_said_as_cores_kept_busy():
    bench = _bench()
    run = json.loads(RUN.read_text())
    assert bench.guest_cpu(run) == {}  # captured before phases recorded it
    recover = next(p for p in run["phases"] if p["name"] == "recover")
    recover["guest_cpu_s"] = {"node1": 30.0, "node2": 12.5}
    wall = recover["finished_at"] - recover["started_at"]
    assert bench.guest_cpu(run) == {"recover": (pytest.approx(wall), 42.5)}
    recover["host_cpu_s"] = {"busy": 30.0, "idle": 10.0}
    assert bench.host_idle(run) == {"recover": (30.0, 10.0)}
    lines = bench.cpu_lines({"guest_cpu": {"recover": (20.0, 42.5)}, "host_cpu": {"recover": (30.0, 10.0)},
                             "host_cores": "2"})
    assert lines[1].split() == ["recover", "20", "42", "2.12", "25.0%"] and "(host: 2 cores)" in lines[0]
    assert "not in these runs' records" in bench.cpu_lines({"guest_cpu": {}, "host_cpu": {}, "host_cores": "?"})[0]
