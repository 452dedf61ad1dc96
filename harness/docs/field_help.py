"""One sentence per scenario-file field: what it is for. What a field takes, its default and
whether it is required are read from the loader (schema.py); only the purpose is written here.
A field the loader gains without a sentence here fails the docs test, naming it."""

from __future__ import annotations

import re

# expect, verify and observe entries are checks; a `versions` gate is the same wherever it is
_CHECK = re.compile(r"^(expect|verify|observe)\[\]")
_VERSIONS = re.compile(r"^.*\.(versions|init_fails)\.")

HELP: dict[str, str] = {
    "apiVersion": "The file format's version.",
    "kind": "What the file is.",
    "name": "The scenario's name: the file's name without `.yaml`, and what `invoke scenario NAME` takes.",
    "summary": "One paragraph: the fault, what it shows and the recovery. Shown in listings, reports and books.",
    "lab": "The machines the scenario needs.",
    "install": "How Kubernetes is installed (`none` for a host-only scenario), with the track's settings.",
    "faults": "What is broken on purpose, and when (before the install, or at a point inside it).",
    "expect": "Checks that must hold while the fault is in place: the failure signature.",
    "recover": "The steps that undo the fault, in order.",
    "verify": "Checks that must hold after the recovery, and the `invoke verify` layers to ask.",
    "observe": "Values recorded for the report and the book, never asserted.",
    "evidence": "What to collect from the machines into the run folder at the end.",
    "facts": "Named figures derived from checks (a time, a value, a case) that a claims file can quote.",
    "ci": "Whether the CI matrix runs this Kubernetes scenario by default.",
    "lab.suite": "The Debian suite of every guest; it decides the containerd release (bookworm 1.6, trixie 1.7, sid 2.1).",
    "lab.machines": "The guests, each with its name and role.",
    "lab.machines[].name": "The machine's name: its hostname, and how checks and steps target it.",
    "lab.machines[].role": "What the install makes of it.",
    "lab.machines[].cpus": "vCPUs; admission checks the host has them.",
    "lab.machines[].memory": "MiB of guest memory; admission checks the host has it, with QEMU's overhead.",
    "lab.backend": "libvirt directly, or through Vagrant.",
    "lab.network": "The lab network's range (a free one is picked when left out).",
    "lab.overlap": "Says the lab network overlapping the pod range is the point, so no warning and no control run.",
    "lab.containerd": "A containerd release built from source, installed over sid's.",
    "install.track": "The install track.",
    "install.kubernetes": "The Kubernetes release to install (the kit's default when left out).",
    "install.pod_cidr": "The pod network range (kubeadm's --pod-network-cidr).",
    "install.service_cidr": "The Service range.",
    "install.cni": "The CNI the track applies after init.",
    "install.prepare": "Host preparation the track does before the install (what the fault leaves out is not done).",
    "install.kubernetes_version_in_config": "Whether kubeadm's config names the release (the air-gap scenario leaves it out).",
    "install.preload": "Whether the node image has the kit's images already pulled.",
    "install.init_fails": "Where kubeadm init is expected to stop because of the fault: always, or on matching versions.",
    "install.kubelet_health_check": "kubeadm's wait for the kubelet's health (its timeouts.kubeletHealthCheck).",
    "install.kubernetes_api_call": "kubeadm's timeout for each API call (its timeouts.kubernetesAPICall).",
    "install.kubespray": "The kubespray checkout to use (else --kubespray or KUBELAB_KUBESPRAY).",
    "install.schedulable_control_plane": "Whether the control plane takes workloads (its taint removed).",
    "install.play_fails": "The fault stops kubespray's play: the install's failure is the expected outcome.",
    "install.variables": "kubespray variables set for the play (inventory group_vars).",
    "install.refused_versions": "Kubernetes releases kubespray must refuse before any machine exists.",
    "install.repairs_faults": "The install is to undo the faults itself (kubespray loads br_netfilter, say); no recover section.",
    "faults[].kind": "The fault; see the probes and faults reference for each kind's parameters.",
    "faults[].target": "The machines it is armed on.",
    "faults[].phase": "When it is armed: before the install, or at a point inside the track.",
    "faults[].params": "The fault's parameters.",
    "check.name": "The check's name, unique in its section: reports, books and claims name it.",
    "check.probe": "What is read: one probe kind and its arguments.",
    "check.target": "Where the probe reads: machines, the cluster's API, or the host's record of the play.",
    "check.pattern": "A regular expression the reading's text must match.",
    "check.absent": "A regular expression the reading's text must not match.",
    "check.count": "How many lines of the reading must match a pattern.",
    "check.count.pattern": "The regular expression each counted line matches.",
    "check.count.min": "At least this many.",
    "check.count.max": "At most this many.",
    "check.equals": "The value the probe's reading must equal (a `command` probe's value is its exit code).",
    "check.within": "How long the check polls until it holds; 0 reads once.",
    "check.stable_for": "How long it must go on holding once it does.",
    "check.versions": "Runs the check only where the components' versions match.",
    "check.after_reboot": "The check runs again after the recovery's reboot.",
    "check.source": "Where the matched text comes from: the upstream file and version (scenario.lint asks for it on text a component wrote).",
    "check.at": "A point inside the install where the check runs instead of in its phase.",
    "check.claims": "The claim ids this check proves (claims files define them).",
    "check.layers": "`invoke verify` layers asked after the checks.",
    "versions.containerd": "A range of containerd releases, like '>=2.0'.",
    "versions.runc": "A range of runc releases.",
    "versions.kernel": "A range of kernel releases.",
    "versions.systemd": "A range of systemd releases.",
    "versions.kubernetes": "A range of Kubernetes releases (the one installed).",
    "recover[].name": "The step's name.",
    "recover[].target": "The machines it runs on.",
    "recover[].run": "A shell command.",
    "recover[].reboot": "Reboot the machines and wait for them.",
    "recover[].recover_faults": "Undo every armed fault as its kind does (each fault's own recovery).",
    "recover[].reinstall": "Install again from scratch (kubeadm reset, init, joins, CNI), optionally with other ranges.",
    "recover[].reinstall.pod_cidr": "The pod range to rebuild with.",
    "recover[].reinstall.service_cidr": "The Service range to rebuild with.",
    "recover[].power_cycle": "Power the machines off and on, optionally with kernel arguments for that one boot.",
    "recover[].power_cycle.kernel_args": "Kernel arguments for that boot.",
    "recover[].timeout": "How long the step may take.",
    "recover[].versions": "Runs the step only where the components' versions match.",
    "evidence[].journal": "A systemd unit whose journal is collected.",
    "evidence[].file": "A file collected from the machines.",
    "evidence[].command": "A command whose output is collected.",
    "evidence[].target": "The machines it is collected from.",
    "facts[].name": "The fact's name, as claims files quote it.",
    "facts[].seconds": "A time: how long the named check took to hold, from the start of its phase.",
    "facts[].value": "The value the named check last read.",
    "facts[].matched": "The text the named check matched (or the regex's group of it).",
    "facts[].cases": "A value chosen by which check held.",
    "facts[].cases[].when": "The check that must hold.",
    "facts[].cases[].value": "The fact's value then.",
    "facts[].regex": "With `matched`: a regular expression with one group, the part of the text kept.",
}


def key(path: str) -> str:
    """The HELP key of a general field path (expect[].within -> check.within)."""
    path = _CHECK.sub("check", path)
    return _VERSIONS.sub("versions.", path)


def help_for(path: str) -> str | None:
    return HELP.get(key(path))
