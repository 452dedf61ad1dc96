"""What verify reads through: the cluster's API and a shell on each node.

Nodes are matched to SSH targets by address (a node's InternalIP is the host
SSH reaches), so the same code serves a kubelab lab and a cluster kubelab did
not make. Every shell command a layer runs is reported to `on_read` with its
verbatim output, so the record shows what was read and from where.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import ConnectError, HarnessError, UsageError
from ..remote.result import CommandResult

TOOLBOX = "kubelab.local/toolbox:1"
PROBE_POD = "kubelab-verify-probe"
WEB = "kubelab-verify-web"
CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
POD_WAIT = 600.0  # seconds: a pod's image pull and start under TCG


class Unreachable(HarnessError):
    """The cluster or a node cannot be reached: nothing about it can be verified (exit 2)."""


@dataclass
class Access:
    cluster: object  # harness.cluster.ClusterClient (or a stand-in with the same reads)
    remotes: dict[str, object]  # node name -> remote (run(command, timeout) -> CommandResult)
    image: str = TOOLBOX
    on_read: Callable[[str, CommandResult], None] = lambda node, result: None
    # while a wait goes on: what is awaited, for how long so far, and the pods' own state
    # (measured: a probe pod's image pull under TCG kept verify silent for about 5 min)
    on_wait: Callable[[str], None] = lambda text: None
    layer: str = ""
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    _nodes: list | None = field(default=None, repr=False)
    _probe_node: str | None = field(default=None, repr=False)  # set once verify's pod runs

    # -- the cluster -----------------------------------------------------------
    def nodes(self) -> list:
        if self._nodes is None:
            self._nodes = sorted(self.cluster.nodes(), key=lambda n: n.metadata.name)
        return self._nodes

    def control_planes(self) -> list[str]:
        """Nodes labelled control-plane that a shell reaches (kubeadm and kubespray both label them)."""
        return [n.metadata.name for n in self.nodes()
                if CONTROL_PLANE_LABEL in (n.metadata.labels or {}) and n.metadata.name in self.remotes]

    # -- the nodes ---------------------------------------------------------------
    def shell(self, node: str, command: str, timeout: float = 120.0) -> CommandResult:
        result = self.remotes[node].run(command, timeout=timeout)
        self.on_read(node, result)
        return result

    # -- a pod to ask from (DNS, the Service proof) ------------------------------
    def probe_pod(self) -> str:
        """verify's own toolbox pod, Running: its name. Removed by `cleanup()`."""
        from ..cluster import NAMESPACE

        if self._probe_node is None:
            self.cluster.ensure_probe_pod(self.image, PROBE_POD)

            running: list = []  # filled by the wait's last look

            def runs() -> bool:
                running[:] = [p for p in self.cluster.pods(NAMESPACE, f"app={PROBE_POD}") if p.status.phase == "Running"]
                return bool(running)

            self.wait(runs, f"pod {PROBE_POD} ({self.image}) to run", state=lambda: self.pod_states(f"app={PROBE_POD}"))
            self._probe_node = ",".join(sorted({p.spec.node_name for p in running if p.spec.node_name})) or "unknown"
        return PROBE_POD

    def probe_node(self) -> str:
        """The node verify's pod runs on: where its DNS questions and Service requests start."""
        self.probe_pod()
        return self._probe_node

    def prestart(self, layers) -> None:
        """verify's pods, asked for before the layers that use them, so that they start (a
        minute or more under TCG) while the earlier layers read. A failure here is left to the
        layer that needs the pod, which asks again and says why."""
        from ..probes.cluster import not_answering

        try:
            if {"dns", "workload"} & set(layers):
                self.cluster.ensure_probe_pod(self.image, PROBE_POD)
            if "workload" in layers:
                self.cluster.ensure_web(self.image, WEB, replicas=2, tolerate=True)
        except not_answering():
            pass

    def in_pod(self, argv: list[str], timeout: int = 60) -> str:
        from ..cluster import NAMESPACE

        return self.cluster.exec(NAMESPACE, self.probe_pod(), argv, timeout=timeout)

    def wait(self, condition: Callable[[], bool], what: str, timeout: float = POD_WAIT, interval: float = 5.0,
             state: Callable[[], str] | None = None) -> None:
        start = self.clock()
        deadline = start + timeout
        while not condition():
            said = state() if state else ""
            if self.clock() >= deadline:
                raise HarnessError(f"verify: gave up waiting {timeout:g}s for {what}" + (f" ({said})" if said else ""))
            self.on_wait(f"waiting for {what}: {self.clock() - start:.0f}s of {timeout:g}s"
                         + (f"; {said}" if said else ""))
            self.sleep(interval)

    def pod_states(self, selector: str) -> str:
        """`kubelab-verify-probe-x: Pending (ErrImagePull: ...)`, one per pod verify made."""
        from ..cluster import NAMESPACE

        return "; ".join(f"{p.metadata.name}: {pod_state(p)}" for p in self.cluster.pods(NAMESPACE, selector)) \
            or "no pod yet"

    def cleanup(self) -> list[str]:
        return self.cluster.delete_proof([WEB, PROBE_POD])


def pod_state(pod) -> str:
    """The phase, and why a container waits (ContainerCreating, ImagePullBackOff and its message)."""
    phase = (pod.status.phase if pod.status else None) or "Unknown"
    for c in (pod.status.container_statuses or []) if pod.status else []:
        waiting = c.state.waiting if c.state else None
        if waiting and waiting.reason:
            return f"{phase} ({waiting.reason}" + (f": {waiting.message[:160]})" if waiting.message else ")")
    return phase


