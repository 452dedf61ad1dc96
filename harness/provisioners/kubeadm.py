"""The kubeadm install track, as plan steps (phase `install`).

    every machine   containerd's config for its containerd version, the host
                    preparation the scenario leaves to the track, a route for
                    the Service network, the kubelet's resolver file
    [faults armed before-init]
    control plane   kubeadm config -> `kubeadm init` (output kept verbatim; the
                    join hash is read from it) -> kubectl config -> admin.conf
    workers         join config -> `kubeadm join`
    [faults armed before-cni]
    control plane   the CNI: flannel's manifest (provisioners/flannel.py) or calico's
                    (cni/calico.py) -> kubectl apply (under TCG from the host: HostApply)

A scenario whose fault stops `kubeadm init` (ip_forward, swap) ends the track at
init, expected to fail; its recovery reinstalls: `kubeadm reset`, init, joins, CNI.

Values only known while running (the CA hash kubeadm prints) are written
@@name@@ in a step and captured from an earlier step's output by the engine;
dry-run shows them as they are.
"""

from __future__ import annotations

import os
import secrets
import shlex
import string
from dataclasses import dataclass
from pathlib import Path

from ..host_command import HOST, HostCommand
from ..model import InstallDef
from ..node import containerd_config
from ..remote.file_write import write_command
from ..remote.retried import retried
from ..serve import mirror
from ..tuning import Tuning
from . import flannel
from .kubeadm_config import PATCHES_DIR, ClusterSpec, init_config, join_config
from ..cni import routes_for
from .lab_network import LAB_NIC

CONFIG = "/root/kubeadm-config.yaml"
JOIN_CONFIG = "/root/kubeadm-join.yaml"
FLANNEL_MANIFEST = "/root/kube-flannel.yml"
CALICO_MANIFEST = "/root/calico.yaml"
RESOLV = "/etc/kubernetes/kubelab-resolv.conf"
ADMIN_CONF = "/etc/kubernetes/admin.conf"
KUBECTL = f"kubectl --kubeconfig {ADMIN_CONF}"
INIT_TIMEOUT = 1800.0
JOIN_TIMEOUT = 1200.0
CA_HASH_RE = r"--discovery-token-ca-cert-hash (sha256:[0-9a-f]{64})"
INIT_LOG = "/root/kubeadm-init.log"  # kept in the guest too, as a learner's `| tee` would, for checks to read
JOIN_LOG = "/root/kubeadm-join.log"


def teed(command: str, log: str) -> str:
    """Run through `tee` into the guest, keeping the command's own exit code, also in LOG.exit
    (where an expectation of a failing init reads it)."""
    return f"set -o pipefail; {command} 2>&1 | tee {log}; rc=$?; echo $rc > {log}.exit; exit $rc"


@dataclass(frozen=True)
class HostApply:
    """The CNI's manifest applied from the host, where the acceleration asks for it
    (Tuning.cni_apply_from_host): with the kit's kubectl and the admin.conf the run fetched,
    the manifest written in the run's folder. Under TCG a kubectl in the guest is a Go program
    started under emulation on the control plane that is still coming up: measured, `apply
    flannel` took 35 s there."""
    kubectl: Path
    kubeconfig: Path  # the run's private copy of the control plane's admin.conf
    folder: Path  # the run's install folder


@dataclass(frozen=True)
class InstallContext:
    roles: dict[str, str]  # machine -> role, in lab order
    ips: dict[str, str]  # machine -> address ("<ip of X>" in a dry-run before the lab exists)
    facts: dict[str, dict]  # machine -> facts (containerd version)
    gateway: str  # the lab network's host address: the kubelet's (unreachable) resolver
    pause_image: str
    flannel_image: str
    flannel_cni_image: str
    token: str
    tuning: Tuning  # what the lab's acceleration asks of the cluster (harness/tuning.py)
    cni_manifest: str = ""  # a CNI's manifest kubelab does not render (calico: upstream's, harness/cni/calico.py)
    host_apply: HostApply | None = None  # the CNI applied from the host, not the control plane

    @property
    def control_plane(self) -> str:
        return next(m for m, r in self.roles.items() if r == "control-plane")

    @property
    def workers(self) -> list[str]:
        return [m for m, r in self.roles.items() if r == "worker"]


