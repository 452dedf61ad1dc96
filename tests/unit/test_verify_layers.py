"""verify's layers on API objects of the shapes the API server returns (the kubernetes
client's own model classes) and on node output: openssl's, produced here by the
real tool on certificates made for the test, and etcd's and kubeadm's as captured
from a real kubeadm node (tests/fixtures/verify)."""

import json
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from kubernetes import client as k

from harness import verify
from harness.verify import certs, dns, etcd, kube_system, nodes, records
from harness.verify.finding import FAILS, HOLDS, NOT_APPLICABLE
from harness.verify.sections import script, split
from tests.conftest import require_tool

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "verify"


def node(name, labels=None, taints=(), unschedulable=False, ready="True", ip="192.168.50.10", annotations=None,
         cpu="2"):
    return k.V1Node(
        metadata=k.V1ObjectMeta(name=name, labels=labels or {}, annotations=annotations or {}),
        spec=k.V1NodeSpec(taints=[k.V1Taint(key=key, effect=effect, value=value) for key, value, effect in taints],
                          unschedulable=unschedulable),
        status=k.V1NodeStatus(
            conditions=[k.V1NodeCondition(type="Ready", status=ready)],
            addresses=[k.V1NodeAddress(type="InternalIP", address=ip)], allocatable={"cpu": cpu},
            node_info=k.V1NodeSystemInfo(
                architecture="amd64", boot_id="", container_runtime_version="containerd://2.1.5",
                kernel_version="", kube_proxy_version="", kubelet_version="v1.36.3", machine_id="",
                operating_system="linux", os_image="", system_uuid="")))


CP = "node-role.kubernetes.io/control-plane"


def test_layers_and_their_order():
    assert verify.chosen("all") == verify.LAYERS
    assert verify.chosen("workload,nodes") == ("nodes", "workload")  # run order, not the order given
    assert verify.chosen(["dns"]) == ("dns",)
    with pytest.raises(ValueError, match="nodez: not a layer; allowed: all, or any of nodes, etcd"):
        verify.chosen("nodes,nodez")
    for name in verify.LAYERS:
        module = verify.layer(name)
        assert module.LAYER == name and module.READS and callable(module.check)


def test_sections_round_trip_through_a_real_shell():
    out = subprocess.run(["sh", "-c", script([("one", "echo a; echo b"), ("two", "false"), ("three", "echo c >&2")])],
                         capture_output=True, text=True).stdout
    assert split(out) == {"one": "a\nb\n", "two": "", "three": "c\n"}


# -- nodes ---------------------------------------------------------------------------------
def test_nodes_says_why_a_control_plane_does_or_does_not_take_plain_pods():
    rows = nodes.rows([node("w1", {"kubernetes.io/os": "linux"}),
                       node("cp1", {CP: ""}, taints=[(CP, None, "NoSchedule")]),
                       node("cp2", {CP: "", "node-role.kubernetes.io/worker": ""}, taints=[("x", "y", "PreferNoSchedule")]),
                       node("cp3", {CP: ""}, unschedulable=True, ready="False")])
    found = {f.check: f for f in nodes.judge(rows)}
    assert found["cp1"].value == ("roles=control-plane; taints=node-role.kubernetes.io/control-plane:NoSchedule; "
                                  "schedulable=yes; kubelet v1.36.3; containerd://2.1.5")
    assert found["cp1 (control plane) takes plain pods"].value == \
        "no: taint node-role.kubernetes.io/control-plane:NoSchedule"
    assert found["cp2 (control plane) takes plain pods"].value == "yes: no NoSchedule or NoExecute taint"
    assert found["cp3 (control plane) takes plain pods"].value == "no: cordoned (spec.unschedulable)"
    assert "w1 (control plane) takes plain pods" not in found  # a worker is not asked
    assert found["w1"].value.startswith("roles=none;")
    assert (found["cp1 Ready"].verdict, found["cp3 Ready"].verdict) == (HOLDS, FAILS)


