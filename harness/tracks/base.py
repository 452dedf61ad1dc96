"""What every install track answers (harness/tracks/__init__.py keeps the registry)."""

from __future__ import annotations

from ..errors import UsageError
from ..model import InstallDef, Scenario


class Track:
    name = ""
    installs_kubernetes = True
    # recover may `reinstall` the cluster, and faults may be armed inside the install
    # (before-init, before-cni): what the loader allows a scenario on this track
    reinstalls = False
    reinstall_takes_ranges = True  # a reinstall may give other pod/service ranges (`reinstall: {pod_cidr: ...}`)
    arms_inside_install = False
    # the install section's keys besides `track` a scenario on this track may give
    install_keys: tuple[str, ...] = ()
    takes_checkout = False  # runs a checkout the user brings (--kubespray)
    records_plays = False   # its host steps record ansible plays, which `ansible-failure` reads
    # installs its own container runtime over the guest's: the machines' versions are read again
    # after the install, so run.json has both
    replaces_runtime = False

    def runtime_containerd(self, install: InstallDef) -> str:
        """With `replaces_runtime`: the containerd release the install puts in place of the guest's
        ("2.3.4"), or "" while that is not known (no checkout resolved)."""
        return ""

    def estimate_min(self, machines: int) -> int:
        """Rough wall time of one scenario under TCG on a 2-core host, for a matrix's plan only."""
        return 4  # a host scenario: machines and probes, no install (measured 2-4 min)

    def resolve(self, install: InstallDef, kubespray: str | None = None, required: bool = True) -> InstallDef:
        """The install with what the command line adds (`--kubespray`), checked before anything runs;
        `required` False (a dry-run): what is not given is shown as a placeholder."""
        if kubespray:
            raise UsageError(f"--kubespray: this scenario installs with the `{self.name}` track, not kubespray")
        return install

    def preflight(self, scenario: Scenario, progress) -> None:
        """What must hold before any machine exists (exit 2 with what is missing)."""

    guest_recipe = "debian"  # the guest image's recipe (images/<name>/)
    boots_node_image = True  # with a kit: boot the node image (False: the suite's plain image, the kit served)

    def node_image_release(self, install: InstallDef) -> str | None:
        """The Kubernetes release ("v1.36.3") whose kit serves the lab (and whose node image it boots,
        unless `boots_node_image` is False); None: no kit, the suite's plain image."""
        return None

    def record(self, scenario: Scenario, tuned) -> dict | None:
        """run.json's `install`: what the run installs and under which settings; None: nothing."""
        return None

    def context(self, scenario: Scenario, lab, roles: dict, facts: dict, kit: dict | None, tuned,
                workdir=None):
        """What the steps depend on, from the running lab (addresses, images, tokens); `workdir`:
        the run's folder for files the track writes on the host."""
        return None

    def dry_context(self, scenario: Scenario, facts: dict | None, tuned):
        """The same before any lab exists: placeholders dry-run prints as they are."""
        return None

    def steps(self, install: InstallDef, ctx, make_step, at_point, init_may_fail: bool = False) -> list:
        """The install phase's steps; `at_point(when)` gives the fault and check steps armed at a
        point inside the install (before-init, before-cni)."""
        return []

    def reinstall_steps(self, install: InstallDef, ctx, make_step, rebuild: bool, new_ranges: bool) -> list:
        raise NotImplementedError(f"install track `{self.name}` cannot reinstall")
