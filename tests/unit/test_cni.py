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
          livenessProbe: {exec: {command: [/bin/calico-node, -felix-live]}, periodSeconds: 10, initialDelaySeconds: 10,
                          failureThreshold: 6, timeoutSeconds: 10}
          readinessProbe: {exec: {command: [/bin/calico-node, -felix-ready]}, periodSeconds: 10, timeoutSeconds: 10}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: calico-kube-controllers, namespace: kube-system}
spec:
  template:
    spec:
      containers:
        - name: calico-kube-controllers
          image: quay.io/calico/kube-controllers:v3.31.7
          livenessProbe: {exec: {command: [/usr/bin/check-status, -l]}, periodSeconds: 10, initialDelaySeconds: 10,
                          failureThreshold: 6, timeoutSeconds: 10}
          readinessProbe: {exec: {command: [/usr/bin/check-status, -r]}, periodSeconds: 10}
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


def test_under_tcg_each_calico_probe_runs_seldom_and_may_take_30_s():
    """calico's probes exec a Go binary each (measured under TCG: 7.6 s and 35 s, four every 10 s)."""
    from harness import tuning

    tcg, kvm = tuning.decide("qemu", "qemu"), tuning.decide("kvm", "kvm")

    def containers(tuned):
        docs = list(yaml.safe_load_all(calico.kubeadm_manifest(UPSTREAM_SHAPE, "10.244.0.0/16", tuned)))
        return {c["name"]: c for d in docs[1:] for c in d["spec"]["template"]["spec"]["containers"]}

    for name, c in containers(tcg).items():
        assert {k: c["livenessProbe"][k] for k in ("periodSeconds", "timeoutSeconds", "failureThreshold")} == \
            {"periodSeconds": 30, "timeoutSeconds": 30, "failureThreshold": 30}, name
        assert (c["readinessProbe"]["periodSeconds"], c["readinessProbe"]["timeoutSeconds"]) == (30, 30), name
    upstream = {c["name"]: c for d in list(yaml.safe_load_all(UPSTREAM_SHAPE))[1:]
                for c in d["spec"]["template"]["spec"]["containers"]}
    for name, c in containers(kvm).items():  # upstream's probes, untouched
        assert (c["livenessProbe"], c["readinessProbe"]) == (upstream[name]["livenessProbe"],
                                                             upstream[name]["readinessProbe"])
    assert set(containers(kvm)) == {"calico-node", "calico-kube-controllers"}


def test_a_calico_node_gets_a_route_to_its_pods_gateway_on_both_tracks():
    """Guests have no default route; calico's pods route via 169.254.1.1, which the node answers
    by proxy ARP only for an address it routes (measured: CoreDNS 'connect: no route to host' to
    10.96.0.1 until the route was there). flannel's pods use a real gateway and get no such route."""
    from harness.cni import routes_for

    calico_routes = routes_for(InstallDef(track="kubeadm", cni="calico"))
    assert [c for _, c, _ in calico_routes[:2]] == ["ip route replace 10.96.0.0/12 dev eth0",
                                                    "ip route replace 169.254.1.1/32 dev eth0"]
    kept = calico_routes[-1][1]  # both persisted, so a rebooted node keeps them
    assert "Destination=10.96.0.0/12" in kept and "Destination=169.254.1.1/32" in kept
    assert not any("169.254" in c for _, c, _ in routes_for(InstallDef(track="kubeadm", cni="flannel")))
    assert cni.by_name("calico").node_routes == ("169.254.1.1/32",)


def test_under_tcg_the_kubelet_asks_felixs_health_endpoint_itself():
    """calico-node -felix-live/-felix-ready only GET felix's localhost:9099 endpoints under VXLAN
    (node/pkg/health/health.go, v3.31.7): under TCG the kubelet GETs them, and no runc or calico-node
    binary starts per probe. kube-controllers' check-status reads a file and stays an exec."""
    from harness import tuning

    docs = list(yaml.safe_load_all(calico.kubeadm_manifest(UPSTREAM_SHAPE, "10.244.0.0/16",
                                                           tuning.decide("qemu", "qemu"))))
    [node] = docs[1]["spec"]["template"]["spec"]["containers"]
    [controllers] = docs[2]["spec"]["template"]["spec"]["containers"]
    for probe, path in (("livenessProbe", "/liveness"), ("readinessProbe", "/readiness")):
        assert "exec" not in node[probe]  # one handler per probe, or the API server refuses the pod
        assert node[probe]["httpGet"] == {"host": "localhost", "port": 9099, "path": path}
        assert controllers[probe]["exec"]["command"][0] == "/usr/bin/check-status"
    [kvm_node] = list(yaml.safe_load_all(calico.kubeadm_manifest(
        UPSTREAM_SHAPE, "10.244.0.0/16", tuning.decide("kvm", "kvm"))))[1]["spec"]["template"]["spec"]["containers"]
    assert kvm_node["livenessProbe"]["exec"]["command"] == ["/bin/calico-node", "-felix-live"]
    assert "httpGet" not in kvm_node["readinessProbe"]
