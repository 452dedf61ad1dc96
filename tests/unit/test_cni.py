"""The pod networks as one module each (harness/cni): which track installs which, what kubespray
is told for each, and the one value kubelab sets in calico's upstream manifest for kubeadm."""

import yaml

from harness import cni
from harness.cni import calico
from harness.model import InstallDef
from harness.tracks.kubespray import settings


def test_each_track_lists_the_networks_it_installs():
    assert cni.for_track("kubeadm") == ("flannel", "calico", "none")
    assert cni.for_track("kubespray") == ("flannel", "calico", "none")
    assert cni.DEFAULT == "flannel"


def test_kubespray_is_told_each_network_by_its_own_module():
    calico_vars = settings(InstallDef(track="kubespray", cni="calico"))
    assert calico_vars["kube_network_plugin"] == "calico"
    # kubespray's own defaults, but for the felix switch kubelab's cgo-less calico-node needs
    assert [k for k in calico_vars if k.startswith(("flannel", "calico_"))] == ["calico_node_extra_envs"]
    assert calico_vars["calico_node_extra_envs"] == {"FELIX_DebugSkipCTLBCleanup": "true"}
    flannel_vars = settings(InstallDef(track="kubespray", cni="flannel"))
    assert flannel_vars["kube_network_plugin"] == "flannel"
    assert flannel_vars["flannel_image_tag"] and flannel_vars["flannel_interface"] == "eth0"
    assert settings(InstallDef(track="kubespray", cni="none"))["kube_network_plugin"] == "cni"


def test_calico_images_are_named_as_upstream_and_kubespray_pull_them():
    assert calico.image_refs("3.31.7") == {"calico_node": "quay.io/calico/node:v3.31.7",
                                           "calico_cni": "quay.io/calico/cni:v3.31.7",
                                           "calico_policy": "quay.io/calico/kube-controllers:v3.31.7"}


UPSTREAM_SHAPE = """
apiVersion: v1
kind: ConfigMap
metadata: {name: calico-config, namespace: kube-system}
data: {calico_backend: vxlan}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: calico-node, namespace: kube-system}
spec:
  template:
    spec:
      initContainers:
        - {name: install-cni, image: quay.io/calico/cni:v3.31.7}
      containers:
        - name: calico-node
          image: quay.io/calico/node:v3.31.7
          env:
            - {name: CALICO_IPV4POOL_VXLAN, value: Always}
"""


def test_the_kubeadm_manifest_is_upstreams_with_the_clusters_pod_range():
    docs = list(yaml.safe_load_all(calico.kubeadm_manifest(UPSTREAM_SHAPE, "10.244.0.0/16")))
    assert docs[0] == yaml.safe_load(UPSTREAM_SHAPE.split("---")[0])  # the rest untouched
    [node] = docs[1]["spec"]["template"]["spec"]["containers"]
    assert node["env"] == [{"name": "CALICO_IPV4POOL_VXLAN", "value": "Always"},
                           {"name": "CALICO_IPV4POOL_CIDR", "value": "10.244.0.0/16"},
                           {"name": "FELIX_DebugSkipCTLBCleanup", "value": "true"}]
    again = calico.kubeadm_manifest(calico.kubeadm_manifest(UPSTREAM_SHAPE, "10.244.0.0/16"), "10.32.0.0/16")
    [node] = list(yaml.safe_load_all(again))[1]["spec"]["template"]["spec"]["containers"]
    assert [e["value"] for e in node["env"] if e["name"] == "CALICO_IPV4POOL_CIDR"] == ["10.32.0.0/16"]


def test_calicos_images_put_each_file_where_upstreams_dockerfiles_do():
    from harness.oci import catalog

    node = catalog.calico_node("quay.io/calico/node:v3.31.7", ["filesystem/sbin/start_runit",
                                                               "filesystem/etc/service/available/felix/run"])
    assert {b.name: b.dest for b in node.binaries} == {
        "calico-node": "/bin/calico-node", "filesystem/sbin/start_runit": "/usr/sbin/start_runit",
        "filesystem/etc/service/available/felix/run": "/etc/service/available/felix/run"}
    assert node.config.cmd == ("start_runit",) and "SVDIR=/etc/service/enabled" in node.config.env
    cni_image = catalog.calico_cni("quay.io/calico/cni:v3.31.7")
    assert sorted(b.dest for b in cni_image.binaries) == [
        "/opt/cni/bin/calico", "/opt/cni/bin/calico-ipam", "/opt/cni/bin/host-local", "/opt/cni/bin/install",
        "/opt/cni/bin/loopback", "/opt/cni/bin/portmap", "/opt/cni/bin/tuning"]
    assert cni_image.config.cmd == ("/opt/cni/bin/install",) and cni_image.config.env[0].startswith("PATH=/opt/cni/bin:")
    controllers = catalog.calico_kube_controllers("quay.io/calico/kube-controllers:v3.31.7")
    assert controllers.config.user == "999"
    assert controllers.config.entrypoint == ("/usr/bin/wrapper", "/usr/bin/kube-controllers")
    assert ("/status/status.json", 999) in controllers.owned


def test_under_tcg_calico_nodes_probes_wait_as_long_as_the_control_planes():
    from harness import tuning

    tcg, kvm = tuning.decide("qemu", "qemu"), tuning.decide("kvm", "kvm")
    [node] = list(yaml.safe_load_all(calico.kubeadm_manifest(UPSTREAM_SHAPE, "10.244.0.0/16", tcg)))[1][
        "spec"]["template"]["spec"]["containers"]
    assert node["livenessProbe"] == {**tuning.TCG_LIVENESS, "timeoutSeconds": tuning.TCG_CALICO_PROBE_TIMEOUT}
    assert node["readinessProbe"] == {"timeoutSeconds": tuning.TCG_CALICO_PROBE_TIMEOUT}
    [node] = list(yaml.safe_load_all(calico.kubeadm_manifest(UPSTREAM_SHAPE, "10.244.0.0/16", kvm)))[1][
        "spec"]["template"]["spec"]["containers"]
    assert "livenessProbe" not in node and "readinessProbe" not in node  # upstream's, untouched
