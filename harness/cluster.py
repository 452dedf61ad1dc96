"""The cluster's API, from the host: the `kubernetes` client with the admin.conf the
install track fetched. The API server is reached at the control plane's address
on the lab network (the kubeconfig's own server); every call has a timeout.

Also the proof workloads the cluster probes use, created on first use and left
for the teardown: a toolbox pod (DNS from inside the cluster, the client for the
Service proof) and a 2-replica web Deployment behind a Service, spread over the
nodes, each pod answering with its own name. `kubelab-web` tolerates the
control-plane taint (so the proof spans every node); `kubelab-app` is a plain
Deployment that does not (what a learner's first workload is).
"""

from __future__ import annotations

from pathlib import Path

from . import signals
from .errors import HarnessError

REQUEST_TIMEOUT = 20
NAMESPACE = "default"
PROBE_POD = "kubelab-probe"
WEB = "kubelab-web"
PLAIN = "kubelab-app"


class ClusterError(HarnessError):
    pass


class ClusterClient:
    def __init__(self, kubeconfig: Path):
        from kubernetes import client, config

        try:
            self.api_client = config.new_client_from_config(config_file=str(kubeconfig))
        except Exception as exc:  # noqa: BLE001 - the client raises many kinds; all mean "unusable kubeconfig"
            raise ClusterError(f"{kubeconfig}: not a usable kubeconfig ({exc})") from None
        self.core = client.CoreV1Api(self.api_client)
        self.apps = client.AppsV1Api(self.api_client)
        self.client = client

    # -- reading ---------------------------------------------------------------
    def nodes(self):
        return self.core.list_node(_request_timeout=REQUEST_TIMEOUT).items

    def version(self) -> str:
        """The API server's own version (GET /version, gitVersion)."""
        return self.client.VersionApi(self.api_client).get_code(_request_timeout=REQUEST_TIMEOUT).git_version

    def pods(self, namespace: str, selector: str = ""):
        return self.core.list_namespaced_pod(namespace, label_selector=selector or None,
                                             _request_timeout=REQUEST_TIMEOUT).items

    def logs(self, namespace: str, pod: str, container: str | None, previous: bool, tail: int = 200) -> str:
        return self.core.read_namespaced_pod_log(pod, namespace, container=container, previous=previous,
                                                 tail_lines=tail, _request_timeout=REQUEST_TIMEOUT)

    def events(self, namespace: str):
        return self.core.list_namespaced_event(namespace, _request_timeout=REQUEST_TIMEOUT).items

    def all_pods(self):
        return self.core.list_pod_for_all_namespaces(_request_timeout=REQUEST_TIMEOUT).items

    def services(self, namespace: str, selector: str = ""):
        return self.core.list_namespaced_service(namespace, label_selector=selector or None,
                                                 _request_timeout=REQUEST_TIMEOUT).items

    def daemon_sets(self):
        return self.apps.list_daemon_set_for_all_namespaces(_request_timeout=REQUEST_TIMEOUT).items

    def deployments(self):
        return self.apps.list_deployment_for_all_namespaces(_request_timeout=REQUEST_TIMEOUT).items

    def replica_sets(self):
        return self.apps.list_replica_set_for_all_namespaces(_request_timeout=REQUEST_TIMEOUT).items

    def endpoint_slices(self, namespace: str, service: str):
        """The Service's EndpointSlices (discovery.k8s.io/v1, labelled kubernetes.io/service-name)."""
        return self.client.DiscoveryV1Api(self.api_client).list_namespaced_endpoint_slice(
            namespace, label_selector=f"kubernetes.io/service-name={service}", _request_timeout=REQUEST_TIMEOUT).items

    def config_map(self, namespace: str, name: str):
        """The ConfigMap, or None where there is none."""
        try:
            return self.core.read_namespaced_config_map(name, namespace, _request_timeout=REQUEST_TIMEOUT)
        except self.client.exceptions.ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def kubelet_config(self, node: str) -> dict:
        """The running kubelet's configuration, as it reports it (`/configz` through the API
        server's node proxy): the same for any installer, whatever file it was read from."""
        import json

        response = self.core.connect_get_node_proxy_with_path(node, "configz", _preload_content=False,
                                                              _request_timeout=REQUEST_TIMEOUT)
        return json.loads(response.data).get("kubeletconfig", {})

    def exec(self, namespace: str, pod: str, argv: list[str], timeout: int = 30) -> str:
        from kubernetes.stream import stream

        try:
            return stream(self.core.connect_get_namespaced_pod_exec, pod, namespace, command=argv,
                          stderr=True, stdin=False, stdout=True, tty=False, _request_timeout=timeout)
        except self.client.exceptions.ApiException:
            signals.raise_if_stopped()  # ws_client turns a KeyboardInterrupt into ApiException(status=0)
            raise

    # -- proof workloads ------------------------------------------------------
    def ensure_probe_pod(self, image: str, name: str = PROBE_POD) -> None:
        c = self.client
        try:
            self.core.read_namespaced_pod(name, NAMESPACE, _request_timeout=REQUEST_TIMEOUT)
            return
        except c.exceptions.ApiException as exc:
            if exc.status != 404:
                raise
        pod = c.V1Pod(
            metadata=c.V1ObjectMeta(name=name, labels={"app": name}),
            spec=c.V1PodSpec(
                containers=[c.V1Container(name="toolbox", image=image, command=["sleep", "86400"])],
                tolerations=[c.V1Toleration(operator="Exists", effect="NoSchedule")],
                termination_grace_period_seconds=0))
        self.core.create_namespaced_pod(NAMESPACE, pod, _request_timeout=REQUEST_TIMEOUT)

    def ensure_web(self, image: str, name: str = WEB, replicas: int = 2, tolerate: bool | None = None) -> None:
        """`tolerate` the control-plane taint (default: only kubelab-web does)."""
        c = self.client
        labels = {"app": name}
        tolerate = name == WEB if tolerate is None else tolerate
        tolerations = [c.V1Toleration(operator="Exists", effect="NoSchedule")] if tolerate else None
        try:
            self.apps.read_namespaced_deployment(name, NAMESPACE, _request_timeout=REQUEST_TIMEOUT)
        except c.exceptions.ApiException as exc:
            if exc.status != 404:
                raise
            spread = c.V1TopologySpreadConstraint(max_skew=1, topology_key="kubernetes.io/hostname",
                                                  when_unsatisfiable="DoNotSchedule",
                                                  label_selector=c.V1LabelSelector(match_labels=labels))
            container = c.V1Container(name="web", image=image, command=[
                "sh", "-c", "hostname > /www/index.html && exec httpd -f -p 8080 -h /www"])
            deployment = c.V1Deployment(
                metadata=c.V1ObjectMeta(name=name, labels=labels),
                spec=c.V1DeploymentSpec(
                    replicas=replicas, selector=c.V1LabelSelector(match_labels=labels),
                    template=c.V1PodTemplateSpec(
                        metadata=c.V1ObjectMeta(labels=labels),
                        spec=c.V1PodSpec(containers=[container], topology_spread_constraints=[spread],
                                         tolerations=tolerations, termination_grace_period_seconds=0))))
            self.apps.create_namespaced_deployment(NAMESPACE, deployment, _request_timeout=REQUEST_TIMEOUT)
        try:
            self.core.read_namespaced_service(name, NAMESPACE, _request_timeout=REQUEST_TIMEOUT)
        except c.exceptions.ApiException as exc:
            if exc.status != 404:
                raise
            service = c.V1Service(metadata=c.V1ObjectMeta(name=name), spec=c.V1ServiceSpec(
                selector=labels, ports=[c.V1ServicePort(port=80, target_port=8080)]))
            self.core.create_namespaced_service(NAMESPACE, service, _request_timeout=REQUEST_TIMEOUT)

    def delete_proof(self, names: list[str]) -> list[str]:
        """Remove proof objects by name (Deployments, Services, Pods in the default namespace);
        what was deleted, in order. Absent ones are not an error: a cleanup runs whatever happened."""
        c, gone = self.client, []
        for kind, delete in (("Deployment", self.apps.delete_namespaced_deployment),
                             ("Service", self.core.delete_namespaced_service),
                             ("Pod", self.core.delete_namespaced_pod)):
            for name in names:
                try:
                    delete(name, NAMESPACE, grace_period_seconds=0, propagation_policy="Background",
                           _request_timeout=REQUEST_TIMEOUT)
                    gone.append(f"{kind}/{name}")
                except c.exceptions.ApiException as exc:
                    if exc.status != 404:
                        raise
        return gone
