"""Capture what a machine probe's own command prints on a real guest, as a parser fixture
(tests/fixtures/outputs/<name>.json: command, exit code, stdout, stderr).

    .venv/bin/python -m tests.output_capture LAB MACHINE NAME KIND[:ARGS-JSON]
"""

from __future__ import annotations

import json
import sys

from harness.lab import Lab
from harness.probes import make
from harness.remote.ssh import SshRemote
from tests.unit.captured import OUTPUTS


def capture(lab: str, machine: str, name: str, kind: str, args: dict) -> None:
    command = make(kind, args).command()
    with SshRemote(Lab.load(lab).ssh_target(machine)) as remote:
        result = remote.run(command, timeout=60)
    (OUTPUTS / f"{name}.json").write_text(json.dumps({"command": command, "exit_code": result.exit_code,
                                                      "stdout": result.stdout, "stderr": result.stderr},
                                                     indent=1) + "\n")


if __name__ == "__main__":
    lab_name, machine_name, fixture, spec = sys.argv[1:]
    kind, _, raw = spec.partition(":")
    capture(lab_name, machine_name, fixture, kind, json.loads(raw) if raw else {})
