"""The kubespray track: the user's kubespray checkout runs cluster.yml from the host against
the lab's machines, offline, with what the kit serves.

Its steps: the inventory, known_hosts, vars and checksums files written into the run's
folder (host-write), the ansible-playbook command (host-run), then admin.conf from the
control plane. The checkout is the user's (--kubespray, KUBELAB_KUBESPRAY, install.kubespray);
before any machine exists the preflight proves the kit serves every file and image the
checkout's download list asks for at this Kubernetes version, and that the checkout's
ansible-core gate holds for the venv kubelab makes from its requirements.txt.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import UsageError
from ..host_command import HOST
from ..model import InstallDef, Scenario
from .. import cni as cnis
from ..kubespray.command import control_dir
from ..remote.file_write import write_command
from .base import Track

ADMIN_CONF = "/etc/kubernetes/admin.conf"
SERVER_HOST = "kubelab-host"  # the lab network's host address in every guest's /etc/hosts (serve/mirror.py)
REGISTRY_PORT = 5000
TCG_DROPIN_NOTE = ("under TCG, as the kubeadm track: containerd and the kubelet with GOMAXPROCS=1 and no async "
                   "preemption; containerd's shims inherit GODEBUG but keep upstream's GOMAXPROCS=4")
# a play kubespray's validate_inventory stops before any guest work (measured 2.8-4.6 s)
REFUSAL_TIMEOUT_S = 300.0
# cluster.yml for one control plane and one worker, as a whole (kubespray-offline.md estimates
# 45-60 min under TCG for a stock flow); KVM gets half
PLAY_TIMEOUT_S = {True: 5400.0, False: 2700.0}
NO_CHECKOUT = "<kubespray checkout: --kubespray PATH or KUBELAB_KUBESPRAY>"


@dataclass(frozen=True)
class KubesprayContext:
    control_plane: str
    files: tuple[tuple[str, str], ...]   # (host path, content): written before the play
    command: object                      # the HostCommand of cluster.yml
    timeout: float
    reset: object = None                 # the HostCommand of reset.yml, confirmed (a reinstall's first step)
    machines: tuple[str, ...] = ()       # every machine of the play, for the guest steps before it
    # (version, HostCommand): cluster.yml with a version the checkout's validation refuses
    refusals: tuple = ()
    # (host path, content): the vars file with kube_version pinned, which a reinstall writes when the
    # install left kube_version to kubespray's default (install.kubernetes_version_in_config: false)
    pinned: tuple = ()
    # (unit, guest path, content): systemd drop-ins for containerd and the kubelet under TCG (tuning.py)
    dropins: tuple = ()
    # (name, command, note): run on the control plane after each play (kubespray/tcg.py after_play)
    after_play: tuple = ()
    # (name, command, note): run on the control plane before each play (kubespray/tcg.py before_play)
    before_play: tuple = ()


# variables kubelab sets itself, and where a scenario says what it wants instead; the offline
# servers' variables (files_repo, *_url, *_image_repo, ...) are refused when the vars file is written
KUBELAB_VARIABLES = {
    "kube_version": "use install.kubernetes",
    "container_manager": "the lab's runtime is containerd",
    "kube_network_plugin": "use install.cni",
    "kube_pods_subnet": "use install.pod_cidr",
    "kube_service_addresses": "use install.service_cidr",
    "files_repo": "the lab's file server", "registry_host": "the lab registry", "registry_addr": "the lab registry",
    "containerd_registries_mirrors": "the lab registry", "unsafe_show_logs": "so a failure shows its URL and error",
    "upstream_dns_servers": "the lab's host address, where nothing answers (the lab stays off the outside)",
    **{f"flannel{part}_image_{what}": "the kit's flannel images" for part in ("", "_init") for what in ("repo", "tag")},
    "flannel_interface": "the lab's NIC: guests have no default route for flanneld to find one by",
}


def settings(install: InstallDef) -> dict:
    """The variables a scenario's install section sets for kubespray (inventory-level choices);
    what picks the CNI is the CNI's own (harness/cni)."""
    out = {"container_manager": "containerd", **cnis.by_name(install.cni).kubespray(),
           "kube_pods_subnet": install.pod_cidr, "kube_service_addresses": install.service_cidr}
    out.update(dict(install.variables))  # the loader refused any of the names above
    return out


