"""Layer `workload`: the S9 proof. A 2-replica Deployment spread over two nodes
behind a Service; 20 requests from a pod through the Service; the distinct pod
names that answered. Registry egress, scheduling, the pod network, kube-proxy and
DNS at once. Everything it made is deleted afterwards, whatever happened.
"""

from __future__ import annotations

from .access import PROBE_POD, WEB
from .finding import Finding, holds

LAYER = "workload"
REQUESTS = 20
READS = (f"API: create Deployment {WEB} (2 replicas, spread over nodes) and its Service; from verify's pod "
         f"{REQUESTS} x wget http://{WEB}.default.svc.cluster.local/; then delete them")


def running(cluster) -> list:
    from ..cluster import NAMESPACE

    return sorted((p for p in cluster.pods(NAMESPACE, f"app={WEB}") if p.status.phase == "Running"),
                  key=lambda p: p.metadata.name)


def count_answers(out: str, names: list[str]) -> dict[str, int]:
    answers = [line.strip() for line in out.splitlines() if line.strip()]
    return {n: answers.count(n) for n in names}


def check(access) -> list[Finding]:
    c = access.cluster
    spread_over = min(2, len(access.nodes()))
    c.ensure_web(access.image, WEB, replicas=2, tolerate=True)
    access.wait(lambda: len(running(c)) == 2 and len({p.spec.node_name for p in running(c)}) == spread_over,
                f"Deployment {WEB}: 2 pods running on {spread_over} node(s)", state=lambda: access.pod_states(f"app={WEB}"))
    web = running(c)
    where = "; ".join(f"{p.metadata.name} on {p.spec.node_name}" for p in web)
    loop = (f"for i in $(seq {REQUESTS}); do timeout 5 wget -qO- http://{WEB}.default.svc.cluster.local/ "
            "|| echo FAILED; done")
    out = access.in_pod(["sh", "-c", loop], timeout=180)
    counts = count_answers(out, [p.metadata.name for p in web])
    distinct = sum(1 for k in counts.values() if k)
    src = f"pod {PROBE_POD} on {access.probe_node()}: {REQUESTS} x wget http://{WEB}"
    return [
        holds(LAYER, "pods on distinct nodes", len({p.spec.node_name for p in web}) == spread_over, where,
              f"API GET pods -l app={WEB}"),
        holds(LAYER, "the Service answers from both pods", distinct == 2,
              f"{distinct} distinct pod(s): " + ", ".join(f"{n} {k}/{REQUESTS}" for n, k in counts.items()), src, out),
    ]
