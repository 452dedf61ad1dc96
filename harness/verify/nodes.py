"""Layer `nodes`: every node's roles, taints, schedulability, kubelet and runtime,
and why a control-plane node does or does not take plain pods (S2, K13).

A plain pod (no tolerations) is kept off a node by a NoSchedule or NoExecute
taint, or by `spec.unschedulable` (cordon); kubeadm taints its control plane
with `node-role.kubernetes.io/control-plane:NoSchedule`, kubespray removes that
taint when the node is also in `kube_node`.
"""

from __future__ import annotations

from .finding import RECORDED, Finding, holds

LAYER = "nodes"
READS = "API GET /api/v1/nodes: labels, taints, spec.unschedulable, status.nodeInfo, Ready"
SOURCE = "API GET /api/v1/nodes"
ROLE_PREFIX = "node-role.kubernetes.io/"
KEEPS_PODS_OFF = ("NoSchedule", "NoExecute")


def rows(nodes) -> list[dict]:
    out = []
    for n in sorted(nodes, key=lambda n: n.metadata.name):
        labels = n.metadata.labels or {}
        info = n.status.node_info
        ready = next((c.status for c in n.status.conditions or [] if c.type == "Ready"), "Unknown")
        out.append({
            "name": n.metadata.name,
            "roles": sorted(k[len(ROLE_PREFIX):] for k in labels if k.startswith(ROLE_PREFIX)),
            "taints": [f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}" for t in n.spec.taints or []],
            "unschedulable": bool(n.spec.unschedulable),
            "kubelet": info.kubelet_version if info else "",
            "runtime": info.container_runtime_version if info else "",
            "ready": ready,
        })
    return out


def takes_plain_pods(row: dict) -> tuple[bool, str]:
    """(whether a pod without tolerations can land here, why)."""
    blocking = [t for t in row["taints"] if t.rsplit(":", 1)[-1] in KEEPS_PODS_OFF]
    if row["unschedulable"]:
        return False, "cordoned (spec.unschedulable)"
    if blocking:
        return False, "taint " + ", ".join(blocking)
    return True, "no NoSchedule or NoExecute taint"


def judge(node_rows: list[dict]) -> list[Finding]:
    out = []
    for r in node_rows:
        name = r["name"]
        out.append(Finding(LAYER, f"{name}", RECORDED,
                           f"roles={','.join(r['roles']) or 'none'}; taints={','.join(r['taints']) or 'none'}; "
                           f"schedulable={'no' if r['unschedulable'] else 'yes'}; kubelet {r['kubelet']}; "
                           f"{r['runtime']}", SOURCE))
        out.append(holds(LAYER, f"{name} Ready", r["ready"] == "True", f"Ready={r['ready']}", SOURCE))
        if "control-plane" in r["roles"]:
            ok, why = takes_plain_pods(r)
            out.append(Finding(LAYER, f"{name} (control plane) takes plain pods", RECORDED,
                               f"{'yes' if ok else 'no'}: {why}", SOURCE + " (spec.taints, spec.unschedulable)"))
    return out


def check(access) -> list[Finding]:
    return judge(rows(access.nodes()))
