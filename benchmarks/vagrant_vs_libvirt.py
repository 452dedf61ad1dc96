"""`lab.up` of 2 machines through Vagrant vs through the libvirt backend: same image, same run.

    .venv/bin/python benchmarks/vagrant_vs_libvirt.py [--machines 2] [--memory 1024]

The box is added (and uploaded into the pool) before timing, so both sides
start from a built image. Printed, not asserted.
"""

from __future__ import annotations

import argparse
import sys
import time

from harness import host, lifecycle, signals
from harness.images import box, build
from harness.images.recipe import Recipe
from harness.machines.vagrant_cli import VagrantCli
from harness.progress import Progress


def timed_up(backend: str, machines: int, memory: int) -> float:
    quiet = Progress(quiet=True)
    start = time.monotonic()
    lab = lifecycle.up(lifecycle.plan_lab(machines, "bookworm", 1, memory, f"bench-{backend[:3]}", backend=backend), quiet)
    took = time.monotonic() - start
    lifecycle.down(lab.name, quiet)
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--machines", type=int, default=2)
    ap.add_argument("--memory", type=int, default=1024)
    args = ap.parse_args()
    host.prepare(log=lambda m: None)
    image = build.ensure(Recipe.debian("bookworm"), Progress())
    box.ensure(image, VagrantCli(box.vagrant_home()), Progress())
    timed_up("vagrant", 1, args.memory)  # warm-up: uploads the box into the pool once
    libvirt_s = timed_up("libvirt", args.machines, args.memory)
    vagrant_s = timed_up("vagrant", args.machines, args.memory)
    print(f"lab.up, {args.machines} machines, {args.memory} MiB each, image {image.id}")
    print(f"  libvirt backend  {libvirt_s:6.1f} s")
    print(f"  vagrant backend  {vagrant_s:6.1f} s   ratio vagrant/libvirt {vagrant_s / libvirt_s:.2f}x")


if __name__ == "__main__":
    sys.exit(signals.run(main))
