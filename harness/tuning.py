"""What kubelab changes for the acceleration a lab runs under: decided here and nowhere else.

Under QEMU's TCG every guest instruction goes through a software translator, and a
kubeadm control plane made for real machines restarts itself into a slower one:
upstream's timeouts, probes, leases and raft timing all assume hardware. Each setting
of the TCG profile below was measured to be needed on a 2-core TCG host (the reason is
next to its value). Under KVM none of them applies: the guests boot as the image says
and the cluster runs with upstream's defaults, so the timing facts a course quotes
(time to Ready, the CrashLoopBackOff wait) are a real machine's, and etcd syncs its WAL.

The profile follows the *measured* acceleration (machines/accel.py). `KUBELAB_ACCEL`
forces the libvirt domain type, not the timings: a host whose KVM probe failed keeps
the TCG profile under `KUBELAB_ACCEL=kvm`, and a guest whose domain type is `qemu` is
emulated whatever the probe found, so it gets the TCG profile too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

import yaml

TCG, KVM = "tcg", "kvm"

# -- the TCG profile's values, each with the measurement behind it ---------------------

# Guest kernel arguments. Under TCG the guest kernel finds its TSCs "unsynchronized" and
# falls back to the HPET: every clock read is then a system call plus an emulated MMIO
# access, and Go programs (which read the clock constantly) slow to a crawl; measured: a
# kube-apiserver that did not become ready in 4 minutes. QEMU derives every vCPU's TSC
# from one virtual clock, so they are in step: the kernel is told so. sid's kernel (7.2)
# also starts DAMON's access monitor by default (CONFIG_DAMON_STAT_ENABLED_DEFAULT); under
# TCG its kdamond thread took a fifth of a vCPU on a control plane. Kernels without it
# ignore the parameter.
TCG_KERNEL_ARGS = ("clocksource=tsc", "tsc=reliable", "damon_stat.enabled=N")

# QEMU's translation cache. 128 MiB keeps a host-preparation guest near 0.5 GB of host
# memory. A Kubernetes node runs several 70-100 MB Go programs at once: with 128 MiB the
# cache filled and was flushed 183 times during one `kubeadm init` (QEMU `info jit`),
# every flush retranslating all code, and the API server never became ready; with
# 1024 MiB: 3 flushes, ready in about 4 minutes, but a running control plane still filled
# it 6 times in 18 minutes, so Kubernetes guests get 2048 MiB, the most QEMU takes on an
# x86_64 host. The cache is touched as code is generated: the larger one costs memory
# only when used.
TB_CACHE_MIB = 128
TB_CACHE_KUBERNETES_MIB = 2048

# Host CPU shares (cgroup cpu.shares of the domain) per role, set once every machine of a
# lab answers SSH (while booting all are equal: measured, a worker at a quarter of the
# control plane's share took over 300 s to boot beside it). Under TCG every guest is
# CPU-bound and a two-node cluster has more vCPUs than the host has cores; the control
# plane is on every path (a worker waits for the API server, never the reverse), so under
# contention it gets four times a worker's share.
CPU_SHARES = {"control-plane": 2048, "worker": 512}
DEFAULT_CPU_SHARES = 1024

# kubeadm's timeouts (InitConfiguration/JoinConfiguration `timeouts`). Under TCG the API
# server needs minutes, and kubeadm 1.36 creates the admin ClusterRoleBinding before it
# waits for the control plane, within `kubernetesAPICall` (1m default;
# cmd/kubeadm/app/phases/kubeconfig/kubeconfig.go @ v1.36.3): measured in a sid guest,
# init failed after 65 s with the default and succeeded with 10m.
# `controlPlaneComponentHealthCheck` also sets the static pods' startup probe (ceil(T/10s)
# failures; cmd/kubeadm/app/util/staticpod/utils.go), so it is raised with it.
TCG_TIMEOUTS = {"kubernetesAPICall": "10m0s", "controlPlaneComponentHealthCheck": "10m0s",
                "kubeletHealthCheck": "4m0s", "tlsBootstrap": "10m0s", "discovery": "10m0s"}
# kube-controller-manager and kube-scheduler must renew their Lease within 10 s
# (--leader-elect-renew-deadline; lease 15 s, retry 2 s). Measured in a two-node TCG lab,
# the controller-manager missed the deadline, logged "stopped leading" and exited, again
# and again, so flannel's DaemonSet never got a pod. Lengthened, not switched off: the
# controllers still behave as upstream's.
TCG_LEADER_ELECTION = {"leader-elect-lease-duration": "60s", "leader-elect-renew-deadline": "45s",
                       "leader-elect-retry-period": "5s"}
# etcd's raft loop must beat every 100 ms, and a missed 1 s election timeout makes even a
# single member doubt its leadership ("Failed to check current member's leadership",
# "etcdserver: request timed out", seen in a two-node TCG lab): etcd's tuning guide's
# intervals for slow machines, 500 ms and 5 s. With guest flushes honoured its WAL fsync
# averaged 245 ms, and the API server's hard-coded one-minute
# `start-service-ip-repair-controllers` hook timed out and killed it: no fsync (unsafe on
# a real machine; a lab's disk is thrown away).
TCG_ETCD = {"heartbeat-interval": "500", "election-timeout": "5000", "unsafe-no-fsync": "true"}
# ClusterConfiguration.encryptionAlgorithm (kubeadm's default is RSA-2048): every TLS
# handshake signs with the server's key, and under TCG the RSA signatures of probes and
# clients were a steady load on the API server.
TCG_KEYS = "ECDSA-P256"
# Static pod probes. 15 minutes of failed checks before a restart: measured, a 200 s
# allowance (10 s x 20) let the kubelet kill a loaded API server whose /livez answered 500
# (the etcd check, slow under TCG) a few minutes after init, and the restart cost another
# 2.5 min of startup while the controllers lost their leases; a restarted control plane
# is always slower than a slow one. The API server's and the scheduler's readiness probes
# run every second (an HTTPS request each time): every 10 s instead. Measured on an idle
# kubeadm control plane here, one minute each way: the scheduler used 6.1 s of CPU with the
# 1 s probe, 2.5 s with 10 s.
TCG_LIVENESS = {"periodSeconds": 30, "timeoutSeconds": 30, "failureThreshold": 30}
TCG_STARTUP = {"periodSeconds": 10, "timeoutSeconds": 30, "failureThreshold": 90}  # 15 min to start
TCG_READINESS_PERIOD = 10
# CoreDNS's readiness probe answers within 1 s by default: a loaded guest fails it, and a
# CoreDNS that is never Ready has no endpoints, so DNS is refused while CoreDNS runs.
TCG_PROBE_TIMEOUT = 10  # seconds a CoreDNS readiness answer may take
# The control-plane pods, containerd and the kubelet: profiles showed 25-30% of their CPU
# in futex wake-ups, scheduler spinning and async preemption.
TCG_GO_ENV = {"GOMAXPROCS": "1", "GODEBUG": "asyncpreemptoff=1"}
GO_ENV_UNITS = ("containerd", "kubelet")  # the host units given TCG_GO_ENV (systemd drop-ins)
# containerd's runc shims see GODEBUG but not GOMAXPROCS: the shim starts its long-lived self with
# GOMAXPROCS=4 appended to the environment it inherited, and the last value wins
# (cmd/containerd-shim-runc-v2/manager/manager_linux.go, containerd v2.0.5 to v2.4.2; read in a
# kubespray guest's /proc/<shim>/environ: GODEBUG=asyncpreemptoff=1 GOMAXPROCS=4). containerd
# has no setting for a shim's environment.
# calico-node's probes (calico manifests/calico-vxlan.yaml and kubespray's calico-node.yml.j2,
# v3.31.7 / v2.31.0-96-g46dbdd399: liveness after 10 s, every 10 s, 6 failures; each probe 10 s).
# Measured on a 1+1 kubespray cluster here: `calico-node -startup` alone took about 60 s before
# runit started felix, so the liveness probe (connection refused, 6 x 10 s) killed every start
# before felix listened, and the probes' exec timed out at 10 s ("command timed out"). Under TCG
# the liveness probe gets the control plane's TCG_LIVENESS and both probes a 30 s timeout.
# Every calico probe is an exec of a Go binary (runc exec, then calico-node -felix-ready/-live, or
# kube-controllers' check-status -r/-l): measured on kubeadm-calico's loaded control plane under
# TCG, one `calico-node -felix-ready` 7.6 s and one `check-status -r` 35 s, four of them every 10 s
# (load average 12-22 on 2 vCPUs); kube-controllers' readiness timeout is 1 s, so it was never
# Ready, and calico-node's own start (2 s API timeouts, node/pkg/lifecycle/startup/startup.go)
# kept failing on w1. Under TCG, in the kubeadm track's manifest, each calico probe runs every 30 s
# with 30 s to answer. kubespray's templates take only calico-node's two timeouts as variables
# (kubespray/tcg.py); its kube-controllers' probes are patched after the play (tcg.after_play).
TCG_CALICO_PROBE_TIMEOUT = 30
TCG_CALICO_READINESS = {"periodSeconds": 30, "timeoutSeconds": TCG_CALICO_PROBE_TIMEOUT}
# calico-node's two commands do nothing but GET felix's health endpoint under VXLAN, kubelab's only
# calico backend (no BIRD is built): `-felix-live` http://localhost:9099/liveness, `-felix-ready`
# /readiness, 200-399 healthy (node/pkg/health/health.go, v3.31.7; FELIX_HEALTHHOST localhost in
# calico-vxlan.yaml's defaults and kubespray's calico_healthhost, port 9099 by default). Measured
# on a kubespray 1+1 control plane (benchmarks/probe_cost.py): one exec probe took 2.2 s of guest
# CPU (12-18 s wall), runc's part 0.6 s; a curl of the endpoint 0.3 s. Under TCG the kubelet asks
# the endpoint itself, so no runc and no calico-node binary start on every probe; `exec: None`
# removes upstream's command (in a strategic patch, null deletes).
TCG_CALICO_NODE_HTTP = {"livenessProbe": "/liveness", "readinessProbe": "/readiness"}
FELIX_HEALTH = {"host": "localhost", "port": 9099}


def _calico_probes(container: str) -> dict:
    probes = {"livenessProbe": {**TCG_LIVENESS, "timeoutSeconds": TCG_CALICO_PROBE_TIMEOUT},
              "readinessProbe": dict(TCG_CALICO_READINESS)}
    if container == "calico-node":
        for probe, path in TCG_CALICO_NODE_HTTP.items():
            probes[probe].update({"exec": None, "httpGet": {**FELIX_HEALTH, "path": path}})
    return probes


# container -> probe -> what replaces upstream's values (the kubeadm track's manifest)
TCG_CALICO_PROBES = {c: _calico_probes(c) for c in ("calico-node", "calico-kube-controllers")}
# cAdvisor's housekeeping every 30 s instead of 10.
TCG_KUBELET_ARGS = {"housekeeping-interval": "30s"}
# containerd 2.3 and later read every container's CPU through its shim once a second, whether or
# not the kubelet asks (it does only with PodAndContainerStatsFromCRI): a ttrpc call and a cgroup
# read per container per second, each shim woken for it (node/containerd_config.py). Under TCG,
# as seldom as the kubelet's housekeeping above; containerd keeps at least two samples.
# Measured on an idle 1+1 kubeadm cluster's control plane (containerd 2.4.2, 10 shims), a
# minute each: 30 s, containerd 3.1-3.4 s of CPU and the shims 1.8-2.2 s together; 1 s,
# 6.9 s and 13.1 s, one shim woken 94 times a second instead of 14-18.
TCG_CONTAINERD_STATS_PERIOD = "30s"
# flanneld re-checks its iptables rules every `--iptables-resync` seconds (main.go v0.28.4, default
# 5): each check runs iptables several times, and under TCG each run of iptables is a short-lived
# process that costs the guest far more than on hardware. Measured on a quiet 1+1 kubeadm cluster,
# one minute each way: with 60 s the two guests took 1.18 of the host's 2 cores (1.33 with 5 s),
# the worker 0.26 (0.38), and no short-lived processes were left in the worker's window (46% of
# its busy time before). A rule removed by hand comes back within a minute instead of 5 s.
TCG_FLANNEL_IPTABLES_RESYNC = 60
# The kubeadm track's CNI manifest is applied from the host (the kit's kubectl, the run's copy of
# admin.conf), not by a kubectl on the control plane: measured in a book here, `apply flannel` on a
# one-node control plane took 35 s, a Go program started under emulation while the control plane
# it talks to is still settling. The course's command is the same; only where it runs differs.
TCG_CNI_APPLY_FROM_HOST = True


def tcg_patches() -> dict[str, str]:
    """kubeadm patch files (target+strategic.yaml) for the static pods and CoreDNS under TCG."""
    def patch(container: str, readiness_period: int | None = None) -> str:
        probes = {"livenessProbe": dict(TCG_LIVENESS), "startupProbe": dict(TCG_STARTUP),
                  "env": [{"name": k, "value": v} for k, v in TCG_GO_ENV.items()]}
        if readiness_period:
            probes["readinessProbe"] = {"periodSeconds": readiness_period}
        return yaml.safe_dump({"spec": {"containers": [{"name": container, **probes}]}}, sort_keys=False)

    coredns = {"name": "coredns", "readinessProbe": {"timeoutSeconds": TCG_PROBE_TIMEOUT},
               "livenessProbe": dict(TCG_LIVENESS),
               "env": [{"name": k, "value": v} for k, v in TCG_GO_ENV.items()]}
    return {
        "kube-apiserver+strategic.yaml": patch("kube-apiserver", readiness_period=TCG_READINESS_PERIOD),
        "etcd+strategic.yaml": patch("etcd"),
        "kube-controller-manager+strategic.yaml": patch("kube-controller-manager"),
        "kube-scheduler+strategic.yaml": patch("kube-scheduler", readiness_period=TCG_READINESS_PERIOD),
        # kubeadm's CoreDNS Deployment (target `corednsdeployment`, cmd/kubeadm/app/util/patches/patches.go
        # @ v1.36.3): its readiness probe has the default 1 s timeout and its liveness probe 5 s x 5.
        "corednsdeployment+strategic.yaml": yaml.safe_dump({"spec": {"template": {"spec": {"containers": [coredns]}}}},
                                                           sort_keys=False),
    }


def _frozen(values: dict | None = None) -> MappingProxyType:
    return MappingProxyType(dict(values or {}))


@dataclass(frozen=True)
class Tuning:
    """Every setting that depends on the acceleration. Empty means upstream's default."""
    profile: str  # TCG or KVM
    why: str
    kernel_args: tuple[str, ...] = ()
    tb_cache_mib: int = 0  # QEMU's translation cache of a host-preparation guest (TCG only)
    tb_cache_kubernetes_mib: int = 0  # ... and of a Kubernetes node
    cpu_shares: MappingProxyType = field(default_factory=_frozen)  # role -> cpu.shares; empty: libvirt's
    boot_in_turn: bool = False  # more vCPUs than cores: machines boot one group after another
    kubeadm_timeouts: MappingProxyType = field(default_factory=_frozen)
    leader_election: MappingProxyType = field(default_factory=_frozen)
    etcd_args: MappingProxyType = field(default_factory=_frozen)
    encryption_algorithm: str = ""
    static_pod_patches: MappingProxyType = field(default_factory=_frozen)  # file name -> content
    go_env: MappingProxyType = field(default_factory=_frozen)  # containerd, the kubelet, the static pods
    kubelet_args: MappingProxyType = field(default_factory=_frozen)
    containerd_stats_period: str = ""  # containerd's CRI stats collector (2.3 and later)
    calico_probes: MappingProxyType = field(default_factory=_frozen)  # container -> probe -> settings
    calico_probe_timeout: int = 0  # seconds each of calico-node's probes may take
    flannel_iptables_resync: int = 0  # flanneld's --iptables-resync in seconds; 0: flannel's default
    cni_apply_from_host: bool = False  # the kubeadm track's CNI applied by the host's kubectl

    @property
    def is_tcg(self) -> bool:
        return self.profile == TCG

    def unit_dropins(self) -> tuple[tuple[str, str, str], ...]:
        """(unit, path, content): systemd drop-ins that give containerd and the
        kubelet `go_env`; none when there is none (KVM)."""
        if not self.go_env:
            return ()
        env = " ".join(f"{k}={v}" for k, v in self.go_env.items())
        return tuple((unit, f"/etc/systemd/system/{unit}.service.d/20-kubelab-tcg.conf",
                      f"[Service]\nEnvironment={env}\n") for unit in GO_ENV_UNITS)

    def _containerd_cri(self) -> dict:
        if not self.containerd_stats_period:
            return {}
        return {"stats_collect_period": self.containerd_stats_period,
                "applies_to": "containerd 2.3 and later (older ones have no stats collector)"}

    def cmdline(self, image_cmdline: str) -> str:
        return " ".join((image_cmdline, *self.kernel_args))

    def tb_cache(self, kubernetes: bool) -> int:
        return self.tb_cache_kubernetes_mib if kubernetes else self.tb_cache_mib

    def record(self) -> dict:
        """The cluster's settings as run.json's `install` keeps them (empty: upstream's default)."""
        return {"tuning": self.profile, "tuning_reason": self.why,
                "timeouts": dict(self.kubeadm_timeouts), "leader_election": dict(self.leader_election),
                "etcd": dict(self.etcd_args), "encryption_algorithm": self.encryption_algorithm,
                "static_pod_patches": dict(self.static_pod_patches), "go_runtime": dict(self.go_env),
                "kubelet_args": dict(self.kubelet_args), "containerd_cri": self._containerd_cri(),
                "calico_probes": {c: {p: dict(v) for p, v in probes.items()}
                                  for c, probes in self.calico_probes.items()},
                "flannel_iptables_resync_s": self.flannel_iptables_resync or None,
                "cni_applied_from": "the host" if self.cni_apply_from_host else "the control plane",
                "guests": {"kernel_args": list(self.kernel_args), "tb_cache_mib": self.tb_cache_kubernetes_mib,
                           "cpu_shares": dict(self.cpu_shares), "boot_in_turn": self.boot_in_turn}}


