"""calico: kubespray's default pod network (kube_network_plugin: calico), at the release the
checkout pins, built from a clone of projectcalico/calico at its tag (artifacts/git_source.py,
kubespray/extras.py). kubespray's defaults are kept: the VXLAN backend (calico_network_backend:
vxlan, roles/network_plugin/calico_defaults/defaults/main.yml, v2.31.0-96-g46dbdd399), where
calico-node starts neither BIRD nor confd, and calico's own address detection (first-found),
which finds the guests' only interface."""

from __future__ import annotations

import yaml

from ..oci import catalog
from .base import Cni

VERSION = "3.31.7"  # the kubeadm track's calico: kubespray's pin (calicoctl_binary_checksums, v2.31.0-96-g46dbdd399)
MANIFEST = "calico-vxlan.yaml"  # upstream's manifest for the VXLAN backend, in the calico store entry
# each image: its name in kubespray's download list -> (its quay.io/calico name, its recipe in oci/catalog.py)
IMAGES = {"calico_node": ("node", catalog.calico_node), "calico_cni": ("cni", catalog.calico_cni),
          "calico_policy": ("kube-controllers", catalog.calico_kube_controllers)}


# kubelab's calico-node is built without cgo (components.calico), so felix's libbpf calls are
# `!cgo` stubs that panic. In iptables mode felix still cleans up the eBPF connect-time load
# balancer a previous BPF dataplane may have left, through libbpf (felix/dataplane/linux/
# int_dataplane.go NewIntDataplaneDriver -> bpf/nat/connecttime.go RemoveConnectTimeLoadBalancer,
# v3.31.7): measured here, `panic: LIBBPF syscall stub` at each felix start, never ready. Felix's
# own switch skips that cleanup (connecttime.go: FELIX_DebugSkipCTLBCleanup); a lab node never
# ran calico's eBPF dataplane, so there is nothing to clean.
NODE_ENV = {"FELIX_DebugSkipCTLBCleanup": "true"}

# Every calico pod's default route is via 169.254.1.1, an address no interface has: the node answers
# the pod's ARP for it by proxy ARP on the cali veth (cni-plugin/pkg/dataplane/linux/dataplane_linux.go,
# DoNetworking's gw and configureSysctls, v3.31.7). Linux answers a proxy ARP request only for an
# address it routes out of another interface, which a node without a default route does not:
# measured on kubeadm-calico, every pod's connection failed "connect: no route to host" (CoreDNS to
# 10.96.0.1:443) until the node had a route to it.
POD_GATEWAY = "169.254.1.1"


def kubespray_settings() -> dict:
    """kubespray's calico with kubelab's calico-node (its calico_node_extra_envs, calico-node.yml.j2)."""
    return {"kube_network_plugin": "calico", "calico_node_extra_envs": dict(NODE_ENV)}


def image_refs(version: str = VERSION) -> dict[str, str]:
    """{kubelab's name for it: the ref upstream's manifests and kubespray pull}."""
    return {name: f"quay.io/calico/{image}:v{version.lstrip('v')}" for name, (image, _) in IMAGES.items()}


def kubeadm_manifest(upstream: str, pod_cidr: str, tuned=None) -> str:
    """Upstream's manifests/calico-vxlan.yaml (read from the user's clone at the tag, never kept
    here) with calico-node's CALICO_IPV4POOL_CIDR set to the cluster's pod range, which upstream
    leaves commented out (calico then takes 192.168.0.0/16, not kubeadm's podSubnet), and NODE_ENV.
    Under TCG (`tuned`), calico-node's and kube-controllers' probes as harness/tuning.py gives them."""
    docs = [d for d in yaml.safe_load_all(upstream) if d]
    probes = tuned.calico_probes if tuned is not None else {}
    for d in docs:
        if d.get("kind") not in ("DaemonSet", "Deployment"):
            continue
        for c in d["spec"]["template"]["spec"]["containers"]:
            if d["metadata"]["name"] == "calico-node" and c["name"] == "calico-node":
                ours = {"CALICO_IPV4POOL_CIDR": pod_cidr, **NODE_ENV}
                c["env"] = [e for e in c.get("env", []) if e.get("name") not in ours] + [
                    {"name": k, "value": v} for k, v in ours.items()]
            for probe, settings in probes.get(c["name"], {}).items():  # None: upstream's key removed
                c[probe] = {k: v for k, v in {**c.get(probe, {}), **dict(settings)}.items() if v is not None}
    return yaml.safe_dump_all(docs, sort_keys=False)


def ensure(kit: dict, progress, version: str = VERSION) -> None:
    """calico built from its tag and its images in the kit's registry under upstream's refs
    (the kubeadm track's preflight, before any machine exists)."""
    from pathlib import Path

    from ..artifacts import build, from_git
    from ..serve import registry

    layouts = {ref: from_git.image(IMAGES[name][1], "calico", ref, version, kit, progress)
               for name, ref in image_refs(version).items()}
    with build.store_lock(progress):
        registry.add(Path(kit["registry"]), layouts, progress)


def upstream_manifest(version: str = VERSION) -> str:
    """manifests/calico-vxlan.yaml of the built tag (found in the store once `ensure` ran)."""
    from ..artifacts import build, from_git
    from ..progress import Progress

    quiet = Progress(quiet=True)
    with build.store_lock(quiet):
        return from_git.entry("calico", version, quiet).path(MANIFEST).read_text()


# kubespray's calico-node DaemonSet: k8s-app=calico-node in kube-system
# (roles/network_plugin/calico/templates/calico-node.yml.j2, v2.31.0-96-g46dbdd399)
CALICO = Cni(name="calico", tracks=("kubeadm", "kubespray"),
             summary="calico at kubespray's pin, VXLAN, built from its git tag",
             kubespray=kubespray_settings,
             pods=(("calico", "kube-system", "k8s-app=calico-node"),),
             node_routes=(f"{POD_GATEWAY}/32",))
# (upstream's manifest labels it the same: k8s-app: calico-node in kube-system)