# -- etcd ------------------------------------------------------------------------------------
def test_etcd_flags_from_a_real_kubeadm_manifest():
    manifest = (FIXTURES / "kube-apiserver.yaml").read_text()
    flags = etcd.apiserver_flags(manifest)
    assert flags == {"etcd-servers": "https://127.0.0.1:2379", "etcd-cafile": "/etc/kubernetes/pki/etcd/ca.crt",
                     "etcd-certfile": "/etc/kubernetes/pki/apiserver-etcd-client.crt",
                     "etcd-keyfile": "/etc/kubernetes/pki/apiserver-etcd-client.key"}
    assert certs.folders(manifest)[:2] == ["/etc/kubernetes/pki", "/etc/kubernetes/pki/etcd"]
    assert certs.folders(manifest)[-1] == "/var/lib/kubelet/pki"
    asked = etcd.ask_script(flags)
    assert "--cacert /etc/kubernetes/pki/etcd/ca.crt --cert /etc/kubernetes/pki/apiserver-etcd-client.crt" in asked
    assert "https://127.0.0.1:2379/v3/cluster/member/list" in asked


def test_etcd_answers_as_captured_from_a_real_node():
    parts = split((FIXTURES / "etcd-answers.txt").read_text())
    ok, said = etcd.health(parts["health https://127.0.0.1:2379"])
    assert ok and '"health":"true"' in said
    listed = etcd.members(parts["members https://127.0.0.1:2379"])
    assert len(listed) == 1 and listed[0].startswith("cp1 (https://")
    assert etcd.health("curl: (7) Failed to connect to 127.0.0.1 port 2379")[0] is False
    assert etcd.members("") is None


def test_etcd_answers_after_a_retried_attempt_are_the_answers():
    """curl --retry prints the failed attempt's error, then the retry's answer (a CI run under
    TCG, verbatim apart from the member list's end): the answer holds, the error stays in the text."""
    retried = 'curl: (28) Operation timed out after 30007 milliseconds with 0 bytes received\n{"health":"true","reason":""}\n'
    ok, said = etcd.health(retried)
    assert ok and said.startswith("curl: (28) Operation timed out")
    listed = etcd.members('curl: (28) Operation timed out after 30004 milliseconds with 0 bytes received\n'
                          '{"header":{"cluster_id":"9164679927647611456", "member_id":"14032625994776343994", '
                          '"raft_term":"2"}, "members":[{"ID":"14032625994776343994", "name":"cp1", '
                          '"clientURLs":["https://192.168.100.10:2379"]}]}\n')
    assert listed == ["cp1 (https://192.168.100.10:2379)"]
    assert etcd.health("curl: (28) Operation timed out after 30007 milliseconds with 0 bytes received\n"
                       "curl: (28) Operation timed out after 30001 milliseconds with 0 bytes received\n")[0] is False


def test_etcd_as_a_host_unit_from_kubesprays_environment_file():
    # /etc/etcd.env as kubespray's roles/etcd/templates/etcd.env.j2 (v2.31.0-96) renders it for node1
    env = etcd.env("# Environment file for etcd 3.6.14\nETCD_DATA_DIR=/var/lib/etcd\n"
                   "ETCD_LISTEN_CLIENT_URLS=https://192.168.100.11:2379,https://127.0.0.1:2379\n"
                   "ETCD_NAME=etcd1\nETCD_TRUSTED_CA_FILE=/etc/ssl/etcd/ssl/ca.pem\n")
    unit = etcd.unit("LoadState=loaded\nActiveState=active\nFragmentPath=/etc/systemd/system/etcd.service\n")
    found = {f.check: f for f in etcd.judge_placement([], {"node1": unit}, {"node1": env})}
    assert found["etcd runs as"].value == "host unit etcd.service (node1: active)"
    assert found["static pod"].verdict == NOT_APPLICABLE
    assert found["host unit on node1"].verdict == HOLDS
    assert "ETCD_NAME=etcd1" in found["host unit on node1"].value