def new_token() -> str:
    """A bootstrap token in kubeadm's format ([a-z0-9]{6}.[a-z0-9]{16})."""
    alphabet = string.ascii_lowercase + string.digits
    pick = lambda n: "".join(secrets.choice(alphabet) for _ in range(n))  # noqa: E731
    return f"{pick(6)}.{pick(16)}"


def cluster_spec(install: InstallDef, tuning: Tuning, init_stops: bool = False) -> ClusterSpec:
    """The acceleration's settings plus the scenario's own timeouts. init_stops: the config of
    an init the fault is meant to stop (its shortened timeouts)."""
    timeouts = dict(tuning.kubeadm_timeouts)
    if install.kubelet_health_check:
        timeouts["kubeletHealthCheck"] = install.kubelet_health_check
    if install.kubernetes_api_call and init_stops:
        timeouts["kubernetesAPICall"] = install.kubernetes_api_call
    return ClusterSpec(kubernetes=f"v{install.kubernetes}" if install.kubernetes_version_in_config else "",
                       pod_cidr=install.pod_cidr, service_cidr=install.service_cidr,
                       extra_kubelet={"resolvConf": RESOLV}, timeouts=timeouts,
                       kubelet_args=dict(tuning.kubelet_args), leader_election=dict(tuning.leader_election),
                       etcd_args=dict(tuning.etcd_args), encryption_algorithm=tuning.encryption_algorithm,
                       patches_dir=PATCHES_DIR if tuning.static_pod_patches else "")


def prepare_commands(install: InstallDef) -> list[str]:
    """The host preparation a course teaches, as far as the scenario leaves it to the track."""
    out = []
    if "br_netfilter" in install.prepare:
        out += ["modprobe br_netfilter && printf 'overlay\\nbr_netfilter\\n' > /etc/modules-load.d/k8s.conf",
                "sysctl -w net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1"]
    if "ip_forward" in install.prepare:
        out.append("sysctl -w net.ipv4.ip_forward=1")
    if install.prepare:
        lines = {"ip_forward": ["net.ipv4.ip_forward = 1"],
                 "br_netfilter": ["net.bridge.bridge-nf-call-iptables = 1", "net.bridge.bridge-nf-call-ip6tables = 1"]}
        text = "\\n".join(line for item in install.prepare for line in lines[item])
        out.append(f"printf '{text}\\n' > /etc/sysctl.d/99-kubernetes.conf")
    return out


def steps(install: InstallDef, ctx: InstallContext, make_step, fault_steps, init_may_fail: bool = False) -> list:
    """`make_step(machine, action, name, command, **kw)` builds a plan Step of phase install;
    `fault_steps(phase)` gives the steps of the faults armed at that point. With
    `init_may_fail` (a fault meant to stop init) the track ends at `kubeadm init`,
    whatever its exit code; the recovery's `reinstall_steps` take it from there."""
    spec = cluster_spec(install, ctx.tuning, init_stops=init_may_fail)
    cp = ctx.control_plane
    out = []
    for m in ctx.roles:
        version = ctx.facts.get(m, {}).get("containerd", "1")
        period = ctx.tuning.containerd_stats_period if containerd_config.has_stats_collector(version) else ""
        toml = containerd_config.config_toml(version, sandbox_image=ctx.pause_image, systemd_cgroup=True,
                                             stats_collect_period=period)
        out.append(make_step(m, "write", "containerd config", write_command(containerd_config.CONFIG), content=toml,
                             note=f"containerd {containerd_config.major(version)}.x config: SystemdCgroup = true, "
                                  f"sandbox {ctx.pause_image}"
                                  + (f"; CPU stats every {period} (TCG)" if period else "")))
        for unit, path, content in ctx.tuning.unit_dropins():
            out.append(make_step(m, "write", f"{unit} Go runtime settings", write_command(path), content=content))
        out.append(make_step(m, "run", "restart containerd", "systemctl daemon-reload && ""systemctl restart containerd && systemctl is-active containerd"))
        out += [make_step(m, "run", "host preparation", c) for c in prepare_commands(install)]
        out += [make_step(m, "run", name, c, note=note) for name, c, note in routes_for(install)]
        out.append(make_step(m, "write", "kubelet resolver", write_command(RESOLV), content=f"nameserver {ctx.gateway}\n",
                             note="the lab's host address: pods with dnsPolicy Default need a nameserver line; "
                                  "nothing answers there, which keeps the lab off the outside"))
    out += fault_steps("before-init")
    for name, text in ctx.tuning.static_pod_patches.items():
        out.append(make_step(cp, "write", "kubeadm patch", write_command(f"{PATCHES_DIR}/{name}"), content=text,
                             note=f"static pod probes under TCG: {name}"))
    out.append(make_step(cp, "write", "kubeadm config", write_command(CONFIG),
                         content=init_config(spec, cp, ctx.ips[cp], ctx.token),
                         note="v1beta4: advertise address and node-ip explicit, " +
                              ("longer timeouts for TCG" if ctx.tuning.is_tcg else "upstream's timeouts (KVM)")))
    if init_may_fail:  # admin.conf too, where init got as far as writing it: for cluster checks
        return out + [_init(make_step, cp, may_fail=True), _fetch_admin_conf(make_step, cp, may_fail=True)]
    return out + [_init(make_step, cp)] + _cluster_steps(install, ctx, make_step, fault_steps)


