"""Cluster probes: read through the Kubernetes API (harness/cluster.py), target `cluster`.

Each `read()` returns a Reading: `value` for `equals`, `text` (one line per
object, stable order) for patterns and counts. An API that does not answer is
a reading too ("API not answering: ..."), so a check keeps polling through
an API server restart instead of failing the run; only transport and API
errors are that, a bug in a probe is an internal error.
"""

from __future__ import annotations

import re

from ..params import Param
from .base import Probe, Reading

TOOLBOX = "kubelab.local/toolbox:1"


class ClusterProbe(Probe):
    target = "cluster"
    # Every poll is API requests to a control plane that, under TCG, has little CPU to
    # spare: polled four times a second, the probes themselves kept it from settling.
    poll_interval = 5.0

    def command(self, ctx=None) -> str:
        return self.api()

    def api(self) -> str:
        raise NotImplementedError

    def observe(self, cluster, command: str) -> tuple[Reading, int | None]:
        try:
            return self.read(cluster), 0
        except not_answering() as exc:  # "not yet": the check polls on
            reason = getattr(exc, "reason", None) or type(exc).__name__
            text = f"API not answering: {reason}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
            return Reading(None, text), None
        # anything else (AttributeError, KeyError, TypeError, ...) is a bug in the probe:
        # it ends the phase as an internal error (exit 2), never as a check not met

    def read(self, cluster) -> Reading:
        raise NotImplementedError


def not_answering() -> tuple[type[BaseException], ...]:
    """What an API server that is down, restarting or slow raises through the client: an
    HTTP error status (ApiException; the exec stream wraps its failures in one too,
    kubernetes/stream/ws_client.py), urllib3's connection, protocol and timeout errors, and
    the socket's (OSError: refused, reset, unreachable, TLS, timeouts)."""
    from http.client import HTTPException

    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    return (ApiException, HTTPError, HTTPException, OSError)


def _ready(node) -> str:
    for cond in node.status.conditions or []:
        if cond.type == "Ready":
            return cond.status
    return "Unknown"


class NodeReady(ClusterProbe):
    """value: how many nodes are Ready (or, with `node`, that node's Ready status:
    True, False, Unknown or absent); text: `<node> Ready=<status> <reason>: <message>` per node."""

    kind = "node-ready"
    ARGS = {"node": Param(str, required=False)}

    def api(self) -> str:
        return "GET /api/v1/nodes  # Ready condition"

    def read(self, cluster) -> Reading:
        nodes = sorted(cluster.nodes(), key=lambda n: n.metadata.name)
        lines = []
        for n in nodes:
            cond = next((c for c in n.status.conditions or [] if c.type == "Ready"), None)
            lines.append(f"{n.metadata.name} Ready={_ready(n)} {cond.reason if cond else ''}: "
                         f"{cond.message if cond else ''}".rstrip())
        text = "\n".join(lines)
        if self.args["node"]:
            found = next((n for n in nodes if n.metadata.name == self.args["node"]), None)
            return Reading(_ready(found) if found else "absent", text)
        return Reading(sum(1 for n in nodes if _ready(n) == "True"), text)


class NodePodCidr(ClusterProbe):
    """value: `<node>=<podCIDR>` per node, comma-separated; text: one line per node."""

    kind = "node-podcidr"

    def api(self) -> str:
        return "GET /api/v1/nodes  # spec.podCIDR"

    def read(self, cluster) -> Reading:
        pairs = [f"{n.metadata.name}={n.spec.pod_cidr or ''}" for n in sorted(cluster.nodes(), key=lambda n: n.metadata.name)]
        return Reading(",".join(pairs), "\n".join(pairs))


def _state(status) -> str:
    if status is None or status.state is None:
        return "none"
    if status.state.waiting:
        return f"Waiting({status.state.waiting.reason})"
    if status.state.terminated:
        return f"Terminated({status.state.terminated.reason}, exit {status.state.terminated.exit_code})"
    return "Running"


# A container in CrashLoopBackOff waits with the message "back-off 40s restarting failed
# container=... pod=..." (kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff, v1.36.3):
# the kubelet's current delay, 10 s doubling to 300 s (pkg/kubelet/kubelet.go initialCrashLoopBackOff;
# kubelet config v1beta1 MaxContainerBackOff).
BACKOFF_RE = re.compile(r"^back-off (\S+) restarting failed container")


def _backoff(statuses) -> str:
    for s in statuses:
        waiting = s.state.waiting if s.state else None
        m = BACKOFF_RE.match((waiting.message or "") if waiting else "")
        if m:
            return m.group(1)
    return "none"