def test_etcd_as_a_static_pod():
    pod = k.V1Pod(metadata=k.V1ObjectMeta(name="etcd-cp1", owner_references=[
        k.V1OwnerReference(api_version="v1", kind="Node", name="cp1", uid="u")]), spec=k.V1PodSpec(
        node_name="cp1", containers=[]))
    none = etcd.unit("LoadState=not-found\nActiveState=inactive\nFragmentPath=\n")
    found = {f.check: f for f in etcd.judge_placement(etcd.static_pods([pod]), {"cp1": none}, {"cp1": {}})}
    assert found["etcd runs as"].value == "static pod (etcd-cp1 on cp1)"
    assert found["host unit"].verdict == NOT_APPLICABLE


# -- certificates ------------------------------------------------------------------------------
def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def pki(tmp_path):
    """A CA, a leaf it signed and a second, unrelated CA with its own leaf: two lineages."""
    require_tool("openssl", "Debian package openssl")
    root = tmp_path / "pki"
    (root / "etcd").mkdir(parents=True)
    for ca, days in (("ca", 3650), ("etcd/ca", 36500)):
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                 f"{ca}.key", "-out", f"{ca}.crt", "-days", str(days), "-subj", f"/CN={ca.replace('/', '-')}",
                 cwd=root)
    for leaf, ca, days in (("apiserver", "ca", 365), ("etcd/server", "etcd/ca", 100)):
        _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", f"{leaf}.key",
                 "-out", f"{leaf}.csr", "-subj", f"/CN={leaf.replace('/', '-')}", cwd=root)
        _openssl("x509", "-req", "-in", f"{leaf}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key", "-CAcreateserial",
                 "-out", f"{leaf}.crt", "-days", str(days), cwd=root)
    (root / "ca.key").write_text("-----BEGIN PRIVATE KEY-----\n")  # a key is not a certificate
    return root


def test_certificates_read_with_openssl_their_lineage_and_the_first_to_expire(pki):
    # the etcd folder named beside the folder that holds it, as kubeadm's manifest names both: each file once
    out = subprocess.run(["sh", "-c", certs.read_script([str(pki), str(pki / "etcd"), str(pki / "none")])],
                         capture_output=True, text=True).stdout
    parts = split(out)
    found = certs.parse_certs(parts["files"])
    assert [c.path.removeprefix(str(pki)) for c in found] == ["/apiserver.crt", "/ca.crt", "/etcd/ca.crt",
                                                              "/etcd/server.crt"]
    by = {c.path.removeprefix(str(pki)): c for c in found}
    assert by["/ca.crt"].self_signed and by["/apiserver.crt"].subject == "CN=apiserver"
    assert certs.lineage(by["/apiserver.crt"], found) == f"{pki}/ca.crt"
    assert certs.lineage(by["/etcd/server.crt"], found) == f"{pki}/etcd/ca.crt"
    assert certs.lineage(by["/etcd/ca.crt"], found) == "self-signed"
    now = float(parts["now"])
    assert 99 <= (by["/etcd/server.crt"].not_after - now) / 86400 <= 100
    result = {f.check: f for f in certs.judge("cp1", found, now, None, str(pki))}
    first = result["cp1: first to expire"]
    assert first.value.startswith(f"{pki}/etcd/server.crt on ")
    assert re.search(r"\((99|100) days left\)$", first.value)  # 99 once a second has passed since it was made
    assert result["cp1: none expired"].verdict == HOLDS
    assert result["cp1: kubeadm certs check-expiration"].verdict == NOT_APPLICABLE  # no kubeadm on this host
    assert result[f"cp1:{pki}/apiserver.crt"].value.endswith(f"signed by {pki}/ca.crt; not in kubeadm's listing")
    assert certs.judge("cp1", found, by["/etcd/server.crt"].not_after + 1, None, str(pki))[-3].verdict == FAILS