def lab_variables(gateway: str) -> dict:
    """What the lab itself tells kubespray. A guest's resolv.conf has no nameserver (the lab
    network has no DNS), and kubespray's preinstall stops on that ("nameserver should not be
    empty in /etc/resolv.conf", roles/kubernetes/preinstall/tasks/0040-verify-settings.yml,
    asserted unless upstream_dns_servers is set): the lab's host address, where nothing
    answers, as the kubeadm track gives its kubelet's resolver."""
    return {"upstream_dns_servers": [gateway]}


def checkout_for_build(path: str, kubernetes: str):
    """`invoke artifacts.build --kubespray PATH`, checked before the kit is built: the checkout,
    and the Kubernetes release in its tables. (found, defaults)"""
    from ..kubespray import checkout
    from ..kubespray.downloads import Defaults

    found = checkout.load(checkout.locate(path)[0])
    defaults = Defaults(found.path, found.version)
    defaults.check_version(kubernetes)
    return found, defaults


def build_for_checkout(found, defaults, kubernetes: str, kit: dict, progress, rebuild: bool = False) -> None:
    """The extras the checkout downloads beyond the kit, then what the lab serves of its list;
    what it still cannot serve is an error (exit 2), as the preflight would make it."""
    from ..kubespray import readiness

    # the downloads of every pod network the track installs: kubespray's default (calico) and flannel
    wanted = list({d: None for n in cnis.for_track("kubespray") if n != "none"
                   for d in defaults.resolve(kubernetes, settings(InstallDef(track="kubespray", kubernetes=kubernetes,
                                                                             cni=n)))})
    served, gaps = readiness.build_all(wanted, kit, progress, found.version, rebuild=rebuild)
    if not served.complete:
        raise UsageError(readiness.refusal(kubernetes, found.version, found.path, wanted, served, gaps))
    print(f"kubespray {found.version}: the lab serves all {len(wanted)} downloads for Kubernetes {kubernetes}")