def _tcg(why: str) -> Tuning:
    return Tuning(
        profile=TCG, why=why, kernel_args=TCG_KERNEL_ARGS, tb_cache_mib=TB_CACHE_MIB,
        tb_cache_kubernetes_mib=TB_CACHE_KUBERNETES_MIB, cpu_shares=_frozen(CPU_SHARES), boot_in_turn=True,
        kubeadm_timeouts=_frozen(TCG_TIMEOUTS), leader_election=_frozen(TCG_LEADER_ELECTION),
        etcd_args=_frozen(TCG_ETCD), encryption_algorithm=TCG_KEYS, static_pod_patches=_frozen(tcg_patches()),
        go_env=_frozen(TCG_GO_ENV), kubelet_args=_frozen(TCG_KUBELET_ARGS),
        containerd_stats_period=TCG_CONTAINERD_STATS_PERIOD,
        calico_probes=_frozen({c: _frozen({p: _frozen(v) for p, v in probes.items()})
                               for c, probes in TCG_CALICO_PROBES.items()}),
        calico_probe_timeout=TCG_CALICO_PROBE_TIMEOUT, flannel_iptables_resync=TCG_FLANNEL_IPTABLES_RESYNC,
        cni_apply_from_host=TCG_CNI_APPLY_FROM_HOST)