class Pods(ClusterProbe):
    """value: the chosen `field` of each matching pod, comma-separated (phase, ready,
    restarts, state, node, backoff); text: `<pod> node=<n> phase=<p> ready=<r> restarts=<k>
    state=<s> owner=<kind> backoff=<the kubelet's CrashLoopBackOff delay, or none>` per pod."""

    kind = "pods"
    ARGS = {"namespace": Param(str), "selector": Param(str, required=False, default=""),
            "field": Param(str, required=False, default="phase",
                           choices=("phase", "ready", "restarts", "state", "node", "count", "backoff"))}

    def api(self) -> str:
        sel = f"?labelSelector={self.args['selector']}" if self.args["selector"] else ""
        return f"GET /api/v1/namespaces/{self.args['namespace']}/pods{sel}"

    def read(self, cluster) -> Reading:
        pods = sorted(cluster.pods(self.args["namespace"], self.args["selector"]), key=lambda p: p.metadata.name)
        rows = []
        for p in pods:
            statuses = p.status.container_statuses or []
            ready = all(s.ready for s in statuses) and bool(statuses)
            restarts = sum(s.restart_count for s in statuses)
            state = ",".join(_state(s) for s in statuses) or "none"
            owner = (p.metadata.owner_references or [None])[0]
            rows.append({"name": p.metadata.name, "node": p.spec.node_name or "", "phase": p.status.phase,
                         "ready": str(ready).lower(), "restarts": str(restarts), "state": state,
                         "owner": owner.kind if owner else "none", "backoff": _backoff(statuses)})
        text = "\n".join(f"{r['name']} node={r['node']} phase={r['phase']} ready={r['ready']} "
                         f"restarts={r['restarts']} state={r['state']} owner={r['owner']} backoff={r['backoff']}"
                         for r in rows)
        field = self.args["field"]
        if field == "count":
            return Reading(len(rows), text)
        return Reading(",".join(r[field] for r in rows), text)


class PodLogs(ClusterProbe):
    """text: the last 200 log lines of the first matching pod's container (of its
    previous instance with `previous: true`); value: the number of lines."""

    kind = "pod-logs"
    UPSTREAM_TEXT = True
    ARGS = {"namespace": Param(str), "selector": Param(str), "container": Param(str, required=False),
            "previous": Param(bool, required=False, default=False)}

    def api(self) -> str:
        prev = "&previous=true" if self.args["previous"] else ""
        return (f"GET /api/v1/namespaces/{self.args['namespace']}/pods/<first of {self.args['selector']}>/log"
                f"?container={self.args['container'] or ''}{prev}")

    def read(self, cluster) -> Reading:
        pods = sorted(cluster.pods(self.args["namespace"], self.args["selector"]), key=lambda p: p.metadata.name)
        if not pods:
            return Reading(0, f"no pod matches {self.args['selector']}")
        from kubernetes.client.exceptions import ApiException

        try:
            text = cluster.logs(self.args["namespace"], pods[0].metadata.name, self.args["container"],
                                self.args["previous"])
        except ApiException as exc:  # e.g. "previous terminated container not found" while it first runs
            return Reading(0, f"{pods[0].metadata.name}: no logs yet ({exc.status}: {exc.reason})")
        return Reading(len(text.splitlines()), text)


class Events(ClusterProbe):
    """text: `<reason> <kind>/<name>: <message>` per event, oldest first; value: how many."""

    kind = "events"
    UPSTREAM_TEXT = True
    ARGS = {"namespace": Param(str), "reason": Param(str, required=False)}

    def api(self) -> str:
        return f"GET /api/v1/namespaces/{self.args['namespace']}/events"

    def read(self, cluster) -> Reading:
        events = [e for e in cluster.events(self.args["namespace"])
                  if not self.args["reason"] or e.reason == self.args["reason"]]
        events.sort(key=lambda e: (e.last_timestamp or e.event_time or e.metadata.creation_timestamp).isoformat())
        lines = [f"{e.reason} {e.involved_object.kind}/{e.involved_object.name}: {e.message}" for e in events]
        return Reading(len(lines), "\n".join(lines))


# A proof whose pods are not running yet read one pod list, not an exec: it looks again this soon,
# so the proof starts within seconds of its pods (the exec's own 10 s interval applies after).
NOT_RUNNING_AGAIN = 2.0


class Dns(ClusterProbe):
    """DNS from inside a pod: `nslookup <name>` in kubelab's toolbox pod (created on
    first use). value: "answered" or "no answer"; text: nslookup's output."""

    kind = "dns"
    poll_interval = 10.0  # an exec: a new connection and stream each time
    ARGS = {"name": Param(str, required=False, default="kubernetes.default.svc.cluster.local")}

    def api(self) -> str:
        return f"POST /api/v1/namespaces/default/pods/kubelab-probe/exec  # nslookup {self.args['name']}"

    def read(self, cluster) -> Reading:
        from ..cluster import NAMESPACE, PROBE_POD

        cluster.ensure_probe_pod(TOOLBOX)
        pod = next(iter(cluster.pods(NAMESPACE, f"app={PROBE_POD}")), None)
        if pod is None or pod.status.phase != "Running":
            return Reading("no answer", f"probe pod not running yet (phase {pod.status.phase if pod else 'absent'})",
                           again_in=NOT_RUNNING_AGAIN)
        out = cluster.exec(NAMESPACE, PROBE_POD, ["nslookup", "-timeout=5", self.args["name"]])
        answered = "Address" in out.split("Name:", 1)[-1] if "Name:" in out else False
        return Reading("answered" if answered else "no answer", out)