def test_kubeadm_listing_as_captured_and_what_it_does_not_cover():
    rows = certs.parse_check_expiration((FIXTURES / "check-expiration.txt").read_text())
    names = [r["name"] for r in rows]
    assert "apiserver" in names and "etcd-server" in names and "admin.conf" in names
    assert [r["name"] for r in rows if r["ca"]] == ["ca", "etcd-ca", "front-proxy-ca"]
    assert certs.kubeadm_file("etcd-healthcheck-client", "/etc/kubernetes/pki") == \
        "/etc/kubernetes/pki/etcd/healthcheck-client.crt"
    assert certs.kubeadm_file("etcd-ca", "/etc/kubernetes/ssl") == "/etc/kubernetes/ssl/etcd/ca.crt"
    assert certs.kubeadm_file("super-admin.conf", "/etc/kubernetes/pki") == "/etc/kubernetes/super-admin.conf"
    day = 86400.0
    files = [certs.Cert("/etc/kubernetes/pki/apiserver.crt", "CN=a", "CN=kubernetes", 400 * day),
             certs.Cert("/var/lib/kubelet/pki/kubelet-client-current.pem", "CN=system:node:cp1", "CN=kubernetes",
                        390 * day),
             certs.Cert("/etc/ssl/etcd/ssl/member-node1.pem", "CN=etcd-member", "CN=etcd-ca", 36500 * day)]
    found = {f.check: f for f in certs.judge("cp1", files, 35 * day, rows, "/etc/kubernetes/pki")}
    assert found["cp1: not covered by kubeadm certs check-expiration"].value == \
        "/etc/ssl/etcd/ssl/member-node1.pem; /var/lib/kubelet/pki/kubelet-client-current.pem"
    assert found["cp1:/etc/kubernetes/pki/apiserver.crt"].value.endswith("listed by kubeadm")


# -- dns -------------------------------------------------------------------------------------
def daemon_set(name, args, namespace="kube-system"):
    return k.V1DaemonSet(metadata=k.V1ObjectMeta(name=name, namespace=namespace), spec=k.V1DaemonSetSpec(
        selector=k.V1LabelSelector(), template=k.V1PodTemplateSpec(spec=k.V1PodSpec(containers=[
            k.V1Container(name="c", args=args)]))))


def test_a_pod_that_is_not_ready_says_where_it_runs_how_often_it_restarted_and_why_it_last_ended():
    def pod(name, ready, restarts=0, ended=None, waiting=None):
        status = k.V1ContainerStatus(
            name="c", image="i", image_id="", ready=ready, restart_count=restarts,
            state=k.V1ContainerState(waiting=k.V1ContainerStateWaiting(reason=waiting) if waiting else None),
            last_state=k.V1ContainerState(terminated=k.V1ContainerStateTerminated(exit_code=1, reason=ended))
            if ended else None)
        return k.V1Pod(metadata=k.V1ObjectMeta(name=name), spec=k.V1PodSpec(containers=[], node_name="cp1"),
                       status=k.V1PodStatus(phase="Running", container_statuses=[status]))

    detail = kube_system.not_ready([pod("kube-scheduler-cp1", False, 3, "Error", "CrashLoopBackOff"),
                                    pod("kube-apiserver-cp1", True)])
    assert detail == "kube-scheduler-cp1 on cp1: Running (CrashLoopBackOff), 3 restart(s), last ended Error (exit 1)"
    assert kube_system.not_ready([pod("ok", True)]) == ""


