"""Layer `kube-system`: the workloads running, grouped by owner, each with its image and
readiness, against what the detected CNI and DNS layout should deploy (S7).

Detected, not assumed: the CNI from the nodes' own annotations (flannel writes
`flannel.alpha.coreos.com/*`, calico `projectcalico.org/*`), the DNS layout from
a node-local cache DaemonSet (`-localip`). Expected then: the control plane's
static pods on every control-plane node, kube-proxy, CoreDNS, the CNI's
DaemonSet (and calico's controllers), the node-local cache where there is one.
"""

from __future__ import annotations

from .access import pod_state
from .dns import local_ips
from .finding import RECORDED, Finding, holds

LAYER = "kube-system"
READS = "API GET pods, daemonsets, deployments, replicasets (all namespaces), nodes (annotations, labels)"
SRC = "API GET pods, daemonsets, deployments, replicasets"
CONTROL_PLANE = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
CNI_MARKS = {"flannel": "flannel.alpha.coreos.com/", "calico": "projectcalico.org/"}


def detect_cni(nodes) -> list[str]:
    found = set()
    for n in nodes:
        for key in (n.metadata.annotations or {}):
            for cni, mark in CNI_MARKS.items():
                if key.startswith(mark):
                    found.add(cni)
    return sorted(found)


def workloads(pods, replica_sets, namespaces: set[str]) -> dict[tuple[str, str, str], list]:
    """(kind, namespace, name) -> its pods; ReplicaSets resolved to their Deployment, mirror
    pods (owned by a Node) grouped as `static` by name without the node suffix."""
    rs_owner = {(r.metadata.namespace, r.metadata.name): (r.metadata.owner_references or [None])[0] for r in replica_sets}
    out: dict[tuple[str, str, str], list] = {}
    for p in pods:
        ns = p.metadata.namespace
        if ns not in namespaces:
            continue
        owner = (p.metadata.owner_references or [None])[0]
        if owner is None:
            key = ("Pod", ns, p.metadata.name)
        elif owner.kind == "Node":
            base = p.metadata.name[:-len(p.spec.node_name) - 1] if p.spec.node_name and \
                p.metadata.name.endswith("-" + p.spec.node_name) else p.metadata.name
            key = ("static", ns, base)
        elif owner.kind == "ReplicaSet" and rs_owner.get((ns, owner.name)) is not None:
            top = rs_owner[(ns, owner.name)]
            key = (top.kind, ns, top.name)
        else:
            key = (owner.kind, ns, owner.name)
        out.setdefault(key, []).append(p)
    return out


def not_ready(pods) -> str:
    """Each pod that is not ready: its node, state, restarts and why its container last ended."""
    out = []
    for p in pods:
        if _ready(p):
            continue
        statuses = (p.status.container_statuses or []) if p.status else []
        restarts = sum(s.restart_count or 0 for s in statuses)
        ended = [s.last_state.terminated for s in statuses if s.last_state and s.last_state.terminated]
        why = f", last ended {ended[0].reason} (exit {ended[0].exit_code})" if ended else ""
        out.append(f"{p.metadata.name} on {p.spec.node_name or 'no node'}: {pod_state(p)}, {restarts} restart(s){why}")
    return "; ".join(out)


def _ready(p) -> bool:
    statuses = p.status.container_statuses or []
    return bool(statuses) and all(s.ready for s in statuses)


def expected(cni: list[str], local: dict, control_planes: list[str], daemon_sets) -> list[tuple[str, str]]:
    """(kind, name pattern) the layout should have; `name*` matches a prefix."""
    want = [("static", n) for n in CONTROL_PLANE] if control_planes else []
    want += [("DaemonSet", "kube-proxy"), ("Deployment", "coredns*")]
    cni_ds = {d.metadata.name for d in daemon_sets}
    if "flannel" in cni:
        want.append(("DaemonSet", next((n for n in sorted(cni_ds) if "flannel" in n), "kube-flannel*")))
    if "calico" in cni:
        want += [("DaemonSet", "calico-node"), ("Deployment", "calico-kube-controllers")]
    want += [("DaemonSet", name) for name in sorted(local)]
    return want


def _matches(pattern: str, name: str) -> bool:
    return name.startswith(pattern[:-1]) if pattern.endswith("*") else name == pattern


def check(access) -> list[Finding]:
    c = access.cluster
    nodes = access.nodes()
    daemon_sets = c.daemon_sets()
    cni = detect_cni(nodes)
    local = local_ips(daemon_sets)
    cni_namespaces = {d.metadata.namespace for d in daemon_sets
                      if any(k in d.metadata.name for k in ("flannel", "calico"))}
    namespaces = {"kube-system"} | cni_namespaces
    groups = workloads(c.all_pods(), c.replica_sets(), namespaces)
    out = [Finding(LAYER, "layout detected", RECORDED,
                   f"CNI {', '.join(cni) or 'none found'} (node annotations); DNS "
                   f"{'node-local cache ' + ', '.join(local) + ' then CoreDNS' if local else 'CoreDNS only'}",
                   "API GET nodes (annotations), daemonsets (-localip)")]
    for (kind, ns, name), pods in sorted(groups.items()):
        images = sorted({ct.image for p in pods for ct in p.spec.containers})
        ready = sum(_ready(p) for p in pods)
        detail = "" if ready == len(pods) else f" ({not_ready(pods)})"
        out.append(holds(LAYER, f"{kind} {ns}/{name}", ready == len(pods),
                         f"{ready}/{len(pods)} ready; {', '.join(images)}{detail}", SRC))
    control_planes = [n.metadata.name for n in nodes
                      if "node-role.kubernetes.io/control-plane" in (n.metadata.labels or {})]
    want = expected(cni, local, control_planes, daemon_sets)
    missing = [f"{k} {p}" for k, p in want if not any(kind == k and _matches(p, name) for kind, _, name in groups)]
    out.append(holds(LAYER, "the layout's workloads are all there", not missing,
                     f"missing: {', '.join(missing)}" if missing else
                     f"all {len(want)}: " + ", ".join(f"{k} {p}" for k, p in want), SRC))
    return out