# What `kubeadm reset` leaves behind and says so ("The reset process does not perform cleanup
# of CNI plugin configuration, network filtering rules and kubeconfig files.",
# cmd/kubeadm/app/cmd/reset.go manualCleanupInstructions, v1.36.3): flannel's config, its
# subnet lease and its interfaces, which would keep the old ranges alive.
# calico's state and VXLAN device likewise (/var/lib/calico, /var/run/calico, vxlan.calico).
CNI_CLEANUP = ("rm -rf /etc/cni/net.d/* /var/lib/cni /run/flannel /var/lib/calico /var/run/calico; "
               "for link in cni0 flannel.1 vxlan.calico; do ip link delete $link 2>/dev/null || true; done")


def reinstall_steps(install: InstallDef, ctx: InstallContext, make_step, rebuild: bool = False,
                    new_ranges: bool = False) -> list:
    """After init failed as expected and the fault was fixed: `kubeadm reset`, then init,
    the joins and the CNI, as a learner would run them again. `rebuild`: the cluster
    was built, so every node is reset and its CNI state removed first. `new_ranges`:
    `install` carries other ranges, so the kubeadm config is written again and the new
    Service range gets its route (otherwise the config stays as the recovery left it)."""
    cp = ctx.control_plane
    out = []
    for m in ctx.roles if rebuild else [cp]:
        out.append(make_step(m, "run", "kubeadm reset", "kubeadm reset -f", timeout=300,
                             note="undo the install (certificates, manifests, etcd data)" if rebuild
                             else "undo the failed init (certificates, manifests, etcd data)"))
        if rebuild:
            out.append(make_step(m, "run", "remove CNI state", CNI_CLEANUP,
                                 note="kubeadm reset leaves the CNI's config, state and interfaces"))
    if new_ranges:
        out += [make_step(m, "run", name, c, note=f"{note} (Service range {install.service_cidr})")
                for m in ctx.roles for name, c, note in routes_for(install)]
    if new_ranges or install.kubernetes_api_call:
        again = ctx.tuning.kubeadm_timeouts.get("kubernetesAPICall", "kubeadm's default")
        note = f"pods {install.pod_cidr}, Services {install.service_cidr}" if new_ranges else \
            f"kubernetesAPICall {again} again (the stopped init had {install.kubernetes_api_call})"
        out.append(make_step(cp, "write", "kubeadm config", write_command(CONFIG),
                             content=init_config(cluster_spec(install, ctx.tuning), cp, ctx.ips[cp], ctx.token),
                             note=note))
    return out + [_init(make_step, cp)] + _cluster_steps(install, ctx, make_step, lambda when: [])


def _init(make_step, cp: str, may_fail: bool = False):
    if may_fail:  # nothing is read from it: the join never follows a failed init
        return make_step(cp, "run", "kubeadm init", teed(f"kubeadm init --config {CONFIG}", INIT_LOG),
                         timeout=INIT_TIMEOUT, may_fail=True,
                         note="expected to fail: the expectations read its output and exit code")
    return make_step(cp, "run", "kubeadm init", teed(f"kubeadm init --config {CONFIG}", INIT_LOG), timeout=INIT_TIMEOUT,
                     capture={"ca_hash": CA_HASH_RE})


def _fetch_admin_conf(make_step, cp: str, may_fail: bool = False):
    return make_step(cp, "fetch", "admin.conf", f"cat {ADMIN_CONF}", may_fail=may_fail,
                     note="kept private in the run folder, for the cluster probes")


