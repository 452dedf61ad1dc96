"""kubeadm-baseline: where its wall time goes, and what the harness adds.

    .venv/bin/python benchmarks/kubeadm_baseline.py

One real run (a two-node cluster under TCG): wall time split into lab up,
kubeadm init, join, CNI to Ready, Ready to DNS and the S9 proof; the
harness's own share of the wall time (target < 2%), counting guest commands,
cluster API calls, lab up/down and the scenario's waits as unavoidable; and
the figures kubeadm itself prints (`[control-plane-check] ... is healthy
after`). Printed, nothing asserted.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

from scenario_overhead import Meter, MeteredLabs  # beside this file
from harness import host, signals
from harness.cluster import ClusterClient
from harness.progress import Progress
from harness.scenario.engine import Engine, Options
from harness.scenario.files import find
from harness.scenario.load import load


class MeteredCluster:
    def __init__(self, kubeconfig, meter: Meter):
        self._client, self._meter = ClusterClient(kubeconfig), meter

    def __getattr__(self, name):
        value = getattr(self._client, name)
        return self._meter.timed(value) if callable(value) else value


def seconds(value) -> str:
    return "-" if value is None else f"{value:7.1f} s"


def main() -> None:
    host.prepare(log=lambda m: None)
    meters = {"guest": Meter(), "infra": Meter(), "wait": Meter(), "api": Meter()}
    with TemporaryDirectory() as runs:
        start = time.monotonic()
        result = Engine(load(find("kubeadm-baseline")), Options(runs_root=Path(runs)), MeteredLabs(meters),
                        Progress(), sleep=meters["wait"].timed(time.sleep),
                        cluster_client=lambda path: MeteredCluster(path, meters["api"])).run()
        signals.stop_if_signalled()  # it tore its lab down; make nothing more
        wall = time.monotonic() - start
        record = json.loads((result.directory / "run.json").read_text())
        steps = {s["name"]: s for s in record["steps"]}
        init_log = (result.directory / steps["kubeadm init"]["log"]).read_text() if "kubeadm init" in steps else ""
    phases = {p["name"]: p for p in record["phases"]}
    obs = {(o["kind"], o["check"]): o for o in record["observations"]}
    span = lambda p: (p["finished_at"] - p["started_at"]) if p.get("finished_at") else None  # noqa: E731
    ready = obs.get(("expect", "both-nodes-ready"), {}).get("after")
    dns = obs.get(("expect", "dns-answers-from-a-pod"), {}).get("after")
    s9 = obs.get(("expect", "service-reaches-both-pods"), {})
    print(f"kubeadm-baseline: verdict {result.result}, wall {wall:.0f} s")
    print(f"  lab up (prepare)           {seconds(span(phases['prepare']))}")
    print(f"  install phase              {seconds(span(phases['install']) if 'install' in phases else None)}")
    print(f"    kubeadm init             {seconds(steps.get('kubeadm init', {}).get('duration'))}")
    print(f"    kubeadm join             {seconds(steps.get('kubeadm join', {}).get('duration'))}")
    print(f"  CNI applied -> both Ready  {seconds(ready)}")
    print(f"  Ready -> DNS answers       {seconds(dns - ready if dns is not None and ready is not None else None)}")
    print(f"  S9 proof (poll to met)     {seconds(s9.get('after'))}")
    for line in init_log.splitlines():
        if "is healthy after" in line:
            print(f"  kubeadm: {line.strip()}")
    unavoidable = sum(m.seconds for m in meters.values())
    rest = wall - unavoidable
    print(f"  guest commands {meters['guest'].seconds:.1f} s, API calls {meters['api'].seconds:.1f} s, "
          f"lab up/down {meters['infra'].seconds:.1f} s, waits {meters['wait'].seconds:.1f} s")
    print(f"  harness overhead {rest:.2f} s = {100 * rest / wall:.2f}% of wall time (target < 2%)")
    if ready:
        print(f"  ratio: Ready->DNS / CNI->Ready = {((dns or ready) - ready) / ready:.2f}")
    print(f"  record: {result.directory} (removed with the temporary folder)")


if __name__ == "__main__":
    sys.exit(signals.run(main))
