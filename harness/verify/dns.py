"""Layer `dns`: which DNS tier pods really ask, and whether each tier answers (S5, S7).

Read, not assumed: the kubelet's `clusterDNS` from its running configuration
(`/configz` through the API server), the nameserver in a real pod's
resolv.conf, CoreDNS's Service (`k8s-app=kube-dns` in kube-system) and a
node-local cache wherever a DaemonSet in kube-system runs with `-localip`
(kubespray's nodelocaldns, 169.254.25.10 by default: roles/kubespray_defaults,
`nodelocaldns_ip`). Each tier is asked directly from a pod. Where a
dns-autoscaler runs, the CoreDNS replica count its parameters give for this
cluster is computed with cluster-proportional-autoscaler's linear formula
(pkg/autoscaler/controller/linearcontroller: max(ceil(cores/coresPerReplica),
ceil(nodes/nodesPerReplica)), within min and max, at least 2 with
preventSinglePointFailure on more than one node). CoreDNS's Service is read
with the endpoints behind it, so a tier that does not answer says whether it
had anywhere to send the question (a real run here, straight after an install:
`Connection refused` from the Service while CoreDNS read 2 of 2 ready).
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from decimal import Decimal

from .access import PROBE_POD
from .finding import NOT_APPLICABLE, RECORDED, Finding, holds

LAYER = "dns"
NAME = "kubernetes.default.svc.cluster.local"
READS = ("API: each node's /configz (clusterDNS), Services, their EndpointSlices and Deployments -l k8s-app=kube-dns, "
         "DaemonSets with -localip, dns-autoscaler's parameters; in verify's pod: cat /etc/resolv.conf, "
         f"nslookup {NAME} <tier>")
SRC_CONFIGZ = "API GET /api/v1/nodes/{}/proxy/configz"


def local_ips(daemon_sets) -> dict[str, list[str]]:
    """DaemonSet name -> the addresses its `-localip` argument lists (a node-local DNS cache)."""
    out = {}
    for ds in daemon_sets:
        if ds.metadata.namespace != "kube-system":
            continue
        for c in ds.spec.template.spec.containers or []:
            argv = list(c.command or []) + list(c.args or [])
            for i, a in enumerate(argv):
                if a in ("-localip", "--localip") and i + 1 < len(argv):
                    out[ds.metadata.name] = argv[i + 1].split(",")
                elif a.startswith(("-localip=", "--localip=")):
                    out[ds.metadata.name] = a.split("=", 1)[1].split(",")
    return out


def nameservers(resolv: str) -> list[str]:
    return re.findall(r"^nameserver\s+(\S+)", resolv, re.M)


def answered(nslookup: str) -> bool:
    """busybox nslookup: an `Address` after the `Name:` line means an answer."""
    return "Name:" in nslookup and "Address" in nslookup.split("Name:", 1)[1]


def linear_params(deployment, config_map) -> dict | None:
    """The autoscaler's `linear` parameters: its ConfigMap's, else its --default-params."""
    if config_map is not None and (config_map.data or {}).get("linear"):
        return json.loads(config_map.data["linear"])
    for c in deployment.spec.template.spec.containers or []:
        for a in list(c.command or []) + list(c.args or []):
            if a.startswith("--default-params="):
                return json.loads(a.split("=", 1)[1]).get("linear")
    return None


def autoscaler_config_map(deployment) -> str:
    for c in deployment.spec.template.spec.containers or []:
        for a in list(c.command or []) + list(c.args or []):
            if a.startswith("--configmap="):
                return a.split("=", 1)[1]
    return deployment.metadata.name


def linear_replicas(params: dict, nodes: int, cores: int) -> int:
    """cluster-proportional-autoscaler's linear controller (see the module docstring)."""
    want = 0
    if params.get("coresPerReplica"):
        want = max(want, math.ceil(cores / float(params["coresPerReplica"])))
    if params.get("nodesPerReplica"):
        want = max(want, math.ceil(nodes / float(params["nodesPerReplica"])))
    if params.get("max"):
        want = min(want, int(params["max"]))
    want = max(want, int(params.get("min", 1) or 1))
    if params.get("preventSinglePointFailure") and nodes > 1 and want < 2:
        want = 2
    return want


def schedulable(nodes) -> tuple[int, int]:
    """(schedulable nodes, their cores from status.allocatable) as the autoscaler counts them: the
    allocatable CPU summed, then rounded up (cluster-proportional-autoscaler
    pkg/autoscaler/k8sclient/k8sclient.go, v1.8.8: sc.Add(node.Status.Allocatable[cpu]), then
    int32(sc.Value()); resource.Quantity.Value rounds up). Reserved CPU leaves fractions:
    1900m and 900m are 3 cores to it, not 1 + 0."""
    from kubernetes.utils import parse_quantity

    count, total = 0, Decimal(0)
    for n in nodes:
        if n.spec.unschedulable:
            continue
        count += 1
        total += parse_quantity((n.status.allocatable or {}).get("cpu", "0"))
    return count, math.ceil(total)


def ready_addresses(slices) -> list[str]:
    """Addresses of the endpoints that take traffic. EndpointSlice's `conditions.ready` unset means
    ready (k8s.io/api discovery/v1/types.go, EndpointConditions.Ready, v0.36.3)."""
    out = set()
    for s in slices:
        for e in s.endpoints or []:
            if not (e.conditions and e.conditions.ready is False):
                out.update(e.addresses or [])
    return [str(ip) for ip in sorted(map(ipaddress.ip_address, out), key=lambda ip: (ip.version, ip))]  # v4, then v6


