"""Which libvirt domain type guests get: `kvm` only if a guest really boots with it.

/dev/kvm can exist and still be useless: nested guests on some hosts hang
right after the bootloader. So the probe boots the image's own kernel under
KVM with no root disk and `panic=-1`: a working KVM reaches the kernel panic
("VFS: Unable to mount root fs") in a second or two and QEMU exits by itself
(-no-reboot). Anything else within the time limit means TCG. The verdict is
cached per host boot (/proc/sys/kernel/random/boot_id).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .. import paths
from ..fsutil import write_json

PROBE_TIMEOUT = 20.0
# What the probe's kernel prints when it got as far as looking for a root fs.
PANIC_MARK = "Kernel panic"


@dataclass(frozen=True)
class Verdict:
    domain_type: str  # "kvm" or "qemu" (TCG)
    reason: str
    boot_id: str
    probe_seconds: float = 0.0

    @property
    def is_tcg(self) -> bool:
        return self.domain_type == "qemu"

    @property
    def kernel_args(self) -> tuple[str, ...]:
        """Under TCG the guest kernel finds its TSCs "unsynchronized" and falls back to
        the HPET: every clock read is then a system call plus an emulated MMIO access,
        and Go programs (which read the clock constantly) slow to a crawl; measured: a
        kube-apiserver that did not become ready in 4 minutes. QEMU derives every
        vCPU's TSC from one virtual clock, so they are in step: tell the kernel so.

        Also: sid's kernel (7.2) starts DAMON's access monitor by default
        (CONFIG_DAMON_STAT_ENABLED_DEFAULT); under TCG its kdamond thread took a fifth
        of a vCPU on a kubeadm control plane. Kernels without it ignore the parameter."""
        return ("clocksource=tsc", "tsc=reliable", "damon_stat.enabled=N") if self.is_tcg else ()

    def cmdline(self, image_cmdline: str) -> str:
        return " ".join((image_cmdline, *self.kernel_args))

    def describe(self) -> str:
        if self.is_tcg:
            return f"TCG software emulation (libvirt domain type `qemu`): {self.reason}"
        return f"KVM (libvirt domain type `kvm`): {self.reason}"


def _boot_id() -> str:
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def _cache_file() -> Path:
    return paths.run_dir() / "accel.json"


def cached_verdict() -> Verdict | None:
    forced = os.environ.get("KUBELAB_ACCEL")
    if forced in ("tcg", "qemu"):
        return Verdict("qemu", "forced by KUBELAB_ACCEL", _boot_id())
    if forced == "kvm":
        return Verdict("kvm", "forced by KUBELAB_ACCEL", _boot_id())
    try:
        data = json.loads(_cache_file().read_text())
        verdict = Verdict(**data)
    except (OSError, ValueError, TypeError):
        return None
    return verdict if verdict.boot_id == _boot_id() else None


def decide(kernel: Path) -> Verdict:
    """The cached verdict, or probe now with `kernel` and cache the result."""
    verdict = cached_verdict()
    if verdict is None:
        verdict = probe(kernel)
        write_json(_cache_file(), asdict(verdict))
    return verdict


def probe(kernel: Path, timeout: float = PROBE_TIMEOUT) -> Verdict:
    boot_id = _boot_id()
    if not os.path.exists("/dev/kvm"):
        return Verdict("qemu", "no /dev/kvm on this host", boot_id)
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return Verdict("qemu", "/dev/kvm is not accessible", boot_id)
    with tempfile.TemporaryDirectory(prefix="kubelab-accel-") as tmp:
        serial = Path(tmp) / "serial.log"
        cmd = [
            "qemu-system-x86_64", "-accel", "kvm", "-machine", "q35", "-cpu", "host",
            "-m", "256", "-smp", "1", "-nodefaults", "-no-reboot", "-display", "none",
            "-serial", f"file:{serial}", "-kernel", str(kernel),
            "-append", "console=ttyS0 panic=-1 loglevel=4",
        ]
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            took = time.monotonic() - start
            return Verdict(
                "qemu",
                f"/dev/kvm exists but a test kernel did not boot under KVM within {timeout:g}s "
                "(nested virtualisation hangs here); guests run under QEMU's TCG",
                boot_id, round(took, 1),
            )
        took = time.monotonic() - start
        console = serial.read_text(errors="replace") if serial.exists() else ""
    if PANIC_MARK in console:
        return Verdict("kvm", f"a test kernel booted under KVM in {took:.1f}s", boot_id, round(took, 1))
    why = (err or "").strip().splitlines()[-1:] or ["no console output"]
    return Verdict("qemu", f"KVM did not start a test kernel ({why[0]}); guests run under QEMU's TCG",
                   boot_id, round(took, 1))
