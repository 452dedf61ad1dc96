"""Cluster probes on API objects of the shapes the API server returns (the kubernetes
client's own model classes), served by a stand-in for ClusterClient."""

from datetime import datetime, timezone

from kubernetes import client as k

from harness import cluster_versions
from harness.artifacts import kit as kits
from harness.artifacts.versions import DEFAULT_KUBERNETES, FLANNEL, FLANNEL_CNI_PLUGIN_TAG
from harness.probes import make

T0 = datetime(2026, 12, 1, 6, 0, tzinfo=timezone.utc)


def node(name, ready, cidr="", reason="KubeletReady", message="kubelet is posting ready status", kubelet=f"v{DEFAULT_KUBERNETES}"):
    info = k.V1NodeSystemInfo(kubelet_version=kubelet, architecture="amd64", boot_id="b", container_runtime_version="",
                              kernel_version="", kube_proxy_version="", machine_id="m", operating_system="linux",
                              os_image="", system_uuid="u")
    return k.V1Node(metadata=k.V1ObjectMeta(name=name), spec=k.V1NodeSpec(pod_cidr=cidr),
                    status=k.V1NodeStatus(conditions=[k.V1NodeCondition(type="Ready", status=ready, reason=reason,
                                                                        message=message)], node_info=info))


def pod(name, phase="Running", node_name="cp1", restarts=0, waiting=None, ready=True, owner="DaemonSet", ip=None,
        labels=None, images=(), init_images=(), message=None):
    state = k.V1ContainerState(waiting=k.V1ContainerStateWaiting(reason=waiting, message=message)) if waiting \
        else k.V1ContainerState(running=k.V1ContainerStateRunning())
    return k.V1Pod(
        metadata=k.V1ObjectMeta(name=name, labels=labels, owner_references=[k.V1OwnerReference(
            api_version="v1", kind=owner, name="o", uid="u")] if owner else None),
        spec=k.V1PodSpec(node_name=node_name, containers=[k.V1Container(name=f"c{i}", image=image)
                                                          for i, image in enumerate(images)],
                         init_containers=[k.V1Container(name=f"i{i}", image=image)
                                          for i, image in enumerate(init_images)] or None),
        status=k.V1PodStatus(phase=phase, pod_ip=ip, container_statuses=[k.V1ContainerStatus(
            name="c", image="i", image_id="", ready=ready, restart_count=restarts, state=state)]))


class FakeCluster:
    def __init__(self, nodes=(), pods=(), logs="", events=(), exec_out="", version=f"v{DEFAULT_KUBERNETES}"):
        self._nodes, self._pods, self._logs, self._events, self._exec = list(nodes), list(pods), logs, list(events), exec_out
        self._version = version
        self.execs = []

    def version(self):
        return self._version

    def nodes(self):
        return self._nodes

    def pods(self, namespace, selector=""):
        key, _, value = selector.partition("=")
        # a pod given labels is chosen by them; one without, by its name
        return [p for p in self._pods if not selector or (
            p.metadata.labels.get(key) == value if p.metadata.labels else value in p.metadata.name)]

    def logs(self, namespace, pod, container, previous, tail=200):
        return self._logs

    def events(self, namespace):
        return self._events

    def exec(self, namespace, pod, argv, timeout=30):
        self.execs.append(argv)
        return self._exec

    def ensure_probe_pod(self, image):
        pass

    def ensure_web(self, image, name="kubelab-web"):
        self.web = name


def read(kind, cluster, **args):
    reading, code = make(kind, args).observe(cluster, "")
    return reading


def test_node_ready_counts_and_names():
    cluster = FakeCluster([node("w1", "False", reason="KubeletNotReady",
                                message="container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"),
                           node("cp1", "True")])
    r = read("node-ready", cluster)
    assert r.value == 1
    assert r.text.splitlines()[0] == "cp1 Ready=True KubeletReady: kubelet is posting ready status"
    assert "w1 Ready=False KubeletNotReady: container runtime network not ready" in r.text
    assert read("node-ready", cluster, node="w1").value == "False"
    assert read("node-ready", cluster, node="gone").value == "absent"


