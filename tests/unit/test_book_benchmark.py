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


def _book(wall, cores="2", cpu=None, phases=None, scenarios=None):
    return {"wall": wall, "host_cores": cores, "guest_cpu": cpu or {}, "by_phase": phases or {}, "by_kind": {},
            "per_scenario": {n: {"total": s} for n, s in (scenarios or {}).items()}}


def test_the_cpu_floor_scales_the_recorded_phases_cpu_to_all_the_runs_over_the_hosts_cores():
    bench = _bench()
    # 300 CPU s in 200 s of recorded phases, 400 s of runs summed: 600 CPU s, 300 s of wall on 2 cores
    b = _book(1000.0, cpu={"install": (150.0, 200.0), "verify": (50.0, 100.0)},
              phases={"prepare": 200.0, "install": 150.0, "verify": 50.0})
    floor = bench.cpu_floor(b)
    assert (floor["cpu_s"], floor["floor_s"]) == (pytest.approx(600.0), pytest.approx(300.0))
    assert "at least 300 s (5.0 min) of wall on 2 cores, against the book's 1000 s" in bench.floor_lines(b)[1]
    assert bench.cpu_floor(_book(1000.0, phases={"install": 10.0})) is None  # no CPU recorded: no floor
    assert bench.cpu_floor(_book(1000.0, cores="2, 4", cpu={"install": (1.0, 1.0)}, phases={"install": 1.0})) is None


def test_two_books_are_compared_row_by_row():
    bench = _bench()
    before = _book(1000.0, phases={"install": 400.0}, scenarios={"a": 600.0, "b": 100.0})
    after = _book(800.0, phases={"install": 300.0}, scenarios={"a": 450.0, "c": 50.0})
    table = bench.compare(before, after).splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in table[1:] if len(line.split()) == 5}
    assert table[1].split()[-4:] == ["1000", "800", "-200", "-20.0%"]  # the book's wall
    assert rows["install"] == ["400", "300", "-100", "-25.0%"]
    assert rows["a"] == ["600", "450", "-150", "-25.0%"] and rows["c"] == ["0", "50", "+50", "-"]
    assert rows["b"] == ["100", "0", "-100", "-100.0%"]
