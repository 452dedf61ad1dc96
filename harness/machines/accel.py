"""Which libvirt domain type guests get: `kvm` only if a guest really boots with it.

/dev/kvm can exist and still be useless: nested guests on some hosts hang
right after the bootloader. So the probe boots the image's own kernel under
KVM with no root disk and `panic=-1`: a working KVM reaches the kernel panic
("VFS: Unable to mount root fs") in a second or two and QEMU exits by itself
(-no-reboot). Anything else within the time limit means TCG. The verdict is
cached per host boot (/proc/sys/kernel/random/boot_id). `KUBELAB_ACCEL=tcg|kvm`
sets the domain type instead; the probe's result is kept beside it, because what
kubelab tunes for the acceleration (harness/tuning.py) follows what was measured.
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
# Sets the domain type instead of the probe; the probe still runs and is recorded.
FORCE_VARIABLE = "KUBELAB_ACCEL"
LABELS = {"qemu": "TCG (software emulation)", "kvm": "KVM"}


@dataclass(frozen=True)
class Verdict:
    domain_type: str  # "kvm" or "qemu" (TCG): what the guests run with
    reason: str
    boot_id: str
    probe_seconds: float = 0.0
    measured: str = ""  # what the probe found, when KUBELAB_ACCEL forced another domain type
    forced: bool = False  # the domain type came from KUBELAB_ACCEL

    @property
    def is_tcg(self) -> bool:
        return self.domain_type == "qemu"

    @property
    def label(self) -> str:
        return LABELS.get(self.domain_type, self.domain_type)

    def describe(self) -> str:
        return f"{self.label} (libvirt domain type `{self.domain_type}`): {self.reason}"

    def record(self) -> dict:
        """What a lab keeps of it (lab state, run.json): tuning.py decides from it."""
        return {"domain_type": self.domain_type, "label": self.label,
                "measured": self.measured if self.forced else self.domain_type, "forced": self.forced,
                "reason": self.reason if self.forced else f"measured: {self.reason}"}


def lab_fields(state: dict) -> dict:
    """A lab's acceleration as a run record keeps it: `TCG (software emulation)` or `KVM`, why, and
    the whole verdict (older lab states kept only the domain type)."""
    acc = state.get("acceleration") or {}
    return {"accel": acc.get("label") or LABELS.get(state.get("domain_type", ""), state.get("domain_type", "")),
            "accel_reason": acc.get("reason", ""), "acceleration": acc}


def _boot_id() -> str:
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def _cache_file() -> Path:
    return paths.run_dir() / "accel.json"


def _forced() -> str | None:
    value = os.environ.get(FORCE_VARIABLE)
    return {"tcg": "qemu", "qemu": "qemu", "kvm": "kvm"}.get(value or "")


def _measured() -> Verdict | None:
    """This boot's probe result, if the probe ran."""
    try:
        data = json.loads(_cache_file().read_text())
        verdict = Verdict(**data)
    except (OSError, ValueError, TypeError):
        return None
    return verdict if verdict.boot_id == _boot_id() else None


def _with_forcing(measured: Verdict | None) -> Verdict | None:
    """KUBELAB_ACCEL sets the domain type only; the probe's result stays on record (the
    tuning follows it: a forced `kvm` does not make a TCG host's timings KVM's)."""
    forced = _forced()
    if forced is None:
        return measured
    found = (f"measured: {LABELS[measured.domain_type]}, {measured.reason}" if measured
             else "not measured yet")
    return Verdict(forced, f"forced by {FORCE_VARIABLE}={os.environ[FORCE_VARIABLE]} ({found})", _boot_id(),
                   measured=measured.domain_type if measured else "", forced=True)


def cached_verdict() -> Verdict | None:
    """What guests would run with now, without probing (None: not probed yet this boot)."""
    measured = _measured()
    return _with_forcing(measured) if measured or _forced() else None


def decide(kernel: Path) -> Verdict:
    """The cached probe result, or probe now with `kernel` and cache it; then KUBELAB_ACCEL."""
    verdict = _measured()
    if verdict is None:
        verdict = probe(kernel)
        write_json(_cache_file(), asdict(verdict))
    return _with_forcing(verdict)


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
