"""Cluster probes' input captured from a real cluster, and played back to them in unit tests.

A capture is what a probe asked the API server (ClusterClient's methods) and what came back, as
the API's own JSON (the client's models serialised by the client) or text (logs, exec output).
Playback hands the probe the same models, deserialised by the same client, so a parser test reads
what a real cluster said, not objects written by hand.

Capture against a kept lab (`invoke scenario kubeadm-baseline --keep`):

    .venv/bin/python -m tests.cluster_capture LAB OUT.json PROBE-KIND[:ARGS-JSON] ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from kubernetes import client as k

CAPTURED = Path(__file__).parent / "fixtures" / "cluster"
# ClusterClient's readers and the model each returns (a list of it where the method returns .items)
MODELS = {"nodes": "list[V1Node]", "pods": "list[V1Pod]", "events": "list[CoreV1Event]", "all_pods": "list[V1Pod]",
          "services": "list[V1Service]", "daemon_sets": "list[V1DaemonSet]", "deployments": "list[V1Deployment]",
          "replica_sets": "list[V1ReplicaSet]", "endpoint_slices": "list[V1EndpointSlice]",
          "config_map": "V1ConfigMap", "version": None, "logs": None, "exec": None, "kubelet_config": None}
EFFECTS = ("ensure_probe_pod", "ensure_web")  # what a probe makes before it reads: nothing to play back


class Recording:
    """A ClusterClient whose answers are written down as they come."""

    def __init__(self, cluster):
        self._cluster, self.calls = cluster, []

    def __getattr__(self, name):
        real = getattr(self._cluster, name)
        if name not in MODELS and name not in EFFECTS:
            return real

        def call(*args, **kwargs):
            result = real(*args, **kwargs)
            if name in MODELS:
                data = self._cluster.api_client.sanitize_for_serialization(result) if MODELS[name] else result
                self.calls.append({"method": name, "args": list(args), "kwargs": kwargs, "result": data})
            return result
        return call


class Playback:
    """Answers each reader from a capture, in the order the probe asked; asked anything else, it fails."""

    def __init__(self, calls: list[dict]):
        self._calls, self._api = list(calls), k.ApiClient()

    def __getattr__(self, name):
        if name in EFFECTS:
            return lambda *a, **kw: None
        if name not in MODELS:
            raise AttributeError(name)

        def call(*args, **kwargs):
            assert self._calls, f"the probe asked {name}{tuple(args)} beyond the capture"
            recorded = self._calls.pop(0)
            assert (recorded["method"], recorded["args"]) == (name, list(args)), \
                f"the probe asked {name}{tuple(args)}; the capture has {recorded['method']}{tuple(recorded['args'])}"
            model = MODELS[name]
            if not model:
                return recorded["result"]
            if model.startswith("list["):  # item by item: client releases spell list types differently
                return [self._model(item, model[5:-1]) for item in recorded["result"]]
            return self._model(recorded["result"], model)
        return call

    def _model(self, data, model: str):
        return self._api.deserialize(json.dumps(data), model, "application/json")


def load(name: str) -> dict:
    """A capture: {"source": where it was taken, "probes": [{"kind", "args", "calls", "text"}]}."""
    return json.loads((CAPTURED / f"{name}.json").read_text())


def capture(lab: str, out: Path, probes: list[tuple[str, dict]]) -> None:
    from harness.evidence.record import RunRecord
    from harness.probes import make
    from harness.verify.session import lab_connector
    from harness.verify.access import TOOLBOX

    import tempfile
    record = RunRecord(Path(tempfile.mkdtemp()), {})  # where the admin kubeconfig is written, privately
    access, where = lab_connector(lab, TOOLBOX)(record)
    taken = []
    for kind, args in probes:
        rec = Recording(access.cluster)
        reading, _ = make(kind, args).observe(rec, "")
        taken.append({"kind": kind, "args": args, "calls": rec.calls, "text": reading.text})
    version = access.cluster.version()
    out.write_text(json.dumps({"source": f"lab {where['name']} ({where['suite']}), Kubernetes {version}",
                               "probes": taken}, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    lab_name, out_file, *specs = sys.argv[1:]
    wanted = []
    for spec in specs:
        kind, _, args = spec.partition(":")
        wanted.append((kind, json.loads(args) if args else {}))
    capture(lab_name, Path(out_file), wanted)
