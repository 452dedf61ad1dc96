"""The run folders the unit tests render (tests/fixtures/runs/<scenario>/) are captured from real
runs; each must still be a run of its scenario as the file is now, so a renamed or removed check
fails here instead of leaving tests that render checks no scenario has."""

import json
from pathlib import Path

import pytest

from harness.faults import FAULTS
from harness.scenario.files import find
from harness.scenario.load import load

RUNS = Path(__file__).parent.parent / "fixtures" / "runs"


def check_names(scenario, facts: dict) -> dict[str, set[str]]:
    """{observation kind: the check names a run of `scenario` records under it}."""
    armed, persisted = set(), set()
    for f in scenario.faults:
        fault = FAULTS[f.kind]({**f.params}, facts)
        armed |= {c.name for c in fault.armed_checks()}
        persisted |= {f"{f.kind}: {c.name}" for c in fault.persistence_checks()}
    return {"armed": armed, "expect": {c.name for c in scenario.expect},
            "observe": {c.name for c in scenario.observe}, "verify": {c.name for c in scenario.verify} | persisted}


def captured_runs() -> list[Path]:
    return sorted(RUNS.glob("*/run.json"))


@pytest.mark.parametrize("path", captured_runs(), ids=lambda p: p.parent.name)
def test_a_captured_run_names_only_checks_its_scenario_has(path):
    run = json.loads(path.read_text())
    scenario = load(find(path.parent.name))
    assert run["scenario"]["name"] == scenario.name
    facts = next(iter(run["machines"].values())).get("versions", {})
    known = check_names(scenario, facts)
    gone = sorted({f"{o['kind']} {o['check']}" for o in run["observations"]
                   if o["kind"] in known and o["check"] not in known[o["kind"]]})
    assert gone == [], f"{path}: checks its scenario no longer has; capture the run again"


def test_every_captured_run_was_real_and_is_redacted():
    """Not a record written by hand: a lab name, image and acceleration as a run writes them, and
    nothing the redaction would change."""
    from harness.evidence.redact import redact_obj

    assert captured_runs()
    for path in captured_runs():
        run = json.loads(path.read_text())
        assert run["lab"]["image"].startswith(f"debian-{run['lab']['suite']}-") and run["lab"]["accel"]
        assert run["started_at"] != int(run["started_at"])  # a clock's reading, not a round number typed in
        assert redact_obj(run) == run
