"""The host failing under a run, for real, on the smallest lab that shows it: kubelab must say it was
the host (exit 2, the machine and the cause named), keep what it saw, and leave nothing behind.
Never a product verdict, and never a wait that runs to a probe's timeout."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from harness.machines.libvirt import LibvirtBackend, domain_name

from .helpers import invoke, objects_of, wait_for

pytestmark = pytest.mark.vm


class Run:
    """`invoke scenario NAME` in the background, its output read as it comes."""

    def __init__(self, name: str, runs: Path, *args: str):
        self.runs = runs
        self.proc = invoke("scenario", name, *args, env=dict(os.environ, KUBELAB_RUNS=str(runs)))
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def said(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def record(self) -> dict:
        [path] = self.runs.glob("*/*/run.json")
        return json.loads(path.read_text())

    def wait(self, timeout: float) -> int:
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=10)
        return code


def _qemu_pid(domain: str) -> int:
    return int(Path(f"/run/libvirt/qemu/{domain}.pid").read_text())


def test_a_killed_qemu_ends_the_run_as_the_hosts_doing_naming_the_machine_within_seconds(
        libvirt_backend, bookworm_image, tmp_path):
    """br-netfilter-missing's guest QEMU killed (SIGKILL, as the OOM killer does) once the fault is armed."""
    run = Run("br-netfilter-missing", tmp_path / "runs")
    try:
        wait_for(lambda: run.said("armed-check: ok"), 900, "the fault armed and proven")
        lab = run.record()["lab"]["name"]
        domain = domain_name(lab, "node1")
        os.kill(_qemu_pid(domain), signal.SIGKILL)
        killed = time.monotonic()
        code = run.wait(timeout=600)
        ended = time.monotonic() - killed
    finally:
        if run.proc.poll() is None:
            run.proc.send_signal(signal.SIGINT)
            run.wait(timeout=300)
    said = "\n".join(run.lines)
    assert code == 2, said
    assert ended < 60, f"the run ended {ended:.0f} s after the kill:\n{said}"
    assert "machine node1: its QEMU process ended under the run" in said
    record = run.record()
    assert record["verdict"]["result"] == "error"
    assert "machine node1: its QEMU process ended under the run (libvirt: domain" in record["verdict"]["reason"]
    assert [m["machine"] for m in record["machines_lost"]] == ["node1"]
    serial = next(Path(run.runs).glob("*/*/evidence/node1.serial.log"))
    assert "node1 login:" in serial.read_text(errors="replace")  # the guest's console, up to the kill
    assert objects_of(lab) == []
    status = invoke("lab.status")
    assert lab not in status.communicate(timeout=120)[0]


def test_the_watch_leaves_a_pools_own_pause_and_a_power_cycle_alone(libvirt_backend, bookworm_image):
    """Only what the host does counts: kubelab's own pause and power-off are not a lost machine."""
    from harness import lifecycle
    from harness.lab import Lab

    from .helpers import remove_lab_whatever_happened, unique_lab_name

    name = unique_lab_name("watch")
    try:
        lab = lifecycle.up(lifecycle.plan_lab(1, "bookworm", 1, 768, name))
        backend = LibvirtBackend()
        assert backend.health(lab) == {}
        assert backend.pause(lab, "node1")
        assert backend.health(lab) == {}  # paused, reason user
        dom = backend.conn.lookupByName(domain_name(name, "node1"))
        dom.resume()
        dom.destroy()  # a power cycle's hard stop (libvirt.py power_cycle)
        assert backend.health(lab) == {}  # shut off, reason destroyed
        lab = Lab.load(name)
        dom.create()
        os.kill(_qemu_pid(domain_name(name, "node1")), signal.SIGKILL)
        found = wait_for(lambda: backend.health(lab), 30, "libvirt to see the QEMU process gone")
        assert list(found) == ["node1"] and "reason crashed" in found["node1"]
    finally:
        remove_lab_whatever_happened(name)
