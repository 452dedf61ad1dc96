"""Harness overhead of a scenario run, and detection latency of a check.

    .venv/bin/python benchmarks/scenario_overhead.py [--scenario br-netfilter-missing]

Overhead: the run's wall time minus what the harness cannot avoid (time
inside guest commands over SSH, lab up/down, log collection, and the waits
the scenario asks for: poll intervals, stable_for windows, reboots), as a
share of the wall time (target under 2%).

Detection latency: a file-exists check polls while another connection
creates the file; latency is from the creation to the moment the check saw
it (target under 1 s). One run, printed, nothing asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from harness import host, lifecycle, signals
from harness.progress import Progress
from harness.remote.ssh import SshRemote
from harness.scenario.checks import evaluate
from harness.scenario.engine import Engine, Options
from harness.scenario.labs import BackendLabs
from harness.scenario.files import find
from harness.scenario.load import load
from harness.model import Check, ProbeRef


class Meter:
    def __init__(self):
        self.seconds = 0.0
        self.lock = threading.Lock()

    def timed(self, fn):
        def wrapper(*args, **kwargs):
            start = time.monotonic()
            try:
                return fn(*args, **kwargs)
            finally:
                with self.lock:
                    self.seconds += time.monotonic() - start
        return wrapper


class MeteredRemote:
    def __init__(self, remote, meter):
        self._remote, self.run, self.close = remote, meter.timed(remote.run), remote.close


class MeteredLab:
    def __init__(self, lab, meters):
        self._lab, self._meters, self._remotes = lab, meters, {}
        self.collect_logs = meters["infra"].timed(lab.collect_logs)
        self.down = meters["infra"].timed(lab.down)

    def __getattr__(self, name):
        return getattr(self._lab, name)

    def remote(self, name):
        if name not in self._remotes:
            self._remotes[name] = MeteredRemote(self._lab.remote(name), self._meters["guest"])
        return self._remotes[name]


class MeteredLabs(BackendLabs):
    def __init__(self, meters):
        super().__init__()
        self.meters = meters

    def up(self, *args):
        return MeteredLab(self.meters["infra"].timed(super().up)(*args), self.meters)


def overhead(name: str) -> None:
    meters = {"guest": Meter(), "infra": Meter(), "wait": Meter()}
    scenario = load(find(name))
    with TemporaryDirectory() as runs:
        start = time.monotonic()
        result = Engine(scenario, Options(runs_root=Path(runs)), MeteredLabs(meters), Progress(quiet=True),
                        sleep=meters["wait"].timed(time.sleep)).run()
        signals.stop_if_signalled()  # it tore its lab down; make nothing more
        wall = time.monotonic() - start
    unavoidable = sum(m.seconds for m in meters.values())
    rest = wall - unavoidable
    print(f"scenario {name}: verdict {result.result}, wall {wall:.1f} s")
    print(f"  lab up/down and logs {meters['infra'].seconds:7.1f} s")
    print(f"  guest commands (SSH) {meters['guest'].seconds:7.1f} s")
    print(f"  scenario waits       {meters['wait'].seconds:7.1f} s")
    print(f"  harness overhead     {rest:7.2f} s = {100 * rest / wall:.2f}% of wall time (target < 2%)")


def latency(samples: int = 5) -> None:
    spec = lifecycle.plan_lab(1, "bookworm", 1, 1024, "bench-latency")
    lab = lifecycle.up(spec, Progress(quiet=True))
    try:
        target = lab.ssh_target("node1")
        watcher, actor = SshRemote(target), SshRemote(target)
        for remote in (watcher, actor):  # connect first: a new connection's first command is slow
            remote.run("true", check=True)
        results = []
        for i in range(samples):
            path = f"/run/kubelab-latency-{i}"
            check = Check(name="appears", probe=ProbeRef("file-exists", {"path": path}), equals=True, within=30.0)
            box = {}
            thread = threading.Thread(target=lambda: box.update(outcome=evaluate(check, watcher)))
            thread.start()
            time.sleep(1.0 + 0.37 * i)  # vary the phase against the poll interval
            t0 = time.time()
            actor.run(f"touch {path}", check=True)
            created = (t0 + time.time()) / 2  # the touch happened somewhere in that round trip
            thread.join()
            results.append(box["outcome"].at - created)
        watcher.close()
        actor.close()
    finally:
        lifecycle.down(lab.name, Progress(quiet=True))
    print(f"detection latency over {samples} samples: median {statistics.median(results):.2f} s, "
          f"max {max(results):.2f} s (target < 1 s)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", default="br-netfilter-missing")
    args = ap.parse_args()
    host.prepare(log=lambda m: None)
    overhead(args.scenario)
    latency()


if __name__ == "__main__":
    sys.exit(signals.run(main))
