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
IMAGES = ("node", "cni", "kube-controllers")
# what each image is called in kubespray's download list, and its recipe (oci/catalog.py)
IMAGE_SOURCES = {"node": "calico_node", "cni": "calico_cni", "kube-controllers": "calico_policy"}
RECIPES = {"calico_node": catalog.calico_node, "calico_cni": catalog.calico_cni,
           "calico_policy": catalog.calico_kube_controllers}


def image_refs(version: str = VERSION) -> dict[str, str]:
    """{kubelab's name for it: the ref upstream's manifests and kubespray pull}."""
    return {IMAGE_SOURCES[n]: f"quay.io/calico/{n}:v{version.lstrip('v')}" for n in IMAGES}


def kubeadm_manifest(upstream: str, pod_cidr: str, tuned=None) -> str:
    """Upstream's manifests/calico-vxlan.yaml (read from the user's clone at the tag, never kept
    here) with one value set: calico-node's CALICO_IPV4POOL_CIDR, the cluster's pod range, which
    upstream leaves commented out (calico then takes 192.168.0.0/16, not kubeadm's podSubnet).
    Under TCG (`tuned`), calico-node's probes as harness/tuning.py gives them."""
    docs = [d for d in yaml.safe_load_all(upstream) if d]
    for d in docs:
        if d.get("kind") == "DaemonSet" and d["metadata"]["name"] == "calico-node":
            for c in d["spec"]["template"]["spec"]["containers"]:
                if c["name"] == "calico-node":
                    c["env"] = [e for e in c.get("env", []) if e.get("name") != "CALICO_IPV4POOL_CIDR"] + [
                        {"name": "CALICO_IPV4POOL_CIDR", "value": pod_cidr}]
                    if tuned is not None and tuned.calico_liveness:
                        c["livenessProbe"] = {**c.get("livenessProbe", {}), **dict(tuned.calico_liveness)}
                        c["readinessProbe"] = {**c.get("readinessProbe", {}),
                                               "timeoutSeconds": tuned.calico_probe_timeout}
    return yaml.safe_dump_all(docs, sort_keys=False)


def ensure(kit: dict, progress, version: str = VERSION) -> None:
    """calico built from its tag and its images in the kit's registry under upstream's refs
    (the kubeadm track's preflight, before any machine exists)."""
    from pathlib import Path

    from ..artifacts import build, from_git
    from ..artifacts import kit as kits
    from ..serve import registry

    plugins = kits.kit_entry(kit, "cni-plugins")
    layouts = {ref: from_git.image(RECIPES[name], "calico", ref, version, progress, cni_plugins=plugins)
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
             kubespray=lambda: {"kube_network_plugin": "calico"},
             pods=(("calico", "kube-system", "k8s-app=calico-node"),))
# (upstream's manifest labels it the same: k8s-app: calico-node in kube-system)
