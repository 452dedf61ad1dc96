"""The kubeadm track: harness/provisioners/kubeadm.py's steps, with the context and record
the engine and dry-run ask the track for."""

from __future__ import annotations

from pathlib import Path

from ..model import InstallDef, Scenario
from .base import Track


class KubeadmTrack(Track):
    name = "kubeadm"
    reinstalls = True
    arms_inside_install = True
    install_keys = ("kubernetes", "pod_cidr", "service_cidr", "cni", "prepare", "kubernetes_version_in_config",
                    "preload", "init_fails", "kubelet_health_check", "kubernetes_api_call")

    def estimate_min(self, machines: int) -> int:
        # measured in the kubeadm chapter's book (1.36.3 on sid, TCG, pooled labs): one machine
        # 331-430 s, two machines 586-1251 s (median 692); a fresh lab adds its boot (2-4 min)
        return 10 if machines == 1 else 15

    def preflight(self, scenario: Scenario, progress) -> None:
        """A pod network built from a git tag (calico) is built, and its images pushed, before any
        machine exists; a missing clone is exit 2 naming how to give one."""
        if scenario.install.cni == "calico":
            from ..artifacts import prerequisites
            from ..artifacts.versions import KubeVersion
            from ..cni import calico

            calico.ensure(prerequisites.ensure_kit(KubeVersion.parse(scenario.install.kubernetes), progress), progress)

    def node_image_release(self, install: InstallDef) -> str | None:
        return f"v{install.kubernetes}"

    def record(self, scenario: Scenario, tuned) -> dict:
        install = scenario.install
        return {"track": self.name, "kubernetes": install.kubernetes, **tuned.record(),
                "scenario_timeouts": {k: v for k, v in (
                    ("kubeletHealthCheck", install.kubelet_health_check),
                    ("kubernetesAPICall of the init the fault stops", install.kubernetes_api_call)) if v},
                "note": "settings for TCG (harness/tuning.py); empty: upstream's default"
                if tuned.is_tcg else "upstream's defaults: nothing set for the acceleration"}

    def context(self, scenario: Scenario, lab, roles: dict, facts: dict, kit: dict | None, tuned,
                workdir=None):
        from ..artifacts import kit as kits
        from ..artifacts.versions import KubeVersion
        from ..provisioners.kubeadm import InstallContext, new_token

        kit = kit or kits.load_kit(KubeVersion.parse(scenario.install.kubernetes))
        host_apply = _host_apply(tuned, roles, kits.host_kubectl(kit), workdir or Path("install"))
        return InstallContext(
            roles=roles, ips={m: lab.ip(m) for m in roles}, facts=facts, gateway=lab.gateway,
            pause_image=next(r for r in kit["kubeadm_images"] if "/pause:" in r),
            flannel_image=kits.FLANNEL_IMAGE, flannel_cni_image=kits.FLANNEL_CNI_IMAGE, token=new_token(),
            tuning=tuned, cni_manifest=_cni_manifest(scenario.install, tuned), host_apply=host_apply)

    def dry_context(self, scenario: Scenario, facts: dict | None, tuned):
        from ..artifacts import kit as kits
        from ..artifacts.versions import KubeVersion
        from ..errors import HarnessError
        from ..provisioners.kubeadm import InstallContext

        version = scenario.install.kubernetes
        kubectl = Path(f"<the kit's files>/release/v{version}/bin/linux/amd64/kubectl")
        try:
            kit = kits.load_kit(KubeVersion.parse(version))
            pause = next(r for r in kit["kubeadm_images"] if "/pause:" in r)
            kubectl = kits.host_kubectl(kit)
        except HarnessError:
            pause = "registry.k8s.io/pause:<the tag kubeadm lists; `invoke artifacts.build` makes this exact>"
        roles = scenario.lab.roles()
        host_apply = _host_apply(tuned, roles, kubectl, Path("<run folder>/install"))
        return InstallContext(roles=roles, ips={m: f"<address of {m}>" for m in roles},
                              facts={m: facts or {} for m in roles}, gateway="<the lab network's host address>",
                              pause_image=pause, flannel_image=kits.FLANNEL_IMAGE,
                              flannel_cni_image=kits.FLANNEL_CNI_IMAGE, token="<a new bootstrap token>",
                              tuning=tuned, cni_manifest=_dry_cni_manifest(scenario.install), host_apply=host_apply)

    def steps(self, install: InstallDef, ctx, make_step, at_point, init_may_fail: bool = False) -> list:
        from ..provisioners import kubeadm

        return kubeadm.steps(install, ctx, make_step, at_point, init_may_fail=init_may_fail)

    def reinstall_steps(self, install: InstallDef, ctx, make_step, rebuild: bool, new_ranges: bool) -> list:
        from ..provisioners import kubeadm

        return kubeadm.reinstall_steps(install, ctx, make_step, rebuild=rebuild, new_ranges=new_ranges)


def _host_apply(tuned, roles: dict[str, str], kubectl: Path, workdir: Path):
    """Where the acceleration asks for it, the CNI applied from the host: the kit's kubectl, the
    copy of the control plane's admin.conf the run keeps, the manifest in the run's install folder."""
    if not tuned.cni_apply_from_host:
        return None
    from ..evidence.record import fetched_name, private_path
    from ..provisioners.kubeadm import ADMIN_CONF, HostApply

    cp = next(m for m, r in roles.items() if r == "control-plane")
    return HostApply(kubectl=kubectl, folder=workdir,
                     kubeconfig=private_path(workdir.parent, fetched_name(cp, ADMIN_CONF)))


def _cni_manifest(install: InstallDef, tuned) -> str:
    """The manifest of a CNI not rendered by kubelab (calico: upstream's, from the built tag)."""
    if install.cni != "calico":
        return ""
    from ..cni import calico

    return calico.kubeadm_manifest(calico.upstream_manifest(), install.pod_cidr, tuned)


def _dry_cni_manifest(install: InstallDef) -> str:
    if install.cni != "calico":
        return ""
    from ..cni import calico

    return (f"# calico v{calico.VERSION}'s manifests/{calico.MANIFEST} from its tag (KUBELAB_SRC_CALICO), "
            f"calico-node's CALICO_IPV4POOL_CIDR={install.pod_cidr}, its probes as the acceleration asks\n")