def test_node_podcidr():
    r = read("node-podcidr", FakeCluster([node("w1", "True", "10.244.1.0/24"), node("cp1", "True", "10.244.0.0/24")]))
    assert r.value == "cp1=10.244.0.0/24,w1=10.244.1.0/24"


def test_pods_fields():
    cluster = FakeCluster(pods=[pod("kube-flannel-ds-abcde", restarts=4, waiting="CrashLoopBackOff", ready=False),
                                pod("coredns-1", phase="Pending", node_name=None, owner="ReplicaSet")])
    assert read("pods", cluster, namespace="kube-system").value == "Pending,Running"
    flannel = read("pods", cluster, namespace="kube-flannel", selector="app=flannel", field="restarts")
    assert flannel.value == "4"
    state = read("pods", cluster, namespace="kube-flannel", selector="app=flannel", field="state")
    assert state.value == "Waiting(CrashLoopBackOff)"
    assert "kube-flannel-ds-abcde node=cp1 phase=Running ready=false restarts=4 state=Waiting(CrashLoopBackOff) owner=DaemonSet" \
        in state.text
    assert read("pods", cluster, namespace="x", field="count").value == 2


def test_pods_read_the_kubelets_crashloop_backoff_from_the_waiting_message():
    # the message as kubelet v1.36.3 words it (pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff)
    cluster = FakeCluster(pods=[
        pod("kube-flannel-ds-abcde", restarts=3, waiting="CrashLoopBackOff", ready=False,
            message="back-off 40s restarting failed container=kube-flannel pod=kube-flannel-ds-abcde_kube-flannel(u)"),
        pod("kube-flannel-ds-fghij", node_name="w1", restarts=0)])
    reading = read("pods", cluster, namespace="kube-flannel", selector="app=flannel", field="backoff")
    assert reading.value == "40s,none"
    assert "restarts=3 state=Waiting(CrashLoopBackOff) owner=DaemonSet backoff=40s" in reading.text


def test_pod_logs_of_the_previous_instance():
    line = ("E1201 06:10:11.123456       1 main.go:232] Failed to check br_netfilter: stat "
            "/proc/sys/net/bridge/bridge-nf-call-iptables: no such file or directory")
    r = read("pod-logs", FakeCluster(pods=[pod("kube-flannel-ds-x")], logs=line + "\n"),
             namespace="kube-flannel", selector="app=flannel", container="kube-flannel", previous=True)
    assert r.value == 1 and "Failed to check br_netfilter" in r.text


def test_events_oldest_first_and_filtered():
    ev = lambda reason, name, msg, minute: k.CoreV1Event(  # noqa: E731
        metadata=k.V1ObjectMeta(name=name), involved_object=k.V1ObjectReference(kind="Pod", name=name),
        reason=reason, message=msg, last_timestamp=T0.replace(minute=minute))
    cluster = FakeCluster(events=[ev("BackOff", "flannel", "Back-off restarting failed container", 5),
                                  ev("SandboxChanged", "coredns", "Pod sandbox changed, it will be killed and re-created.", 1)])
    r = read("events", cluster, namespace="kube-system")
    assert r.value == 2 and r.text.splitlines()[0].startswith("SandboxChanged Pod/coredns:")
    assert read("events", cluster, namespace="kube-system", reason="BackOff").value == 1


def test_dns_from_the_probe_pod():
    out = ("Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\n"
           "Name:\tkubernetes.default.svc.cluster.local\nAddress: 10.96.0.1\n")
    cluster = FakeCluster(pods=[pod("kubelab-probe", owner=None)], exec_out=out)
    r = read("dns", cluster)
    assert r.value == "answered" and "10.96.0.1" in r.text
    assert cluster.execs == [["nslookup", "-timeout=5", "kubernetes.default.svc.cluster.local"]]
    timeout = ";; connection timed out; no servers could be reached\n"
    assert read("dns", FakeCluster(pods=[pod("kubelab-probe")], exec_out=timeout)).value == "no answer"
    assert read("dns", FakeCluster(pods=[pod("kubelab-probe", phase="Pending")])).value == "no answer"


