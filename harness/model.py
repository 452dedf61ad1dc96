"""A scenario as the engine sees it: frozen, validated, defaults applied.

Built only by scenario.load (which reports every problem with file, line and
field path first); everything downstream can trust these values.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

API_VERSION = "kubelab/v1"
KIND = "Scenario"
PHASES = ("prepare", "arm", "armed-check", "install", "expect", "recover", "verify", "collect", "teardown")
INSTALL_TRACKS = ("none", "kubeadm", "kubespray")
# When a fault is armed: before the install track runs (arm phase), or inside the
# kubeadm track, after host preparation and containerd (before-init) or after the
# nodes joined and before the CNI is applied (before-cni).
FAULT_PHASES = ("before-install", "before-init", "before-cni")
# Roles: a Kubernetes lab has control-plane and worker machines; a host-only lab, nodes.
ROLES = ("control-plane", "worker", "node")
# Targets: every machine, a role, one machine (`@name` or `name`), or the cluster's API.
ROLE_SELECTORS = {"@control-plane": "control-plane", "@workers": "worker"}
CLUSTER = "cluster"
HOST = "host"  # the machine kubelab runs on: its steps (ansible-playbook) and what they recorded
NOT_SET = object()


@dataclass(frozen=True)
class MachineDef:
    name: str
    role: str = "node"
    cpus: int = 1
    memory: int = 1024


@dataclass(frozen=True)
class LabDef:
    suite: str
    machines: tuple[MachineDef, ...]
    backend: str | None = None  # pin: libvirt or vagrant
    network: str | None = None  # the lab network's CIDR (a /24), e.g. to overlap flannel's 10.244/16
    overlap: str = ""  # "intended": the network overlaps the cluster's ranges on purpose (no lint warning)
    containerd: str = ""  # "2.2.9": a containerd built from source over sid's own ("" = the suite's)

    def roles(self) -> dict[str, str]:
        return {m.name: m.role for m in self.machines}


# A cluster's ranges when its scenario names none (the loader fills them in; nothing else
# restates them): flannel's own Network (Documentation/kube-flannel.yml @ v0.28.4) and
# kubeadm's default Service subnet (cmd/kubeadm/app/apis/kubeadm/v1beta4/defaults.go
# DefaultServicesSubnet @ v1.36.3).
DEFAULT_POD_CIDR = "10.244.0.0/16"
DEFAULT_SERVICE_CIDR = "10.96.0.0/12"

# Everything the track can prepare on a host; a scenario's `install.prepare` leaves out what its
# fault is (a control run prepares all of it: the fault-free host).
TRACK_PREPARE = ("ip_forward", "br_netfilter")


@dataclass(frozen=True)
class InstallDef:
    """How Kubernetes gets onto the machines; `track: none` for host-only scenarios."""
    track: str = "none"
    kubernetes: str = ""  # "1.36.3"; empty with track none (the loader's default: artifacts/versions.py)
    pod_cidr: str = DEFAULT_POD_CIDR
    service_cidr: str = DEFAULT_SERVICE_CIDR
    cni: str = "flannel"  # or none
    prepare: tuple[str, ...] = TRACK_PREPARE  # host preparation the track does itself
    kubernetes_version_in_config: bool = True  # false: ClusterConfiguration without kubernetesVersion
    preload: bool = True  # boot the node image whose containerd already holds the kit's images
    # the scenario's fault stops `kubeadm init` (preflight, kubelet): the track ends at init,
    # whatever its exit code, and the expectations read its output; a `reinstall` recovers.
    # `init_fails_versions` narrows that to a version range ({"containerd": "<2.0"}): where the
    # fault breaks init only on some versions, the others go on through joins and CNI
    init_fails: bool = False
    kubelet_health_check: str = ""  # InitConfiguration timeouts.kubeletHealthCheck, when not the track's (tuning.py)
    init_fails_versions: dict = field(default_factory=dict)
    # timeouts.kubernetesAPICall of the init the fault stops (kubeadm 1.36 bootstraps the admin
    # user within it before it waits for the kubelet); the reinstall after the fix gets the track's
    # (TCG's 10m0s, or kubeadm's default under KVM: harness/tuning.py)
    kubernetes_api_call: str = ""
    # the kubespray track: the user's checkout (install.kubespray, or --kubespray / KUBELAB_KUBESPRAY
    # once resolved: harness/tracks/kubespray.py), where it came from, and S2's control plane in kube_node
    kubespray: str = ""
    kubespray_source: str = ""
    schedulable_control_plane: bool = False
    # further kubespray variables the scenario sets (install.variables), as sorted (name, value) pairs
    variables: tuple = ()
    # the scenario's fault stops kubespray's play: a failed task is the expected failure,
    # which `ansible-failure` checks read (kubeadm's init_fails, for the kubespray track)
    play_fails: bool = False
    # Kubernetes versions the checkout's own validation must refuse: before the install's play,
    # a cluster.yml with each, which kubespray stops before any guest work (a signature to expect)
    refused_versions: tuple = ()
    # the install is expected to undo the faults itself (kubespray loads and persists br_netfilter):
    # no recovery step, and the expectations and verify prove it did
    repairs_faults: bool = False

    @property
    def installs_kubernetes(self) -> bool:
        return self.track != "none"

    @property
    def expected_to_stop(self) -> bool:
        """The fault is meant to stop the install (kubeadm init, kubespray's play)."""
        return self.init_fails or self.play_fails


@dataclass(frozen=True)
class ProbeRef:
    kind: str
    args: dict


@dataclass(frozen=True)
class Count:
    pattern: str
    min: int = 0
    max: int | None = None


@dataclass(frozen=True)
class Check:
    """One probe on each target, with one matcher, polled until met or out of time."""

    name: str
    probe: ProbeRef
    target: str = "@all"
    pattern: str | None = None
    absent: str | None = None
    count: Count | None = None
    equals: Any = NOT_SET
    within: float = 0.0
    stable_for: float = 0.0
    versions: dict = field(default_factory=dict)  # component -> range, e.g. {"containerd": "<2.0"}
    after_reboot: bool = False
    source: str = ""  # upstream file and version the expected string comes from
    at: str = ""  # "before-cni": evaluated inside the install track, before the CNI is applied
    claims: tuple[str, ...] = ()  # the claims (claims files' ids) this check proves

    @property
    def asserts(self) -> bool:
        return self.pattern is not None or self.absent is not None or self.count is not None or self.equals is not NOT_SET

    def expected(self) -> str:
        if self.pattern is not None:
            return f"pattern {self.pattern!r}"
        if self.absent is not None:
            return f"absent {self.absent!r}"
        if self.count is not None:
            upper = "" if self.count.max is None else f", at most {self.count.max}"
            return f"count of {self.count.pattern!r}: at least {self.count.min}{upper}"
        if self.equals is not NOT_SET:
            return f"equals {self.equals!r}"
        return ""


@dataclass(frozen=True)
class FaultDef:
    kind: str
    target: str = "@all"
    phase: str = "before-install"
    params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class StepDef:
    """A recovery step: a command, a reboot, the faults' own recovery, or the install
    track again from `kubeadm reset`: after an init that failed as expected, or, on a
    cluster that was built, a rebuild (every node reset and its CNI state removed),
    optionally with other ranges (`networks`: pod_cidr, service_cidr)."""

    name: str
    target: str = "@all"
    run: str | None = None
    reboot: bool = False
    recover_faults: bool = False
    timeout: float = 120.0
    reinstall: bool = False
    networks: dict = field(default_factory=dict)  # reinstall with these pod_cidr / service_cidr
    versions: dict = field(default_factory=dict)  # component -> range: the step runs only there
    # power off and boot, once with `kernel_args` added: the way back into a machine that the
    # network no longer reaches (a learner at its console)
    power_cycle: bool = False
    kernel_args: str = ""

    @property
    def action(self) -> str:
        if self.run is not None:
            return "run"
        if self.power_cycle:
            return "power-cycle"
        return "reboot" if self.reboot else "reinstall" if self.reinstall else "recover-faults"


@dataclass(frozen=True)
class EvidenceDef:
    kind: str  # journal | file | command
    what: str
    target: str = "@all"

    @property
    def command(self) -> str:
        if self.kind == "journal":
            return f"journalctl --no-pager -o short-iso -b -u {self.what}"
        return f"cat {self.what}" if self.kind == "file" else self.what


@dataclass(frozen=True)
class FactDef:
    """A named value derived from the run's observations, for reports and the matrix.

    seconds: when the check named was met, seconds after its phase began ("n/a" in a
      control run of a scenario with faults: no fix to time from);
    value: the value the check named last read;
    matched: the text the check named last matched (with `regex`, its one group in it);
    cases: the value of the first case whose check was met.
    Whatever cannot be read from what was observed is "unknown", never a default."""

    name: str
    kind: str  # seconds | value | matched | cases
    check: str = ""
    regex: str = ""  # matched: the group kept from the matched text
    cases: tuple[tuple[str, Any], ...] = ()  # (check name, value)

    def checks(self) -> list[str]:
        return [self.check] if self.check else [c for c, _ in self.cases]


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    lab: LabDef
    install: InstallDef = InstallDef()
    claims: tuple[str, ...] = ()  # derived: every id its checks name, in file order
    faults: tuple[FaultDef, ...] = ()
    expect: tuple[Check, ...] = ()
    recover: tuple[StepDef, ...] = ()
    verify: tuple[Check, ...] = ()
    verify_layers: tuple[str, ...] = ()  # `verify: [{layers: all}]`: harness/verify's layers, after the checks
    observe: tuple[Check, ...] = ()
    evidence: tuple[EvidenceDef, ...] = ()
    facts: tuple[FactDef, ...] = ()
    # a cluster scenario CI's default test tier runs end to end on real guests (each costs 4-15
    # minutes under TCG); the others run on demand, `pytest -m cluster`. Host scenarios: always
    ci: bool = False
    warnings: tuple[str, ...] = ()  # file:line: what lint and a run print before anything is created
    source_file: str = ""
    sha256: str = ""

    def control_problem(self) -> str:
        """Why `--control` means nothing here ("" when it does): a scenario whose fault is its
        lab network has no fault a control run could leave out."""
        if not self.faults and self.lab.overlap == "intended":
            return (f"scenario {self.name} has no fault to leave out: its fault is the lab network itself "
                    f"({self.lab.network}, `overlap: intended`); its control is kubeadm-baseline, the same "
                    "cluster on a network of its own")
        return ""

    def with_containerd(self, version: str) -> "Scenario":
        """The same scenario on a containerd built from source (the matrix's column axis)."""
        return replace(self, lab=replace(self.lab, suite="sid", containerd=version))

    def with_kubernetes(self, version: str) -> "Scenario":
        """The same scenario on another Kubernetes release (the matrix's row axis)."""
        if not self.install.installs_kubernetes:
            raise ValueError(f"scenario {self.name} installs no Kubernetes")
        return replace(self, install=replace(self.install, kubernetes=version))