class KubesprayTrack(Track):
    name = "kubespray"
    install_keys = ("kubernetes", "pod_cidr", "service_cidr", "cni", "kubespray", "schedulable_control_plane",
                    "play_fails", "variables", "kubernetes_version_in_config", "refused_versions", "repairs_faults")
    takes_checkout = True
    records_plays = True
    # its container-engine roles remove Debian's containerd and runc and install the versions of its
    # download list (measured: sid's 2.1.9 and 1.3.6 became 2.3.4 and 1.4.3)
    replaces_runtime = True
    reinstalls = True
    reinstall_takes_ranges = False  # a reinstall with other pod/service ranges: not yet (new vars file)

    def runtime_containerd(self, install: InstallDef) -> str:
        if not install.kubespray:
            return ""
        return _containerd_version(install, _checkout(install)[1])

    def estimate_min(self, machines: int) -> int:
        # measured end to end here, one control plane and one worker: kubespray-layer-check in 33.4 min
        # with today's TCG settings (59.8-94.1 before them), the other kubespray scenarios in 44.8 and
        # 62.0 (before them): the middle of those, rounded up; a little more per further machine
        return 45 + 5 * max(0, machines - 2)

    # -- before anything runs -------------------------------------------------------------
    def resolve(self, install: InstallDef, kubespray: str | None = None, required: bool = True) -> InstallDef:
        """The checkout the run uses (--kubespray, then KUBELAB_KUBESPRAY, then install.kubespray),
        checked to be one, and the scenario's Kubernetes version in its checksum tables."""
        from ..kubespray import checkout
        from ..kubespray.downloads import Defaults

        try:
            path, source = checkout.locate(kubespray, install.kubespray or None)
        except UsageError:
            if required:
                raise
            return install
        found = checkout.load(path, source)
        defaults = Defaults(found.path, found.version)
        defaults.check_version(install.kubernetes)
        _check_version_faults(install, found, defaults)
        return replace(install, kubespray=str(path), kubespray_source=source)

    def preflight(self, scenario: Scenario, progress) -> None:
        """The kit serves every download (the kit is built first if it is not), and the venv's
        ansible-core is one the checkout accepts; otherwise exit 2, naming what is missing."""
        from ..artifacts import prerequisites
        from ..artifacts.versions import KubeVersion
        from ..kubespray import offline, readiness
        from ..serve import files as serve_files

        install = scenario.install
        found, defaults = _checkout(install)
        kit = prerequisites.ensure_kit(KubeVersion.parse(install.kubernetes), progress)
        wanted = defaults.resolve(install.kubernetes, settings(install))
        # the vars file as the run will write it (servers as placeholders): a scenario variable that
        # collides with kubelab's offline ones is refused here, not after the machines exist
        offline.extra_vars(defaults, install.kubernetes, f"http://{SERVER_HOST}:{serve_files.PORT}",
                           f"{SERVER_HOST}:{REGISTRY_PORT}", settings(install))
        guests = _guest_problems(scenario, self.guest_recipe, found.path)  # a run they stop builds nothing first
        served, gaps = readiness.ensure_served(
            wanted, kit, progress, found.version,
            f"`invoke artifacts.build --kubernetes {install.kubernetes} --kubespray {found.path}`", build=not guests)
        problems = [] if served.complete else \
            [readiness.refusal(install.kubernetes, found.version, found.path, wanted, served, gaps)]
        problems += guests
        if problems:
            raise UsageError("\n".join(problems) + "\nNo machine was created.")
        _ensure_ansible(found, progress)

    # -- the run ----------------------------------------------------------------------------
    boots_node_image = False  # kubespray installs Kubernetes itself, on the suite's image
    guest_recipe = "kubespray"  # with what kubespray's Ansible wants installed (images/kubespray)

    def node_image_release(self, install: InstallDef) -> str | None:
        return f"v{install.kubernetes}"  # the kit its file server and registry serve

    def record(self, scenario: Scenario, tuned) -> dict:
        install = scenario.install
        from ..kubespray import tcg

        for_acceleration = tcg.variables(tuned, install.variables, self.runtime_containerd(install))
        out = {"track": self.name, "kubernetes": install.kubernetes,
               "schedulable_control_plane": install.schedulable_control_plane,
               "tuning": tuned.profile, "tuning_reason": tuned.why,
               "kubespray_variables_for_the_acceleration": for_acceleration,
               # a scenario's own value wins over a TCG allowance of the same name
               "replaced_by_install_variables": sorted(set(for_acceleration) & set(dict(install.variables))),
               "note": "settings for TCG through kubespray's own variables (harness/kubespray/tcg.py)"
               if tuned.is_tcg else "kubespray's defaults: nothing set for the acceleration"}
        if install.kubespray:
            out["kubespray"] = _checkout(install)[0].record()
        return out

    def context(self, scenario: Scenario, lab, roles: dict, facts: dict, kit: dict | None, tuned,
                workdir: Path | None = None):
        from ..artifacts import kit as kits
        from ..artifacts.versions import KubeVersion
        from ..kubespray import serving

        install = scenario.install
        found, defaults = _checkout(install)
        kit = kit or kits.load_kit(KubeVersion.parse(install.kubernetes))
        files = serving.serving(defaults.resolve(install.kubernetes, settings(install)), kit).files
        machines = [(m, lab.ip(m), roles[m]) for m in roles]
        return _context(install, machines, lab.host_public_key, lab.client_key, tuned,
                        workdir or Path("install"), found, defaults, serving.sha256_of(files), lab.gateway,
                        control_dir(lab.name))

    def dry_context(self, scenario: Scenario, facts: dict | None, tuned):
        install = scenario.install
        roles = scenario.lab.roles()
        machines = [(m, f"<address of {m}>", roles[m]) for m in roles]
        found, defaults = _checkout(install) if install.kubespray else (None, None)
        return _context(install, machines, lambda m: f"ssh-ed25519 <the-lab's-pinned-host-key-of-{m}>",
                        Path("<the lab's client key>"), tuned, Path("<run folder>/install"),
                        found, defaults, None, "<the lab network's host address>", control_dir("<lab>"))

    def steps(self, install: InstallDef, ctx: KubesprayContext, make_step, at_point,
              init_may_fail: bool = False) -> list:
        # kubespray adds no route for the Service range; a guest without a default route needs one
        out = [make_step(m, "run", name, c, note=note) for m in ctx.machines for name, c, note in cnis.routes_for(install)]
        # kubespray has no variable for the Go runtime of containerd (whose shims inherit GODEBUG) and the
        # kubelet; drop-ins written before the play are read when its roles reload systemd and start them
        out += [make_step(m, "write", f"{unit} Go runtime settings", write_command(path), content=content,
                          note=TCG_DROPIN_NOTE)
                for m in ctx.machines for unit, path, content in ctx.dropins]
        # a control run installs with the version pinned (its install is the fault-free one)
        files = {**dict(ctx.files), **(dict(ctx.pinned) if install.kubernetes_version_in_config else {})}
        out += [make_step(HOST, "host-write", f"kubespray: {Path(path).name}", path, content=content)
                for path, content in files.items()]
        out += [make_step(HOST, "host-run", f"kubespray: cluster.yml, kube_version {version}", "", host=command,
                          timeout=REFUSAL_TIMEOUT_S, may_fail=True,
                          note=f"kube_version {version}, outside kubespray's tables: its own validation refuses it")
                for version, command in ctx.refusals if version in install.refused_versions]
        # a play the fault is meant to stop (`play_fails`) is recorded, and the expectations judge it
        return out + _play(ctx, make_step, may_fail=init_may_fail)

    def reinstall_steps(self, install: InstallDef, ctx: KubesprayContext, make_step, rebuild: bool,
                        new_ranges: bool) -> list:
        """After a play the fault stopped: cluster.yml again (kubespray's plays are made to be
        run again over what is there). After a built cluster: reset.yml first, then cluster.yml."""
        out = []
        if rebuild:
            out.append(make_step(HOST, "host-run", "kubespray: reset.yml", "", host=ctx.reset, timeout=ctx.timeout,
                                 note="kubespray reset.yml, confirmed: the cluster removed from every machine"))
        out += [make_step(HOST, "host-write", f"kubespray: {Path(path).name}, kube_version pinned", path,
                          content=content, note="the kit's release as kube_version, where the install left "
                                                "kubespray its default (install.kubernetes_version_in_config: false)")
                for path, content in ctx.pinned]
        return out + _play(ctx, make_step)


