"""Real run folders without a VM: the engine on scripted machines (test_engine's), writing
the record, step and check logs, evidence, a serial log and the reports as a run does.

As a program it stands in for `invoke scenario NAME` under the matrix runner: it writes
its run into $KUBELAB_RUNS and exits with the run's code. The outcome follows the name:
`...-fail` has an expectation that is not met (1), `...-infra` a fault that does not
take (2), anything else is met (0).
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from harness.progress import Progress
from harness.scenario.engine import Engine, Options
from tests.unit.test_engine import IP_FORWARD, FakeClock, FakeLab, FakeLabs, ip_forward_remote, scenario_file


class SerialLab(FakeLab):
    """A lab whose machines leave a serial console log, as libvirt's do."""

    def collect_logs(self, name, dest):
        dest.mkdir(parents=True, exist_ok=True)
        path = dest / f"{name}.serial.log"
        path.write_text("[    0.000000] Linux version 6.1.0-50-cloud-amd64\nDebian GNU/Linux 12 node1 ttyS0\n")
        return [path]


def host_run(runs_root: Path, name: str = "demo"):
    """A finished run of an ip_forward scenario named `name`: the engine's RunResult."""
    body = IP_FORWARD
    if name.endswith("-fail"):
        body = body.replace('equals: "0"}', 'pattern: "no such line"}')
    with tempfile.TemporaryDirectory() as d:
        scenario = scenario_file(Path(d), body)
        scenario = replace(scenario, name=name)
        clock = FakeClock()
        result = Engine(scenario, Options(runs_root=runs_root), FakeLabs(SerialLab({"node1": ip_forward_remote(
            armed=not name.endswith("-infra"))})), Progress(quiet=True), clock=clock, sleep=clock.sleep).run()
    return result


if __name__ == "__main__":
    sys.exit(host_run(Path(os.environ["KUBELAB_RUNS"]), sys.argv[1]).exit_code)