def _workload(cluster, name: str):
    """kubelab's proof workload, created on first use: (its Running web pods by name, the toolbox pod or None)."""
    from ..cluster import NAMESPACE, PROBE_POD

    cluster.ensure_probe_pod(TOOLBOX)
    cluster.ensure_web(TOOLBOX, name)
    web = sorted((p for p in cluster.pods(NAMESPACE, f"app={name}") if p.status.phase == "Running"),
                 key=lambda p: p.metadata.name)
    return web, next(iter(cluster.pods(NAMESPACE, f"app={PROBE_POD}")), None)


class ServiceReachesPods(ClusterProbe):
    """The S9 proof: a 2-replica Deployment spread over the nodes behind a Service; the
    toolbox pod requests the Service `requests` times. value: how many distinct pods
    answered; text: which pod answered how often, and where each pod runs. With
    `tolerate_control_plane: false` the Deployment is a plain one (kubelab-app), which
    the control-plane taint keeps off a control-plane node."""

    kind = "service-reaches-pods"
    poll_interval = 10.0
    ARGS = {"requests": Param(int, required=False, default=20),
            "tolerate_control_plane": Param(bool, required=False, default=True)}

    @property
    def web(self) -> str:
        from ..cluster import PLAIN, WEB

        return WEB if self.args["tolerate_control_plane"] else PLAIN

    def api(self) -> str:
        return f"POST /api/v1/namespaces/default/pods/kubelab-probe/exec  # {self.args['requests']} x wget http://{self.web}"

    def read(self, cluster) -> Reading:
        from ..cluster import NAMESPACE, PROBE_POD

        name = self.web
        web, probe = _workload(cluster, name)
        where = ", ".join(f"{p.metadata.name} on {p.spec.node_name}" for p in web)
        if len(web) < 2 or probe is None or probe.status.phase != "Running":
            return Reading(0, f"not ready: {len(web)} web pod(s) running ({where or 'none'}); probe pod "
                              f"{probe.status.phase if probe else 'absent'}", again_in=NOT_RUNNING_AGAIN)
        # `timeout`, not wget's own -T: Debian bookworm's busybox-static 1.35.0 (1:1.35.0-4+deb12u1)
        # segfaults in wget whenever -T is given (measured here: exit 139, with or without -q).
        loop = (f"for i in $(seq {self.args['requests']}); do timeout 5 wget -qO- "
                f"http://{name}.{NAMESPACE}.svc.cluster.local/ || echo FAILED; done")
        out = cluster.exec(NAMESPACE, PROBE_POD, ["sh", "-c", loop], timeout=120)
        answers = [l.strip() for l in out.splitlines() if l.strip()]
        names = {p.metadata.name for p in web}
        counts = {n: answers.count(n) for n in sorted(names)}
        failed = len(answers) - sum(counts.values())
        text = (f"web pods: {where}\n" + "\n".join(f"{n} answered {k} of {len(answers)}" for n, k in counts.items())
                + (f"\n{failed} request(s) failed" if failed else ""))
        return Reading(sum(1 for k in counts.values() if k), text)


class PodsReachPods(ClusterProbe):
    """Pod to pod, with no Service between: the toolbox pod requests each of kubelab's
    web pods at its pod IP. value: how many pods answered; text: each pod's node and IP,
    answered or not, and where the toolbox pod runs (so a cross-node path is visible)."""

    kind = "pods-reach-pods"
    poll_interval = 10.0

    def api(self) -> str:
        return "POST /api/v1/namespaces/default/pods/kubelab-probe/exec  # wget http://<pod ip>:8080 per web pod"

    def read(self, cluster) -> Reading:
        from ..cluster import NAMESPACE, PROBE_POD, WEB

        web, probe = _workload(cluster, WEB)
        web = [p for p in web if p.status.pod_ip]
        if not web or probe is None or probe.status.phase != "Running":
            return Reading(0, f"not ready: {len(web)} web pod(s) running; probe pod {probe.status.phase if probe else 'absent'}",
                           again_in=NOT_RUNNING_AGAIN)
        # one line per pod: its IP, then what it answered (its name) or FAILED
        loop = "; ".join(f"echo {p.status.pod_ip} $(timeout 5 wget -qO- http://{p.status.pod_ip}:8080/ || echo FAILED)"
                         for p in web)
        out = cluster.exec(NAMESPACE, PROBE_POD, ["sh", "-c", loop], timeout=30 + 10 * len(web))
        said = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
        lines = [f"from {PROBE_POD} on {probe.spec.node_name} ({probe.status.pod_ip})"]
        answered = 0
        for p in web:
            ok = said.get(p.status.pod_ip, "").strip() == p.metadata.name
            answered += ok
            lines.append(f"{p.metadata.name} on {p.spec.node_name} at {p.status.pod_ip}: "
                         f"{'answered' if ok else 'no answer'}")
        return Reading(answered, "\n".join(lines))


CLUSTER_PROBES = (NodeReady, NodePodCidr, Pods, PodLogs, Events, Dns, ServiceReachesPods, PodsReachPods)
