"""calico: kubespray's default pod network (kube_network_plugin: calico), at the release the
checkout pins, built from a clone of projectcalico/calico at its tag (artifacts/git_source.py,
kubespray/extras.py). kubespray's defaults are kept: the VXLAN backend (calico_network_backend:
vxlan, roles/network_plugin/calico_defaults/defaults/main.yml, v2.31.0-96-g46dbdd399), where
calico-node starts neither BIRD nor confd, and calico's own address detection (first-found),
which finds the guests' only interface."""

from .base import Cni

# kubespray's calico-node DaemonSet: k8s-app=calico-node in kube-system
# (roles/network_plugin/calico/templates/calico-node.yml.j2, v2.31.0-96-g46dbdd399)
CALICO = Cni(name="calico", tracks=("kubespray",),
             summary="calico at kubespray's pin, VXLAN, built from its git tag",
             kubespray=lambda: {"kube_network_plugin": "calico"},
             pods=(("calico", "kube-system", "k8s-app=calico-node"),))