def test_service_reaches_both_pods():
    web = [pod("kubelab-web-a", node_name="cp1"), pod("kubelab-web-b", node_name="w1")]
    answers = "\n".join(["kubelab-web-a", "kubelab-web-b"] * 10)
    cluster = FakeCluster(pods=web + [pod("kubelab-probe")], exec_out=answers)
    r = read("service-reaches-pods", cluster)
    assert r.value == 2
    assert "web pods: kubelab-web-a on cp1, kubelab-web-b on w1" in r.text
    assert "kubelab-web-a answered 10 of 20" in r.text
    one_sided = FakeCluster(pods=web + [pod("kubelab-probe")], exec_out="kubelab-web-a\nFAILED\n" * 10)
    r = read("service-reaches-pods", one_sided)
    assert r.value == 1 and "10 request(s) failed" in r.text


def test_pods_reach_pods_by_ip_names_each_path():
    web = [pod("kubelab-web-a", node_name="cp1", ip="10.244.0.5"), pod("kubelab-web-b", node_name="w1", ip="10.244.1.3")]
    probe = pod("kubelab-probe", node_name="cp1", ip="10.244.0.4", owner=None)
    # the pod on w1 does not answer: a cross-node path is broken, the local one works
    cluster = FakeCluster(pods=web + [probe], exec_out="10.244.0.5 kubelab-web-a\n10.244.1.3 FAILED\n")
    r = read("pods-reach-pods", cluster)
    assert r.value == 1
    assert r.text.splitlines() == ["from kubelab-probe on cp1 (10.244.0.4)",
                                   "kubelab-web-a on cp1 at 10.244.0.5: answered",
                                   "kubelab-web-b on w1 at 10.244.1.3: no answer"]
    assert "http://10.244.1.3:8080/" in cluster.execs[0][2]
    # a pod that answers with another pod's name (an address reused elsewhere) did not answer
    wrong = FakeCluster(pods=web + [probe], exec_out="10.244.0.5 kubelab-web-b\n10.244.1.3 kubelab-web-b\n")
    assert read("pods-reach-pods", wrong).value == 1
    assert read("pods-reach-pods", FakeCluster(pods=[probe])).text.startswith("not ready: 0 web pod(s)")


def test_an_api_that_does_not_answer_is_a_reading_not_an_error():
    class Down(FakeCluster):
        def nodes(self):
            raise ConnectionRefusedError(111, "Connection refused")

    reading, code = make("node-ready", {}).observe(Down(), "")
    assert reading.value is None and code is None and reading.text.startswith("API not answering")


def test_api_and_transport_failures_are_all_not_answering():
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import MaxRetryError, ProtocolError, ReadTimeoutError

    failures = [ApiException(status=503, reason="Service Unavailable"), ApiException(status=0, reason="ws closed"),
                MaxRetryError(None, "/api/v1/nodes", "Connection refused"), ProtocolError("Connection aborted."),
                ReadTimeoutError(None, "/api/v1/nodes", "Read timed out."), TimeoutError("timed out"),
                ConnectionResetError(104, "Connection reset by peer")]
    for failure in failures:
        class Down(FakeCluster):
            def nodes(self, failure=failure):
                raise failure

        reading, code = make("node-ready", {}).observe(Down(), "")
        assert (reading.value, code) == (None, None), failure
        assert reading.text.startswith("API not answering"), failure


def test_a_bug_in_a_probe_is_raised_not_read_as_an_api_that_is_down():
    import pytest

    for bug in (AttributeError("'NoneType' object has no attribute 'conditions'"), KeyError("phase"),
                TypeError("unsupported operand")):
        class Broken(FakeCluster):
            def nodes(self, bug=bug):
                raise bug

        with pytest.raises(type(bug)):
            make("node-ready", {}).observe(Broken(), "")


def test_the_plain_workload_is_a_separate_deployment():
    cluster = FakeCluster(pods=[pod("kubelab-probe")])
    r = read("service-reaches-pods", cluster, tolerate_control_plane=False)
    assert cluster.web == "kubelab-app" and r.value == 0 and r.text.startswith("not ready: 0 web pod(s)")


