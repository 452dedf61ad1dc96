"""Cluster probes (and the two machine probes a cluster node answers) parsing what a real
kubeadm cluster said: tests/fixtures/cluster/kubeadm-baseline-sid.json was taken from a kept
`kubeadm-baseline` lab here (sid, Kubernetes v1.36.3, flannel, two nodes) with
tests/cluster_capture.py, the machine outputs with tests/output_capture.py from its cp1."""

import re

from .captured import cluster, machine

CAPTURE = "kubeadm-baseline-sid"
FLANNEL = {"namespace": "kube-flannel", "selector": "app=flannel", "container": "kube-flannel"}


def test_node_ready_counts_the_ready_nodes_and_says_why_each_is():
    r = cluster("node-ready", {}, CAPTURE)
    assert r.value == 2
    assert r.text.splitlines() == ["cp1 Ready=True KubeletReady: kubelet is posting ready status",
                                   "w1 Ready=True KubeletReady: kubelet is posting ready status"]


def test_node_podcidr_lists_each_nodes_range():
    r = cluster("node-podcidr", {}, CAPTURE)
    assert r.text.splitlines() == ["cp1=10.244.0.0/24", "w1=10.244.1.0/24"]


def test_pods_of_the_control_plane_are_mirror_pods_owned_by_the_node():
    r = cluster("pods", {"namespace": "kube-system", "selector": "tier=control-plane"}, CAPTURE)
    lines = r.text.splitlines()
    assert [line.split()[0] for line in lines] == ["etcd-cp1", "kube-apiserver-cp1", "kube-controller-manager-cp1",
                                                   "kube-scheduler-cp1"]
    assert all(" node=cp1 phase=Running ready=true " in line and " owner=Node " in line for line in lines)


def test_pods_of_flannel_are_a_daemonsets_one_per_node():
    r = cluster("pods", {"namespace": "kube-flannel"}, CAPTURE)
    assert sorted(re.search(r"node=(\S+)", line).group(1) for line in r.text.splitlines()) == ["cp1", "w1"]
    assert all(" owner=DaemonSet " in line for line in r.text.splitlines())


def test_pod_logs_are_flanneld_own_lines():
    r = cluster("pod-logs", FLANNEL, CAPTURE)
    # flannel main.go (v0.28.4): log.Infof("CLI flags config: %+v", opts)
    assert re.search(r"^I\d{4} [\d:.]+ +1 main\.go:\d+\] CLI flags config: \{etcdEndpoints:", r.text, re.M)


def test_events_name_their_reason_and_object():
    r = cluster("events", {"namespace": "kube-system"}, CAPTURE)
    # the kubelet's "already present on machine" (pkg/kubelet/images/image_manager.go, v1.36.3): images preloaded
    assert 'Pulled Pod/kube-apiserver-cp1: Container image "registry.k8s.io/kube-apiserver:v1.36.3" already ' \
        "present on machine" in r.text


def test_dns_reads_busyboxs_nslookup_answer():
    r = cluster("dns", {}, CAPTURE)
    assert r.value == "answered"
    assert "Name:\tkubernetes.default.svc.cluster.local\nAddress: 10.96.0.1" in r.text


def test_service_reaches_both_pods_on_two_nodes():
    r = cluster("service-reaches-pods", {}, CAPTURE)
    lines = r.text.splitlines()
    assert lines[0].startswith("web pods: ") and " on w1" in lines[0] and " on cp1" in lines[0]
    answered = [int(m.group(1)) for m in (re.search(r"answered (\d+) of 20", line) for line in lines[1:]) if m]
    assert len(answered) == 2 and all(answered) and sum(answered) == 20


def test_pods_reach_pods_by_ip_across_nodes():
    r = cluster("pods-reach-pods", {}, CAPTURE)
    lines = r.text.splitlines()
    assert lines[0].startswith("from kubelab-probe on ")
    assert [line.rsplit(": ", 1)[1] for line in lines[1:]] == ["answered", "answered"]


def test_ca_cert_hash_is_what_kubeadm_prints_in_its_join_command():
    # `kubeadm token create --print-join-command` on the same cp1 printed this --discovery-token-ca-cert-hash
    assert machine("ca-cert-hash", {}, "sid-kubeadm-ca-cert-hash").value == \
        "sha256:0fcb327f95925f8c43a300cea26fe42367a394d77c7e0a85040ca03acc8f9008"


def test_command_value_is_the_exit_code_and_its_text_the_output():
    r = machine("command", {"cmd": "grep -- --service-cluster-ip-range /etc/kubernetes/manifests/kube-apiserver.yaml"},
                "sid-kubeadm-service-range")
    assert (r.value, r.text) == (0, "    - --service-cluster-ip-range=10.96.0.0/12\n")