def decide(domain_type: str, measured: str = "", forced: bool = False) -> Tuning:
    """The profile of guests that run with libvirt domain type `domain_type` ("kvm" or "qemu")
    on a host whose probe found `measured`. Without `forced`, an empty `measured` (a record
    that kept only the domain type) means the domain type was what the probe found; with
    it, nothing was measured, and only TCG's settings are safe."""
    if not forced:
        measured = measured or domain_type
    if domain_type == "qemu":
        why = ("guests run under TCG (software emulation), where each of these settings was measured to be needed"
               + (" (KUBELAB_ACCEL forced the domain type `qemu`)" if forced else ""))
        return _tcg(why)
    if measured != "kvm":
        return _tcg("KUBELAB_ACCEL forced the domain type `kvm`, but KVM was not measured to work on this "
                    "host: the timings stay those of TCG")
    return Tuning(profile=KVM, why="guests run under KVM (measured): upstream's defaults"
                                   + (" (KUBELAB_ACCEL forced the domain type `kvm`)" if forced else ""))


def host_profile() -> Tuning:
    """What a lab here would get now: this boot's acceleration verdict, TCG until one is measured
    (admission counts TCG's translation caches then, never too little)."""
    from .machines import accel

    verdict = accel.cached_verdict()
    return for_acceleration(verdict.record()) if verdict else decide("qemu")


def for_acceleration(acc: dict) -> Tuning:
    """From an acceleration record (machines/accel.py Verdict.record)."""
    return decide(acc.get("domain_type") or "qemu", acc.get("measured", ""), bool(acc.get("forced")))


def for_lab(state: dict) -> Tuning:
    """A lab's profile, from what its state recorded when it came up (older states: the domain type)."""
    return for_acceleration(state.get("acceleration") or {"domain_type": state.get("domain_type")})