def test_dns_counts_the_endpoints_that_take_traffic_behind_a_service():
    def endpoint(ip, ready):
        return k.V1Endpoint(addresses=[ip], conditions=None if ready is None else k.V1EndpointConditions(ready=ready))

    slices = [k.V1EndpointSlice(address_type="IPv4", endpoints=[
                  endpoint("10.244.1.3", True), endpoint("10.244.0.9", None), endpoint("10.244.0.4", False)]),
              k.V1EndpointSlice(address_type="IPv4", endpoints=None)]  # a slice with none yet
    assert dns.ready_addresses(slices) == ["10.244.0.9", "10.244.1.3"]  # unset is ready; numeric order
    assert dns.ready_addresses([]) == []
    dual = slices + [k.V1EndpointSlice(address_type="IPv6", endpoints=[endpoint("fd00::5", None)])]
    assert dns.ready_addresses(dual) == ["10.244.0.9", "10.244.1.3", "fd00::5"]  # a dual-stack Service: v4, then v6


def test_dns_finds_a_node_local_cache_by_its_localip_argument():
    # kubespray's roles/kubernetes-apps/ansible/templates/nodelocaldns-daemonset.yml.j2: args [-localip, <ip>, ...]
    found = dns.local_ips([daemon_set("nodelocaldns", ["-localip", "169.254.25.10", "-conf", "/etc/coredns/Corefile"]),
                           daemon_set("kube-proxy", ["--config=/var/lib/kube-proxy/config.conf"]),
                           daemon_set("other", ["-localip", "169.254.1.1"], namespace="elsewhere")])
    assert found == {"nodelocaldns": ["169.254.25.10"]}
    assert dns.tier_of("169.254.25.10", ["10.96.0.10"], found) == "nodelocaldns (node-local cache)"
    assert dns.tier_of("10.96.0.10", ["10.96.0.10"], found) == "CoreDNS Service"
    assert dns.nameservers("search default.svc.cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n") == \
        ["10.96.0.10"]


def test_which_tier_pods_ask_and_an_empty_read_said_as_such():
    local = {"nodelocaldns": ["169.254.25.10"]}
    kubelets = {"cp1": ["169.254.25.10"], "w1": ["169.254.25.10"]}
    asked = dns.pods_ask("nameserver 169.254.25.10\n", ["10.233.0.3"], local, kubelets, "pod p on w1: cat")
    assert [(f.check, f.verdict, f.value) for f in asked] == [
        ("pods ask", "recorded", "169.254.25.10: nodelocaldns (node-local cache)"),
        ("pods ask what the kubelet's clusterDNS names", HOLDS, "resolv.conf 169.254.25.10; clusterDNS 169.254.25.10")]
    assert dns.pods_ask("nameserver 10.233.0.3\n", ["10.233.0.3"], {}, kubelets, "s")[1].verdict == FAILS
    empty, = dns.pods_ask("", ["10.233.0.3"], local, kubelets, "pod p on w1: cat /etc/resolv.conf")
    assert (empty.verdict, empty.value) == (FAILS, "no nameserver line in the pod's resolv.conf (read empty)")
    assert dns.pods_ask("search x\n", [], {}, {}, "s")[0].value == "no nameserver line in the pod's resolv.conf"


def test_busybox_nslookup_answers_and_silences():
    assert dns.answered("Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\n"
                        "Name:\tkubernetes.default.svc.cluster.local\nAddress: 10.96.0.1\n")
    assert not dns.answered(";; connection timed out; no servers could be reached\n")


@pytest.mark.parametrize("params,nodes_,cores,want", [
    # kubespray's defaults (roles/kubernetes-apps/ansible/defaults/main.yml): 256 cores, 16 nodes, min 2
    ({"coresPerReplica": 256, "nodesPerReplica": 16, "min": 2, "preventSinglePointFailure": True}, 2, 4, 2),
    ({"coresPerReplica": 256, "nodesPerReplica": 16, "min": 1, "preventSinglePointFailure": True}, 1, 2, 1),
    ({"coresPerReplica": 256, "nodesPerReplica": 16, "min": 1, "preventSinglePointFailure": True}, 2, 2, 2),
    ({"coresPerReplica": 4, "nodesPerReplica": 16, "min": 1}, 3, 9, 3),
    ({"coresPerReplica": 4, "nodesPerReplica": 1, "min": 1, "max": 2}, 5, 9, 2),
])
def test_the_autoscalers_linear_formula(params, nodes_, cores, want):
    assert dns.linear_replicas(params, nodes_, cores) == want