def tier_of(ip: str, coredns_ips: list[str], local: dict[str, list[str]]) -> str:
    if ip in coredns_ips:
        return "CoreDNS Service"
    for name, ips in local.items():
        if ip in ips:
            return f"{name} (node-local cache)"
    return "neither tier found"


def pods_ask(resolv: str, coredns_ips: list[str], local: dict[str, list[str]], cluster_dns: dict[str, list[str]],
             source: str) -> list[Finding]:
    """Which tier a pod's resolv.conf sends it to. A read that names no nameserver is a finding of
    its own: real runs here once read an empty file from a pod that had just started."""
    servers = nameservers(resolv)
    if not servers:
        return [holds(LAYER, "pods ask", False, "no nameserver line in the pod's resolv.conf"
                      + ("" if resolv.strip() else " (read empty)"), source, resolv)]
    named = sorted({ip for ips in cluster_dns.values() for ip in ips})
    return [Finding(LAYER, "pods ask", RECORDED, f"{servers[0]}: {tier_of(servers[0], coredns_ips, local)}", source),
            holds(LAYER, "pods ask what the kubelet's clusterDNS names", servers[0] in named,
                  f"resolv.conf {servers[0]}; clusterDNS {','.join(named) or 'none'}", source)]


def check(access) -> list[Finding]:
    c = access.cluster
    out = []
    cluster_dns = {}
    for n in access.nodes():
        cluster_dns[n.metadata.name] = c.kubelet_config(n.metadata.name).get("clusterDNS", [])
        out.append(Finding(LAYER, f"kubelet clusterDNS on {n.metadata.name}", RECORDED,
                           ",".join(cluster_dns[n.metadata.name]) or "none", SRC_CONFIGZ.format(n.metadata.name)))
    services = c.services("kube-system", "k8s-app=kube-dns")
    coredns_ips = [s.spec.cluster_ip for s in services if s.spec.cluster_ip]
    local = local_ips(c.daemon_sets())
    resolv = access.in_pod(["cat", "/etc/resolv.conf"])
    servers = nameservers(resolv)
    asker = f"pod {PROBE_POD} on {access.probe_node()}"
    src_pod = f"{asker}: cat /etc/resolv.conf"
    out.append(Finding(LAYER, "a pod's resolv.conf", RECORDED, "nameserver " + ",".join(servers) if servers else
                       resolv.strip()[:200], src_pod, resolv))
    for s in services:
        ready = ready_addresses(c.endpoint_slices("kube-system", s.metadata.name))
        out.append(Finding(LAYER, f"CoreDNS Service {s.metadata.name} endpoints", RECORDED,
                           f"{len(ready)} ready: {', '.join(ready)}" if ready else
                           "none ready: the Service has nowhere to send a question",
                           f"API GET endpointslices -l kubernetes.io/service-name={s.metadata.name} in kube-system"))
    tiers = [(f"CoreDNS Service {s.metadata.name}", ip) for s in services for ip in [s.spec.cluster_ip] if ip]
    tiers += [(f"{name} (node-local cache)", ip) for name, ips in sorted(local.items()) for ip in ips
              if ipaddress.ip_address(ip).is_link_local]
    if not tiers:
        out.append(holds(LAYER, "a DNS tier", False, "no Service -l k8s-app=kube-dns in kube-system and no -localip "
                         "DaemonSet", "API GET services, daemonsets"))
    for label, ip in tiers:
        said = access.in_pod(["nslookup", "-timeout=5", NAME, ip])
        out.append(holds(LAYER, f"{label} at {ip} answers", answered(said),
                         f"{NAME}: {'answered' if answered(said) else 'no answer'}",
                         f"{asker}: nslookup {NAME} {ip}", said))
    if not local:
        out.append(Finding(LAYER, "node-local DNS cache", NOT_APPLICABLE,
                           "no DaemonSet in kube-system runs with -localip (no nodelocaldns)", "API GET daemonsets"))
    out += pods_ask(resolv, coredns_ips, local, cluster_dns, src_pod)
    deployments = [d for d in c.deployments() if d.metadata.namespace == "kube-system"]
    coredns = [d for d in deployments if (d.spec.selector.match_labels or {}).get("k8s-app") == "kube-dns"]
    for d in coredns:
        out.append(holds(LAYER, f"CoreDNS Deployment {d.metadata.name} replicas", (d.status.ready_replicas or 0) ==
                         d.spec.replicas, f"{d.status.ready_replicas or 0} of {d.spec.replicas} ready",
                         f"API GET deployments/{d.metadata.name} in kube-system"))
    scalers = [d for d in deployments if d.metadata.name.startswith("dns-autoscaler")]
    if not scalers:
        out.append(Finding(LAYER, "dns-autoscaler", NOT_APPLICABLE, "no dns-autoscaler Deployment in kube-system",
                           "API GET deployments in kube-system"))
    for d in scalers:
        params = linear_params(d, c.config_map("kube-system", autoscaler_config_map(d)))
        if params is None or not coredns:
            out.append(Finding(LAYER, f"{d.metadata.name} replica count", NOT_APPLICABLE,
                               "no linear parameters found" if params is None else "no CoreDNS Deployment to scale",
                               f"API GET configmaps/{autoscaler_config_map(d)}"))
            continue
        nodes, cores = schedulable(access.nodes())
        want = linear_replicas(params, nodes, cores)
        have = coredns[0].spec.replicas
        # one name whatever the cluster's size, so a claim can cite it; the counts are in the value
        out.append(holds(LAYER, f"{d.metadata.name}: CoreDNS replicas from its parameters",
                         want == have, f"{nodes} schedulable node(s), {cores} core(s): parameters "
                         f"{json.dumps(params, sort_keys=True)} give {want}; CoreDNS has {have}",
                         f"API GET configmaps/{autoscaler_config_map(d)}, nodes"))
    return out
