"""flannel: the kit's images (flannel v0.28.4 and its CNI plugin, built from source and named
as upstream publishes them on ghcr.io). The kubeadm track applies upstream's manifest
(provisioners/flannel.py); kubespray renders its own."""

from ..provisioners import flannel as manifest
from ..provisioners.lab_network import LAB_NIC
from .base import Cni


def kubespray_settings() -> dict:
    """kubespray's flannel with the kit's images, not the Docker Hub names and the CNI plugin tag
    kubespray pins (download.yml: flannel_image_repo, flannel_init_image_repo, flannel_cni_version)."""
    from ..artifacts.kit import FLANNEL_CNI_IMAGE, FLANNEL_IMAGE

    out = {"kube_network_plugin": "flannel"}
    for prefix, ref in (("flannel", FLANNEL_IMAGE), ("flannel_init", FLANNEL_CNI_IMAGE)):
        repo, tag = ref.rsplit(":", 1)
        # below github_image_repo, which the vars file points at the lab registry
        out[f"{prefix}_image_repo"] = "{{ github_image_repo }}" + repo.removeprefix("ghcr.io")
        out[f"{prefix}_image_tag"] = tag
    # flanneld's --iface (cni-flannel.yml.j2): it otherwise looks for the default route's interface
    out["flannel_interface"] = LAB_NIC
    return out


# flannel's DaemonSet template labels app=flannel (upstream's v0.28.4) in kube-flannel;
# kubespray's in kube-system (roles/network_plugin/flannel/templates/cni-flannel.yml.j2, v2.31.0-96-g46dbdd399)
FLANNEL = Cni(name="flannel", tracks=("kubeadm", "kubespray"),
              summary="flannel v0.28.4, VXLAN, from the kit", kubespray=kubespray_settings,
              pods=(("flannel", manifest.NAMESPACE, "app=flannel"), ("flannel", "kube-system", "app=flannel")))