def _cluster_steps(install: InstallDef, ctx: InstallContext, make_step, fault_steps) -> list:
    """After a successful init: kubectl's config, admin.conf, the joins, the CNI."""
    spec = cluster_spec(install, ctx.tuning)
    cp = ctx.control_plane
    out = [make_step(cp, "run", "kubectl config", "mkdir -p $HOME/.kube && cp /etc/kubernetes/admin.conf $HOME/.kube/config"),
           _fetch_admin_conf(make_step, cp)]
    for w in ctx.workers:
        out.append(make_step(w, "write", "kubeadm join config", write_command(JOIN_CONFIG),
                             content=join_config(spec, w, ctx.ips[w], f"{ctx.ips[cp]}:6443", ctx.token, "@@ca_hash@@"),
                             note="the CA hash as kubeadm init printed it"))
        out.append(make_step(w, "run", "kubeadm join", teed(f"kubeadm join --config {JOIN_CONFIG}", JOIN_LOG),
                             timeout=JOIN_TIMEOUT))
    out += fault_steps("before-cni")
    if install.cni == "flannel":
        out += _apply(make_step, ctx, "flannel", FLANNEL_MANIFEST,
                      flannel.manifest(install.pod_cidr, ctx.flannel_image, ctx.flannel_cni_image, LAB_NIC,
                                       ctx.tuning.flannel_iptables_resync or None),
                      f"flannel's objects, Network {install.pod_cidr}; --iface={LAB_NIC}: no default route"
                      + (f"; --iptables-resync={ctx.tuning.flannel_iptables_resync}: the acceleration"
                         if ctx.tuning.flannel_iptables_resync else ""))
    if install.cni == "calico":
        # calico's images are quay.io's; the node image mirrors only what every cluster pulls, so
        # the lab registry is named for quay.io here (containerd reads hosts.toml at each pull)
        out += [make_step(m, "write", "containerd mirror for quay.io", write_command(mirror.hosts_path("quay.io")),
                          content=mirror.hosts_toml("quay.io", mirror.LAB_REGISTRY), note="calico's images")
                for m in ctx.roles]
        # server-side: calico's CRDs are too large for the annotation a client-side apply writes
        # (calico's install docs use `kubectl create` for the same reason)
        out += _apply(make_step, ctx, "calico", CALICO_MANIFEST, ctx.cni_manifest,
                      f"upstream's calico-vxlan.yaml at the tag, CALICO_IPV4POOL_CIDR {install.pod_cidr}",
                      server_side=True)
    return out


def _apply(make_step, ctx: InstallContext, cni: str, guest_path: str, manifest: str, note: str,
           server_side: bool = False) -> list:
    """The CNI's manifest written, then applied: on the control plane, or from the host. The apply
    is retried for 5 minutes: right after init the API server may still restart (under TCG, or with
    a cgroup-driver mismatch on containerd 1.x, where the kubelet's restart at the end of init
    recreates every static pod), and a refused apply is not the scenario's point."""
    flags = "--server-side " if server_side else ""
    cp = ctx.control_plane
    h = ctx.host_apply
    if h is None:
        return [make_step(cp, "write", f"{cni} manifest", write_command(guest_path), content=manifest, note=note),
                make_step(cp, "run", f"apply {cni}", retried(f"{KUBECTL} apply {flags}-f {guest_path}"),
                          timeout=600)]
    # in the run's install folder, the kit's kubectl first on PATH: names relative to it
    name = Path(guest_path).name
    path = h.folder / name
    kubeconfig = os.path.relpath(h.kubeconfig, h.folder)
    # its discovery cache in the run's folder too, not the host's ~/.kube
    kubectl = f"kubectl --kubeconfig {shlex.quote(kubeconfig)} --cache-dir kubectl-cache"
    command = HostCommand(argv=("sh", "-c", retried(f"{kubectl} apply {flags}-f {shlex.quote(name)}")),
                          cwd=h.folder, path_prefix=str(h.kubectl.parent))
    return [make_step(HOST, "host-write", f"{cni} manifest", str(path), content=manifest, note=note),
            make_step(HOST, "host-run", f"apply {cni}", "", host=command, timeout=600,
                      note=f"from the host, with the kit's kubectl and {cp}'s admin.conf (the acceleration)")]
