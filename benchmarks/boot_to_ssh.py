"""Boot-to-SSH through kubelab vs raw QEMU, lab.up wall time, peak RSS per guest.

One run, same image, same machine size, same host; prints ratios, asserts
nothing (these hosts are shared and noisy; see README).

    .venv/bin/python benchmarks/boot_to_ssh.py [--suite bookworm] [--memory 1024] [--cpus 1]
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import host, lifecycle, signals
from harness.images import build
from harness.images.recipe import Recipe
from harness.machines import accel
from harness.machines.seed import seed_tar
from harness.progress import Progress
from harness.remote.keys import KeyPair
from harness.remote.ssh import SshRemote, SshTarget


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def raw_qemu_boot(image, cpus: int, memory: int) -> float:
    """Launch -> authenticated SSH for plain qemu-system-x86_64 (TCG, user networking)."""
    with tempfile.TemporaryDirectory(prefix="kubelab-bench-") as tmp:
        t = Path(tmp)
        client, hostkey = KeyPair.generate("bench"), KeyPair.generate("bench-host")
        client.save(t / "id")
        (t / "seed").write_bytes(seed_tar("raw", hostkey.private_openssh, hostkey.public_openssh, client.public_openssh))
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b", str(image.disk),
                        str(t / "disk.qcow2")], check=True)
        port = free_port()
        verdict = accel.decide(image.kernel)
        accel_opt = "tcg,thread=multi,tb-size=128" if verdict.is_tcg else "kvm"
        cmd = ["qemu-system-x86_64", "-machine", "q35", "-accel", accel_opt,
               "-cpu", "max" if verdict.is_tcg else "host", "-smp", str(cpus), "-m", str(memory),
               "-kernel", str(image.kernel), "-initrd", str(image.initrd), "-append", image.cmdline,
               "-drive", f"file={t / 'disk.qcow2'},if=virtio,format=qcow2",
               "-drive", f"file={t / 'seed'},if=virtio,format=raw,readonly=on",
               "-netdev", f"user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:{port}-:22",
               "-device", "virtio-net-pci,netdev=n0", "-object", "rng-random,id=rng0,filename=/dev/urandom",
               "-device", "virtio-rng-pci,rng=rng0", "-display", "none", "-serial", f"file:{t / 'serial.log'}",
               "-monitor", "none", "-nodefaults"]
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            remote = SshRemote(SshTarget("raw", "127.0.0.1", port, "root", t / "id", hostkey.public_openssh), connect_timeout=5)
            remote.wait_ready(timeout=300, interval=0.5)
            took = time.monotonic() - start
            remote.close()
        finally:
            proc.kill()
            proc.wait()
        return took


def qemu_pids(domain: str) -> list[int]:
    out = subprocess.run(["pgrep", "-f", f"guest={domain},"], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", default="bookworm")
    ap.add_argument("--cpus", type=int, default=1)
    ap.add_argument("--memory", type=int, default=1024)
    args = ap.parse_args()
    quiet = Progress(quiet=True)
    host.prepare(log=lambda m: None)
    image = build.ensure(Recipe.debian(args.suite), Progress())
    verdict = accel.decide(image.kernel)
    print(f"image {image.id}; {verdict.describe()}")

    raw = raw_qemu_boot(image, args.cpus, args.memory)

    start = time.monotonic()
    lab1 = lifecycle.up(lifecycle.plan_lab(1, args.suite, args.cpus, args.memory, "bench-one"), quiet)
    one = time.monotonic() - start
    lifecycle.down(lab1.name, quiet)

    start = time.monotonic()
    lab2 = lifecycle.up(lifecycle.plan_lab(2, args.suite, args.cpus, args.memory, "bench-two"), quiet)
    two = time.monotonic() - start
    try:
        with SshRemote(lab2.ssh_target("node1")) as r:  # some real work before reading the peak
            r.run("systemctl is-system-running --wait; modprobe br_netfilter; containerd config dump >/dev/null", timeout=120)
        rss = {m["name"]: max((peak_rss_mib(p) for p in qemu_pids(m["domain"])), default=float("nan"))
               for m in lab2.state["machines"]}
    finally:
        lifecycle.down(lab2.name, quiet)

    print(f"guest size: {args.cpus} vCPU, {args.memory} MiB")
    print(f"raw qemu boot-to-SSH            {raw:6.1f} s")
    print(f"kubelab lab.up, 1 machine       {one:6.1f} s   ratio to raw qemu {one / raw:.2f}x (target <= 1.3x)")
    print(f"kubelab lab.up, 2 machines      {two:6.1f} s   ({two / one:.2f}x one machine)")
    for name, mib in rss.items():
        print(f"peak RSS of {name}'s QEMU        {mib:6.0f} MiB")


if __name__ == "__main__":
    sys.exit(signals.run(main))