def _check_version_faults(install: InstallDef, found, defaults) -> None:
    """A version kubespray is to refuse must be one its tables lack (else the play would install
    it); a version left to kubespray's default must differ from the kit's (else nothing is missing)."""
    accepted = []
    for version in install.refused_versions:
        try:
            defaults.check_version(version)
        except UsageError:
            continue
        accepted.append(version)
    if accepted:
        raise UsageError(f"install.refused_versions: kubespray {found.version} ({found.path}) has "
                         f"{', '.join(accepted)} in its checksum tables, so cluster.yml would install it, not "
                         f"refuse it; choose a version outside its tables (it has {defaults.supported_summary()})")
    if not install.kubernetes_version_in_config and defaults.default_kube_version() == install.kubernetes:
        raise UsageError(f"install.kubernetes_version_in_config: false leaves kube_version to kubespray "
                         f"{found.version}'s default, {install.kubernetes}, which is the kit's release: nothing would "
                         "be missing from the lab. Give another `kubernetes` (--kubernetes) of its tables")


def _guest_problems(scenario: Scenario, recipe_name: str, checkout: Path) -> list[str]:
    """What the guests lack for the play: Ansible runs its modules with the guest's python3
    (measured: a stock guest stops at kubespray's first fact-gathering task with
    `/bin/sh: 1: /usr/bin/python3: not found`, rc 127), and the packages kubespray's
    system_packages role installs must be there already (no apt mirror in a lab)."""
    from .. import paths
    from ..images.recipe import Recipe
    from ..kubespray import system_packages

    suite = scenario.lab.suite
    recipe = Recipe.named(recipe_name, suite)
    have = recipe.packages()
    listed = ", ".join(str((layer / "packages.txt").relative_to(paths.project_root())) for layer in recipe.layers)
    out = []
    if "python3" not in have:
        out.append(f"kubespray's Ansible needs python3 in every guest, and the {suite} `{recipe.name}` "
                   f"guest image has none ({listed}); see docs/kubespray.md")
    lacking = [p for p in system_packages.wanted(checkout, suite, settings(scenario.install)) if p not in have]
    if lacking:
        out.append(f"kubespray's system_packages role installs {', '.join(lacking)} on {suite} "
                   f"({system_packages.VARS}), and the `{recipe.name}` guest image lacks them ({listed}); "
                   "a lab guest has no apt mirror: add them to the recipe")
    return out


