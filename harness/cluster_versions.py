"""The versions a running cluster reports about itself, read through its API at
collect (after verify, so a cluster the scenario stopped at init and rebuilt is
read too): each node's kubelet from its status, the API server's /version, and
the images of the etcd, CoreDNS and CNI pods. The image names the kit built
are not evidence that the cluster runs them; this is.
"""

from __future__ import annotations

from . import cni as cnis

# (what, namespace, label selector): kubeadm labels its static pods component=<name>
# (cmd/kubeadm/app/util/staticpod/utils.go, v1.36.3), its CoreDNS Deployment k8s-app=kube-dns
# (cmd/kubeadm/app/phases/addons/dns/manifests.go, v1.36.3); each CNI's pods are its own (harness/cni)
PODS = (("etcd", "kube-system", "component=etcd"), ("CoreDNS", "kube-system", "k8s-app=kube-dns"))


def _cni_pods(cni: str) -> tuple:
    return cnis.CNIS[cni].pods if cni in cnis.CNIS else ()


def api(cni: str = "none") -> str:
    """What read() asks the API server, as dry-run prints it."""
    pods = PODS + _cni_pods(cni)
    return ("GET /version; GET /api/v1/nodes (status.nodeInfo.kubeletVersion); images of the pods "
            + ", ".join(f"{namespace}/{selector}" for _, namespace, selector in pods))


def read(cluster, cni: str = "none") -> dict:
    """{"api_server": "v1.36.3", "kubelet": {node: version}, "images": {what: [image, ...]}}."""
    kubelet = {n.metadata.name: n.status.node_info.kubelet_version if n.status and n.status.node_info else ""
               for n in sorted(cluster.nodes(), key=lambda n: n.metadata.name)}
    images: dict[str, list[str]] = {}
    for what, namespace, selector in PODS + _cni_pods(cni):
        found = images.setdefault(what, [])
        for pod in cluster.pods(namespace, selector):
            for c in (pod.spec.init_containers or []) + (pod.spec.containers or []):
                if c.image not in found:
                    found.append(c.image)
    return {"api_server": cluster.version(), "kubelet": kubelet, "images": images}


def tag(image: str) -> str:
    """`registry.k8s.io/etcd:3.6.8-0` -> `3.6.8-0`; an image without a tag -> ''."""
    name = image.split("@", 1)[0]
    return name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else ""


def rows(versions: dict) -> list[tuple[str, str, str]]:
    """(component, version, where it was read) for a report."""
    out = [("API server", versions.get("api_server") or "", "GET /version (gitVersion)")]
    out += [(f"kubelet on {node}", v, "node status (nodeInfo.kubeletVersion)")
            for node, v in versions.get("kubelet", {}).items()]
    for what, images in versions.get("images", {}).items():
        shown = ", ".join(f"{tag(i) or '?'} ({i})" for i in images) or "no pod found"
        out.append((what, shown, "image of its pods"))
    return out
