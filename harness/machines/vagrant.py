"""Machines through Vagrant (vagrant-libvirt), from the top-level Vagrantfile.

kubelab makes what Vagrant should not own: the lab's isolated network (kept
on `vagrant destroy`), each machine's seed disk, and the box (kubelab's own
image). It writes the lab's topology.json, which the Vagrantfile reads, then
runs `vagrant up`. The results are libvirt domains like the libvirt
backend's, so inspection, logs, SSH waits and the janitor are shared; SSH
goes through kubelab's pinned-key remote, never `vagrant ssh`.
"""

from __future__ import annotations

import libvirt

from .. import tuning
from ..fsutil import write_json
from ..images import box as boxes
from .libvirt import BOOT_TIMEOUT, LibvirtBackend
from .vagrant_cli import VagrantCli, VagrantError

VAGRANT_UP_TIMEOUT = 900.0


class VagrantBackend(LibvirtBackend):
    # vagrant-libvirt uploads the box into the pool it is given: kubelab's own, where images.prune
    # finds boxes, so KUBELAB_DISKS is the libvirt backend's only
    disks_anywhere = False
    name = "vagrant"

    def check(self) -> None:
        super().check()
        VagrantCli.check()

    def cli(self, lab=None) -> VagrantCli:
        if lab is None:
            return VagrantCli(boxes.vagrant_home())
        return VagrantCli(boxes.vagrant_home(), lab.directory, log=lab.directory / "vagrant.log")

    def topology(self, lab, box: str, verdict, pool, cmdline: str) -> dict:
        machines = []
        for m in lab.state["machines"]:
            machines.append({
                "name": m["name"], "role": m["role"], "cpus": m["cpus"], "memory_mib": m["memory_mib"],
                "mac": m["mac"], "ip": m["ip"], "serial_log": str(lab.serial_log(m["name"])),
                "seed": str(self.pool_dir(pool) / f"{m['domain']}.seed"),
            })
        net = lab.state["network"]
        tuned = tuning.for_lab(lab.state)
        tcg = verdict.domain_type == "qemu"
        return {
            "lab": lab.name, "box": box, "driver": verdict.domain_type, "pool": pool.name(),
            "cmdline": tuned.cmdline(cmdline),
            # as the libvirt backend's domains: QEMU's translation cache, TCG only (0: not set)
            "tb_cache_mib": tuned.tb_cache(kubernetes=bool(lab.state.get("kubernetes"))) if tcg else 0,
            "domain_prefix": f"kubelab-{lab.name}.", "client_key": str(lab.client_key),
            "network": {"name": net["name"], "subnet": net["subnet"]},
            "boot_timeout": int(BOOT_TIMEOUT), "machines": machines,
        }

    def up(self, lab, progress):
        from ..images import store

        image, verdict = self._image_and_accel(lab, progress)
        box = boxes.ensure(store.load(image.directory), self.cli(), progress)
        pool, _ = self._network(lab, verdict, progress)
        for m in lab.state["machines"]:
            self._write_seed(lab, m, pool)
            # vagrant-libvirt names the overlay `<domain>.img`; recorded before it exists
            lab.record("volumes", f"{m['domain']}.img")
            lab.record("domains", m["domain"])
        lab.state["box"] = box
        lab.save()
        write_json(lab.directory / "topology.json", self.topology(lab, box, verdict, pool, image.cmdline))
        with progress.step(f"vagrant up ({len(lab.state['machines'])} machine(s), box {box})"):
            # no --no-provision: with it vagrant-libvirt 0.11.2 on Vagrant 2.3.4 fails on ProvisionerCleanup
            self.cli(lab).run(["up", "--provider=libvirt"], timeout=VAGRANT_UP_TIMEOUT)
        domains = {}
        for m in lab.state["machines"]:
            dom = self.conn.lookupByName(m["domain"])
            dom.setMetadata(libvirt.VIR_DOMAIN_METADATA_ELEMENT,
                            f"<machine lab='{lab.name}' name='{m['name']}' role='{m['role']}'/>",
                            "kubelab", "urn:x-kubelab:lab:1",
                            libvirt.VIR_DOMAIN_AFFECT_CONFIG | libvirt.VIR_DOMAIN_AFFECT_LIVE)
            domains[m["name"]] = dom
        self._wait_all_ssh(lab, domains, BOOT_TIMEOUT, progress)
        return self.machines(lab)

    def snapshot(self, lab, machine: str, tag: str) -> None:
        self.cli(lab).run(["snapshot", "save", machine, tag], timeout=300)
        lab.state["snapshots"].setdefault(machine, []).append(tag)
        lab.save()

    def restore(self, lab, machine: str, tag: str, timeout: float = BOOT_TIMEOUT) -> None:
        self.cli(lab).run(["snapshot", "restore", machine, tag], timeout=300)
        self.wait_ssh(lab, machine, timeout)

    def pause(self, lab, machine: str) -> bool:
        return False  # `vagrant snapshot restore` of a paused machine has not been tried: it runs on

    def destroy(self, lab) -> list[str]:
        removed = []
        if (lab.directory / "topology.json").exists():
            try:
                self.cli(lab).run(["destroy", "--force"], timeout=300)
                removed.append("vagrant machines")
            except VagrantError:
                pass  # whatever vagrant could not remove, the libvirt teardown below does
        return removed + super().destroy(lab)