def _play(ctx: KubesprayContext, make_step, may_fail: bool = False) -> list:
    from ..kubespray import tcg

    def on_control_plane(commands) -> list:  # (name, command, note) around the play (kubespray/tcg.py)
        return [make_step(ctx.control_plane, "run", name, command, note=note, may_fail=may_fail,
                          timeout=tcg.AROUND_PLAY_TIMEOUT_S)
                for name, command, note in commands]

    return [*on_control_plane(ctx.before_play),
            make_step(HOST, "host-run", "kubespray: cluster.yml", "", host=ctx.command, timeout=ctx.timeout,
                      note="kubespray cluster.yml against the lab", may_fail=may_fail),
            make_step(ctx.control_plane, "fetch", "admin.conf", f"cat {ADMIN_CONF}",
                      note="the admin kubeconfig kubespray's kubeadm wrote", may_fail=may_fail),
            *on_control_plane(ctx.after_play)]


def _containerd_version(install: InstallDef, defaults) -> str:
    """The containerd kubespray installs: the checkout's containerd_version, or the scenario's."""
    from ..kubespray.template import Undefined

    version = defaults.scope({"kube_version": install.kubernetes, **settings(install)}).get("containerd_version")
    return "" if version is None or isinstance(version, Undefined) else str(version)


def _checkout(install: InstallDef):
    from ..kubespray import checkout
    from ..kubespray.downloads import Defaults

    found = checkout.load(Path(install.kubespray), install.kubespray_source or "install.kubespray")
    return found, Defaults(found.path, found.version)


def _ensure_ansible(found, progress) -> None:
    from ..kubespray import checkout, venv

    with progress.step(f"kubespray's venv for {found.file('requirements.txt')} (made once, reused)"):
        made, _ = venv.ensure(found.file("requirements.txt"), log=progress.note)
    code, output = venv.run_command([str(made.ansible_playbook), "--version"], 120)
    if code != 0:
        raise UsageError(f"`{made.ansible_playbook} --version` exited {code}: {output.strip()[-400:]}")
    checkout.check_ansible(found, checkout.ansible_core_version(output))


