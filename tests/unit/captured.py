"""Probes parsing what real guests and clusters said: the one way a parser test reads captured
output, so that test_probe_capture_rule.py can tell which probe kinds have such a test.

- machine probes: tests/fixtures/outputs/<name>.json (command, exit code, stdout, stderr), taken
  on real bookworm, trixie and sid guests;
- cluster probes: tests/fixtures/cluster/<name>.json, what each probe asked a real API server and
  what came back (tests/cluster_capture.py), played back to the probe;
- host probes: tests/fixtures/plays/<name>.log, a real ansible-playbook's output under kubespray's
  ansible.cfg and venv, read by the play log as a run's host step reads it.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.probes import make
from harness.probes.base import Reading
from harness.remote.result import CommandResult
from tests import cluster_capture

OUTPUTS = Path(__file__).parent.parent / "fixtures" / "outputs"
PLAYS = Path(__file__).parent.parent / "fixtures" / "plays"


def output(name: str) -> CommandResult:
    d = json.loads((OUTPUTS / f"{name}.json").read_text())
    return CommandResult("node1", d["command"], d["exit_code"], d["stdout"], d["stderr"], 0.0, 0.1)


def machine(kind: str, args: dict, fixture: str) -> Reading:
    """Probe `kind` parsing the output its own command gave on a real guest."""
    probe = make(kind, args)
    result = output(fixture)
    assert probe.command() == result.command, "fixture was captured with another command"
    return probe.parse(result)


def cluster(kind: str, args: dict, capture: str) -> Reading:
    """Probe `kind` reading what a real cluster answered it (the capture's entry for kind and args)."""
    taken = cluster_capture.load(capture)
    entry = next((p for p in taken["probes"] if p["kind"] == kind and p["args"] == args), None)
    assert entry is not None, f"{capture}: no capture of {kind} {args}"
    reading, code = make(kind, args).observe(cluster_capture.Playback(entry["calls"]), "")
    assert code == 0, reading.text
    return reading


def recorded_play(capture: str) -> dict:
    """A captured play as a run records it (run.json's steps[].ansible)."""
    from harness.kubespray.play_log import PlayLog

    play = PlayLog(lambda: 0.0)
    for line in (PLAYS / f"{capture}.log").read_text().splitlines():
        play.feed(line)
    play.finish()
    return play.summary()


def play(kind: str, args: dict, capture: str) -> Reading:
    """Probe `kind` reading a real play's output, recorded as a run records it."""
    reading, code = make(kind, args).observe([recorded_play(capture)], "")
    assert code is None or code == 0, reading.text
    return reading