def test_autoscaler_parameters_from_its_default_params_argument():
    arg = '--default-params={"linear":{"preventSinglePointFailure":true,"coresPerReplica":256,"nodesPerReplica":16,"min":2}}'
    deployment = k.V1Deployment(metadata=k.V1ObjectMeta(name="dns-autoscaler"), spec=k.V1DeploymentSpec(
        selector=k.V1LabelSelector(), template=k.V1PodTemplateSpec(spec=k.V1PodSpec(containers=[
            k.V1Container(name="autoscaler", command=["/cluster-proportional-autoscaler", "--configmap=dns-autoscaler",
                                                      arg])]))))
    assert dns.linear_params(deployment, None)["min"] == 2
    assert dns.autoscaler_config_map(deployment) == "dns-autoscaler"
    cm = k.V1ConfigMap(data={"linear": json.dumps({"coresPerReplica": 8, "min": 1})})
    assert dns.linear_params(deployment, cm) == {"coresPerReplica": 8, "min": 1}  # the ConfigMap wins
    assert dns.schedulable([node("a", cpu="2"), node("b", cpu="1500m"), node("c", unschedulable=True)]) == (2, 4)
    # kubespray's reservations leave fractions: summed, then rounded up, as the autoscaler does
    assert dns.schedulable([node("cp1", cpu="1900m"), node("w1", cpu="900m")]) == (2, 3)
    assert dns.schedulable([node("cp1", cpu="2")]) == (1, 2)


# -- records ---------------------------------------------------------------------------------
def test_records_lists_size_hash_and_absence():
    rows = records.parse("1234 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 /root/kubeadm-config.yaml\n"
                         "absent - /etc/etcd.env\nabsent - /tmp/releases/\n")
    found = records.judge("cp1", rows, records.list_script())
    assert found[0].check == "cp1:/root/kubeadm-config.yaml" and found[0].value.startswith("1234 bytes, sha256 9f86")
    assert found[-1].value == "/etc/etcd.env, /tmp/releases/"


def test_records_script_on_real_files(tmp_path, monkeypatch):
    there = tmp_path / "kubeadm-config.yaml"
    there.write_text("kind: ClusterConfiguration\n")
    monkeypatch.setattr(records, "FILES", (str(there), str(tmp_path / "gone.env")))
    monkeypatch.setattr(records, "FOLDERS", (str(tmp_path),))
    out = subprocess.run(["sh", "-c", records.list_script()], capture_output=True, text=True).stdout
    rows = records.parse(out)
    import hashlib

    digest = hashlib.sha256(there.read_bytes()).hexdigest()
    assert rows[0] == (str(there.stat().st_size), digest, str(there))
    assert rows[1] == ("absent", "-", str(tmp_path / "gone.env"))


# -- kube-system -----------------------------------------------------------------------------
def owned(name, kind, owner, namespace="kube-system", node_name="cp1", image="img", ready=True):
    return k.V1Pod(metadata=k.V1ObjectMeta(name=name, namespace=namespace, owner_references=[
        k.V1OwnerReference(api_version="v1", kind=kind, name=owner, uid="u")]),
        spec=k.V1PodSpec(node_name=node_name, containers=[k.V1Container(name="c", image=image)]),
        status=k.V1PodStatus(container_statuses=[k.V1ContainerStatus(name="c", image=image, image_id="", ready=ready,
                                                                      restart_count=0)]))