def _context(install: InstallDef, machines, host_key, client_key: Path, tuned, workdir: Path,
             found, defaults, sha256: dict | None, gateway: str, sockets: Path) -> KubesprayContext:
    """The files and the command, from the machines as (name, address, role) and the checkout
    (None in a dry-run without one: placeholders say what the run reads from it)."""
    from ..kubespray import inventory, offline, tcg
    from ..kubespray.command import playbook_command
    from ..kubespray.venv import for_requirements
    from ..serve import files as serve_files

    hosts = inventory.hosts_from_roles(machines, install.schedulable_control_plane)
    paths = {n: workdir / n for n in ("inventory.yml", "known_hosts", "vars.yml", "checksums.yml")}
    files = {paths["inventory.yml"]: inventory.inventory_yaml(hosts, client_key, addresses_known=sha256 is not None),
             paths["known_hosts"]: inventory.known_hosts(hosts, host_key)}
    command_paths = dict(inventory=paths["inventory.yml"], vars_file=paths["vars.yml"],
                         checksums_file=paths["checksums.yml"], known_hosts=paths["known_hosts"],
                         fact_cache=workdir / "facts", control_dir=sockets)
    pinned: tuple = ()
    if found is None:
        files[paths["vars.yml"]] = files[paths["checksums.yml"]] = \
            "# made at run time from the checkout's download list and the kit\n"
        checkout_path = Path(NO_CHECKOUT)
        venv_bin, cfg = Path("<kubespray venv>/bin"), {"ansible_cfg_text": ""}
    else:
        header = f"kubelab, for kubespray {found.version} ({found.path})"
        variables = offline.extra_vars(defaults, install.kubernetes, f"http://{SERVER_HOST}:{serve_files.PORT}",
                                       f"{SERVER_HOST}:{REGISTRY_PORT}",
                                       {**tcg.variables(tuned, install.variables, _containerd_version(install, defaults)),
                                        **lab_variables(gateway), **settings(install)})
        if install.kubernetes_version_in_config:
            files[paths["vars.yml"]] = offline.dump(variables, header)
        else:  # kubespray's default: the newest of its tables (roles/kubespray_defaults/defaults/main/main.yml)
            files[paths["vars.yml"]] = offline.dump({k: v for k, v in variables.items() if k != "kube_version"},
                                                    header + f"\nkube_version left to kubespray's default "
                                                    f"({defaults.default_kube_version()}); the lab serves {install.kubernetes}")
            pinned = ((str(paths["vars.yml"]), offline.dump(variables, header)),)
        downloads = defaults.resolve(install.kubernetes, settings(install))
        if sha256 is None:  # a dry-run: which rows the run fills with the kit's sha256
            files[paths["checksums.yml"]] = offline.dump({}, header + "\nat run time, the sha256 of the kit's file for:\n"
                                                         + "\n".join(f"  {d.table}.amd64[{d.version}]: {d.path}"
                                                                     for d in downloads if d.kind == "file"))
        else:
            files[paths["checksums.yml"]] = offline.dump(offline.checksum_tables(defaults, downloads, sha256), header)
        venv_bin, cfg = for_requirements(found.file("requirements.txt")).path / "bin", {}
        checkout_path = found.path
    command = playbook_command(venv_bin=venv_bin, checkout=checkout_path, **command_paths, **cfg)
    refusals = tuple((v, playbook_command(venv_bin=venv_bin, checkout=checkout_path, extra=(f"kube_version={v}",),
                                          **command_paths, **cfg)) for v in install.refused_versions)
    # kubespray's reset.yml asks for confirmation unless reset_confirmation is set (playbooks/reset.yml)
    reset = playbook_command(venv_bin=venv_bin, checkout=checkout_path, playbook="reset.yml",
                             extra=("reset_confirmation=yes",), **command_paths, **cfg)
    control_plane = next(h.name for h in hosts if "kube_control_plane" in h.groups)
    return KubesprayContext(control_plane, tuple((str(p), t) for p, t in files.items()), command,
                            PLAY_TIMEOUT_S[tuned.is_tcg], reset, tuple(h.name for h in hosts), refusals, pinned,
                            tuned.unit_dropins(), tcg.after_play(tuned, install.cni, ADMIN_CONF),
                            tcg.before_play(tuned, install.cni, ADMIN_CONF))