# the images a kubeadm 1.36.3 cluster with flannel runs (the kit's references)
CONTROL_PLANE_PODS = [
    pod("etcd-cp1", owner="Node", labels={"component": "etcd", "tier": "control-plane"},
        images=["registry.k8s.io/etcd:3.6.8-0"]),
    pod("coredns-7d764666f9-abcde", owner="ReplicaSet", labels={"k8s-app": "kube-dns"},
        images=["registry.k8s.io/coredns/coredns:v1.14.2"]),
    pod("coredns-7d764666f9-fghij", owner="ReplicaSet", labels={"k8s-app": "kube-dns"},
        images=["registry.k8s.io/coredns/coredns:v1.14.2"]),
    pod("kube-flannel-ds-x1", labels={"app": "flannel", "tier": "node"},
        images=[kits.FLANNEL_IMAGE], init_images=[kits.FLANNEL_CNI_IMAGE, kits.FLANNEL_IMAGE]),
]


def test_the_cluster_reports_its_versions_through_the_api():
    cluster = FakeCluster(nodes=[node("w1", "True"), node("cp1", "True")],
                          pods=CONTROL_PLANE_PODS + [pod("kubelab-probe", owner=None)])
    versions = cluster_versions.read(cluster, cni="flannel")
    assert versions == {
        "api_server": f"v{DEFAULT_KUBERNETES}",
        "kubelet": {"cp1": f"v{DEFAULT_KUBERNETES}", "w1": f"v{DEFAULT_KUBERNETES}"},
        "images": {"etcd": ["registry.k8s.io/etcd:3.6.8-0"], "CoreDNS": ["registry.k8s.io/coredns/coredns:v1.14.2"],
                   "flannel": [kits.FLANNEL_CNI_IMAGE, kits.FLANNEL_IMAGE]}}
    assert cluster_versions.rows(versions)[-1] == (
        "flannel", f"{FLANNEL_CNI_PLUGIN_TAG} ({kits.FLANNEL_CNI_IMAGE}), {FLANNEL} ({kits.FLANNEL_IMAGE})",
        "image of its pods")
    assert "flannel" not in cluster_versions.read(cluster, cni="none")["images"]
    assert cluster_versions.tag("localhost:5000/pause") == "" and cluster_versions.tag("a/b:1@sha256:0") == "1"


def test_a_proof_whose_pods_are_not_running_yet_reads_again_sooner_than_its_exec_interval():
    from harness.model import Check, ProbeRef
    from harness.probes.cluster import NOT_RUNNING_AGAIN
    from harness.scenario.checks import evaluate

    pending = pod("kubelab-probe", phase="Pending")
    web = [pod("kubelab-web-a", node_name="cp1", ip="10.244.0.5"), pod("kubelab-web-b", node_name="w1", ip="10.244.1.3")]
    for kind in ("dns", "service-reaches-pods", "pods-reach-pods"):
        assert read(kind, FakeCluster(pods=web + [pending])).again_in == NOT_RUNNING_AGAIN < make(kind, {}).poll_interval
    # once the pods run, the read was an exec: the probe's own interval applies
    answered = FakeCluster(pods=web + [pod("kubelab-probe")], exec_out="kubelab-web-a\nkubelab-web-b\n" * 10)
    assert read("service-reaches-pods", answered).again_in is None

    class Starting:  # two reads before the pods run, then the proof holds
        poll_interval = make("service-reaches-pods", {}).poll_interval

        def __init__(self):
            self.clusters = [FakeCluster(pods=web + [pending])] * 2 + [answered]

        def command(self, ctx):
            return ""

        def observe(self, remote, command):
            return make("service-reaches-pods", {}).observe(self.clusters.pop(0), command)

    slept, now = [], [0.0]
    check = Check(name="proof", probe=ProbeRef("service-reaches-pods", {}), equals=2, within=600.0)
    outcome = evaluate(check, None, probe=Starting(), clock=lambda: now[0],
                       sleep=lambda s: (slept.append(s), now.__setitem__(0, now[0] + s)))
    assert outcome.met and outcome.polls == 3
    assert slept == [NOT_RUNNING_AGAIN, NOT_RUNNING_AGAIN]