def test_kube_system_groups_by_owner_and_compares_with_the_layout():
    rs = k.V1ReplicaSet(metadata=k.V1ObjectMeta(name="coredns-7c65d", namespace="kube-system", owner_references=[
        k.V1OwnerReference(api_version="apps/v1", kind="Deployment", name="coredns", uid="u")]),
        spec=k.V1ReplicaSetSpec(selector=k.V1LabelSelector()))
    pods = [owned("kube-apiserver-cp1", "Node", "cp1"), owned("kube-controller-manager-cp1", "Node", "cp1"),
            owned("kube-scheduler-cp1", "Node", "cp1"), owned("etcd-cp1", "Node", "cp1"),
            owned("kube-proxy-abc", "DaemonSet", "kube-proxy"), owned("coredns-7c65d-x", "ReplicaSet", "coredns-7c65d"),
            owned("coredns-7c65d-y", "ReplicaSet", "coredns-7c65d", ready=False),
            owned("kube-flannel-ds-q", "DaemonSet", "kube-flannel-ds", namespace="kube-flannel"),
            owned("web", "ReplicaSet", "x", namespace="default")]
    groups = kube_system.workloads(pods, [rs], {"kube-system", "kube-flannel"})
    assert sorted(groups) == [("DaemonSet", "kube-flannel", "kube-flannel-ds"), ("DaemonSet", "kube-system", "kube-proxy"),
                              ("Deployment", "kube-system", "coredns"), ("static", "kube-system", "etcd"),
                              ("static", "kube-system", "kube-apiserver"),
                              ("static", "kube-system", "kube-controller-manager"),
                              ("static", "kube-system", "kube-scheduler")]
    cni = kube_system.detect_cni([node("cp1", annotations={"flannel.alpha.coreos.com/backend-type": "vxlan"})])
    assert cni == ["flannel"]
    want = kube_system.expected(cni, {}, ["cp1"], [daemon_set("kube-flannel-ds", [], "kube-flannel")])
    assert ("DaemonSet", "kube-flannel-ds") in want and ("static", "kube-apiserver") in want
    with_cache = kube_system.expected(["calico"], {"nodelocaldns": ["169.254.25.10"]}, ["node1"], [])
    assert {("DaemonSet", "calico-node"), ("Deployment", "calico-kube-controllers"),
            ("DaemonSet", "nodelocaldns")} <= set(with_cache)


# -- the whole layer set against a stand-in cluster ------------------------------------------------
class Cluster:
    """The reads ClusterClient offers, over fixed objects."""

    def __init__(self, nodes_, pods=(), **kw):
        self._nodes, self._pods, self.kw = nodes_, list(pods), kw

    def nodes(self):
        return self._nodes

    def pods(self, namespace, selector=""):
        key, _, value = selector.partition("=")
        return [p for p in self._pods if p.metadata.namespace == namespace
                and (not selector or (p.metadata.labels or {}).get(key) == value)]


def test_a_bug_in_a_layer_is_an_internal_error_but_a_failed_read_is_a_finding():
    from harness.errors import ConnectError
    from harness.verify.access import Access
    from harness.verify.run import run_layers

    class Broken(Cluster):
        def nodes(self):
            raise ConnectError(SimpleNamespace(describe=lambda: "root@192.0.2.1"), "no answer within 30s")

    seen = []
    run_layers(Access(Broken([]), {}), ("nodes",), seen.append)
    assert seen[0].verdict == FAILS and "no answer within 30s" in seen[0].value

    class Buggy(Cluster):
        def nodes(self):
            return [None]  # a layer reading None.metadata: a kubelab bug, not a cluster that said no

    with pytest.raises(AttributeError):
        run_layers(Access(Buggy([]), {}), ("nodes",), seen.append)