def node_addresses(nodes) -> dict[str, str]:
    """InternalIP -> node name."""
    out = {}
    for n in nodes:
        for a in n.status.addresses or []:
            if a.type == "InternalIP":
                out[a.address] = n.metadata.name
    return out


def match_nodes(nodes, remotes_by_host: dict[str, object]) -> tuple[dict[str, object], list[str]]:
    """(node name -> remote, problems): every SSH target must be a node of this cluster."""
    by_ip = node_addresses(nodes)
    matched, problems = {}, []
    for host, remote in remotes_by_host.items():
        if host in by_ip:
            matched[by_ip[host]] = remote
        else:
            known = ", ".join(f"{name} ({ip})" for ip, name in sorted(by_ip.items())) or "none"
            problems.append(f"SSH target {host} is no node of this cluster (its nodes' InternalIPs: {known})")
    return matched, problems


def reach(cluster, remotes_by_host: dict[str, object]) -> tuple[list, dict[str, object]]:
    """The cluster's nodes and the remotes matched to them, or Unreachable naming which and why."""
    from ..probes.cluster import not_answering

    try:
        nodes = cluster.nodes()
    except not_answering() as exc:  # a bug in kubelab is not an unreachable cluster: it propagates
        said = str(exc).splitlines()[0] if str(exc) else ""
        raise Unreachable(f"the cluster's API does not answer: {type(exc).__name__}: {said[:300]}") from None
    for host, remote in remotes_by_host.items():
        try:
            result = remote.run("true", timeout=60)
        except ConnectError as exc:
            raise Unreachable(f"node {host}: {exc}") from None
        if not result.ok:
            raise Unreachable(f"node {host}: `true` exited {result.exit_code}")
    matched, problems = match_nodes(nodes, remotes_by_host)
    if problems:
        raise Unreachable("; ".join(problems))
    return nodes, matched


# -- where the access comes from ----------------------------------------------------
def lab_remotes(lab) -> dict[str, object]:
    """A kubelab lab's machines by address, with the lab's pinned host keys."""
    from ..remote.ssh import SshRemote

    out = {}
    for m in lab.state["machines"]:
        if m.get("ip"):
            out[m["ip"]] = SshRemote(lab.ssh_target(m["name"]))
    return out


def fetch_admin_conf(lab, remotes_by_host: dict[str, object], dest: Callable[[str], Path]) -> Path:
    """/etc/kubernetes/admin.conf from a control-plane machine (kubeadm and kubespray both
    write it there), kept where `dest` says (the run's private folder)."""
    roles = {m.get("ip"): m["role"] for m in lab.state["machines"]}
    ordered = sorted(remotes_by_host, key=lambda h: roles.get(h) != "control-plane")
    tried = []
    for host in ordered:
        try:
            result = remotes_by_host[host].run("cat /etc/kubernetes/admin.conf", timeout=60)
        except ConnectError as exc:
            raise Unreachable(f"lab `{lab.name}`: {exc}") from None
        if result.ok and "clusters:" in result.stdout:
            return dest(result.stdout)
        tried.append(f"{host}: exit {result.exit_code}" if not result.ok else
                     f"{host}: exit 0 but {len(result.stdout)} bytes with no clusters: key")
    raise Unreachable(f"lab `{lab.name}` has no /etc/kubernetes/admin.conf on any machine ({'; '.join(tried)}): "
                      "no cluster was installed there, or it was reset")


def parse_ssh_targets(text: str) -> list[tuple[str, str, int]]:
    """`root@10.0.0.5,root@10.0.0.6:2222` -> [(user, host, port)]."""
    out = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        user, _, hostport = item.rpartition("@")
        host, _, port = hostport.partition(":")
        if not user or not host or (port and not port.isdigit()):
            raise UsageError(f"--ssh: `{item}` is not USER@HOST[:PORT]; e.g. --ssh root@10.0.0.5,root@10.0.0.6")
        out.append((user, host, int(port or 22)))
    if not out:
        raise UsageError("--ssh: no target given; e.g. --ssh root@10.0.0.5,root@10.0.0.6")
    return out


def pinned_key(known_hosts: Path, host: str, port: int) -> str:
    """The host key `known_hosts` holds for host:port, as `type base64`: never trust on first use."""
    import paramiko

    try:
        keys = paramiko.HostKeys(str(known_hosts))
    except (OSError, paramiko.SSHException) as exc:
        raise UsageError(f"--known-hosts {known_hosts}: cannot read it ({exc})") from None
    name = host if port == 22 else f"[{host}]:{port}"
    found = keys.lookup(name)
    if not found:
        raise UsageError(f"--known-hosts {known_hosts} has no key for {name}: add the node's host key, "
                         "read over a path you trust (kubelab never trusts a key on first use)")
    kind = "ssh-ed25519" if "ssh-ed25519" in found else sorted(found.keys())[0]
    return f"{kind} {found[kind].get_base64()}"


def ssh_remotes(targets: str, identity: Path, known_hosts: Path | None) -> dict[str, object]:
    """Remotes for `--ssh`, each host key pinned from `--known-hosts`."""
    from ..remote.ssh import SshRemote, SshTarget

    if known_hosts is None:
        raise UsageError("--ssh needs --known-hosts FILE: the nodes' host keys, so nothing is trusted on first use")
    if not Path(known_hosts).is_file():
        raise UsageError(f"--known-hosts {known_hosts}: no such file")
    if not Path(identity).is_file():
        raise UsageError(f"--identity {identity}: no such file (the private key the nodes accept)")
    out = {}
    for user, host, port in parse_ssh_targets(targets):
        out[host] = SshRemote(SshTarget(name=host, host=host, port=port, user=user, key_path=Path(identity),
                                        host_key=pinned_key(Path(known_hosts), host, port)))
    return out