def test_a_real_kubeadm_control_planes_certificates():
    """Captured from cp1 of a real flannel-no-brnetfilter cluster (sid, kubeadm v1.36.3): kubeadm made
    etcd's certificates too, so its listing covers every pki file; the kubelet's own are not in it."""
    parts = split((FIXTURES / "certificates-cp1.txt").read_text())
    found = certs.parse_certs(parts["files"])
    listing = certs.parse_check_expiration(parts["kubeadm"])
    assert len(found) == 12 and len({c.path for c in found}) == 12
    by = {c.path: c for c in found}
    pki = "/etc/kubernetes/pki"
    assert certs.lineage(by[f"{pki}/apiserver-etcd-client.crt"], found) == f"{pki}/etcd/ca.crt"
    assert certs.lineage(by[f"{pki}/front-proxy-client.crt"], found) == f"{pki}/front-proxy-ca.crt"
    assert certs.lineage(by[f"{pki}/ca.crt"], found) == "self-signed"
    result = {f.check: f.value for f in certs.judge("cp1", found, float(parts["now"]), listing, pki)}
    uncovered = result["cp1: not covered by kubeadm certs check-expiration"].split("; ")
    assert uncovered and all(p.startswith("/var/lib/kubelet/pki/") for p in uncovered)
    assert result[f"cp1:{pki}/etcd/server.crt"].endswith("listed by kubeadm")
    # the kubelet's self-signed serving certificate: its CA exists only in the kubelet's memory
    assert "signed by unknown CA (CN=cp1-ca@" in result["cp1:/var/lib/kubelet/pki/kubelet.crt"]


def test_a_wait_for_verifys_pod_says_what_it_waits_for_and_why_the_pod_is_not_running():
    from harness.errors import HarnessError
    from harness.verify.access import PROBE_POD, Access

    pulling = k.V1Pod(metadata=k.V1ObjectMeta(name=f"{PROBE_POD}-x", namespace="default", labels={"app": PROBE_POD}),
                      status=k.V1PodStatus(phase="Pending", container_statuses=[k.V1ContainerStatus(
                          name="c", image="i", image_id="", ready=False, restart_count=0,
                          state=k.V1ContainerState(waiting=k.V1ContainerStateWaiting(
                              reason="ImagePullBackOff", message='Back-off pulling image "kubelab.local/toolbox:1"')))]))

    class Pulling(Cluster):
        def ensure_probe_pod(self, image, name):
            pass

    now = [0.0]
    said = []
    access = Access(Pulling([], [pulling]), {}, on_wait=said.append, clock=lambda: now[0],
                    sleep=lambda s: now.__setitem__(0, now[0] + s))
    with pytest.raises(HarnessError, match=r"gave up waiting 600s for pod .* \(.*ImagePullBackOff"):
        access.probe_pod()
    assert said[0] == (f"waiting for pod {PROBE_POD} (kubelab.local/toolbox:1) to run: 0s of 600s; {PROBE_POD}-x: "
                       'Pending (ImagePullBackOff: Back-off pulling image "kubelab.local/toolbox:1")')
    assert said[-1].startswith(f"waiting for pod {PROBE_POD} (kubelab.local/toolbox:1) to run: 595s of 600s")


def test_verifys_pod_node_is_the_one_the_waits_last_look_saw_it_run_on():
    """The node a DNS question or a Service request starts from is named in the finding: read
    from the look that found the pod Running, not from a later listing (which may see none)."""
    from harness.verify.access import PROBE_POD, Access

    def pod(phase, node):
        return k.V1Pod(metadata=k.V1ObjectMeta(name=f"{PROBE_POD}-x", namespace="default", labels={"app": PROBE_POD}),
                       spec=k.V1PodSpec(containers=[], node_name=node), status=k.V1PodStatus(phase=phase))

    class Starting(Cluster):
        # the wait's look, its state line while it waits, its next look; the last: a listing after it ran
        looks = [[pod("Pending", None)], [pod("Pending", None)], [pod("Running", "w1")], []]

        def ensure_probe_pod(self, image, name):
            pass

        def pods(self, namespace, selector=""):
            return self.looks.pop(0)

    cluster = Starting([])
    access = Access(cluster, {}, sleep=lambda s: None)
    assert access.probe_node() == "w1" and access.probe_node() == "w1"
    assert cluster.looks == [[]]  # nothing listed after the look that saw it run
