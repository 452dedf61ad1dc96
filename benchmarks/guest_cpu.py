"""Where a running lab's guests spend their CPU, process by process (nothing is started in the lab).

    .venv/bin/python benchmarks/guest_cpu.py [--lab NAME] [--seconds 60] [--top 12]

Keep a cluster with `invoke scenario kubeadm-baseline --keep` (or any lab), then run this while
it sits quiet, or while something runs in it. On each machine /proc/stat and every process's
/proc/<pid>/stat are read twice, `--seconds` apart (one shell loop of builtins each time, so
the reading itself costs the guest almost nothing), and libvirt's CPU time of each machine's
emulator over the same window. Printed per machine:

- the host cores its emulator took (what the guest costs this host);
- the share of its vCPUs its own kernel counted busy (user, system, interrupts);
- the processes that took that time, grouped by command name, in vCPU cores; "exited in the
  window" is busy time no process alive at the end holds: short-lived processes (an exec
  probe's runc, a kubectl, a CNI plugin call).

Under TCG the first figure is the ceiling of everything: a quiet cluster that keeps the host's
cores busy leaves none for the work a scenario waits on. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# One read of the guest: the `cpu` line, then every process's stat line. `read` is a shell
# builtin, so no process is forked per pid; a pid gone between the glob and the read is skipped.
GUEST_READ = ('head -n 1 /proc/stat; getconf CLK_TCK; '
              'for f in /proc/[0-9]*/stat; do read -r l < "$f" && echo "$l"; done 2>/dev/null; true')
KERNEL_THREAD = re.compile(r"^(kworker|ksoftirqd|migration|cpuhp|rcu_\w+|irq|idle_inject)/.*$")


@dataclass
class Sample:
    at: float
    tick: int
    busy: dict[str, int]                     # user, system, irq (ticks) from the `cpu` line
    procs: dict[tuple[int, int], tuple[str, int]] = field(default_factory=dict)  # (pid, start) -> (name, ticks)


def group_name(comm: str) -> str:
    """Kernel threads per CPU (kworker/1:2, ksoftirqd/0) count as one name."""
    m = KERNEL_THREAD.match(comm)
    return m.group(1) if m else comm


def parse(text: str, at: float) -> Sample:
    lines = text.splitlines()
    cpu = lines[0].split()
    if cpu[0] != "cpu":
        raise ValueError(f"not /proc/stat's cpu line: {lines[0]!r}")
    user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in cpu[1:8])
    sample = Sample(at, int(lines[1]), {"user": user + nice, "system": system, "irq": irq + softirq})
    for line in lines[2:]:
        pid, _, rest = line.partition(" (")
        comm, _, tail = rest.rpartition(") ")  # comm may hold spaces and parentheses
        fields = tail.split()
        if not pid.isdigit() or len(fields) < 20:
            continue
        # fields[0] is stat's field 3 (state): utime 14, stime 15, starttime 22
        sample.procs[(int(pid), int(fields[19]))] = (group_name(comm), int(fields[11]) + int(fields[12]))
    return sample


def difference(a: Sample, b: Sample) -> tuple[float, dict[str, float], dict[str, float]]:
    """(window seconds, {user/system/irq: vCPU cores}, {process name: vCPU cores}) between two samples."""
    window = b.at - a.at
    per = lambda ticks: ticks / b.tick / window  # noqa: E731
    kinds = {k: per(b.busy[k] - a.busy[k]) for k in b.busy}
    names: dict[str, float] = defaultdict(float)
    for key, (name, ticks) in b.procs.items():
        before = a.procs.get(key, (name, 0))[1]  # a process born in the window counts from 0
        names[name] += per(ticks - before)
    held = sum(names.values())
    busy = sum(kinds.values())
    if busy > held:
        names["exited in the window"] = busy - held
    return window, kinds, dict(names)


def main() -> int:
    from harness import host
    from harness.lab import Lab
    from harness.machines import backend_for
    from harness.remote.ssh import SshRemote

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lab", help="the lab (default: the only lab)")
    ap.add_argument("--seconds", type=float, default=60.0, help="the window between the two reads")
    ap.add_argument("--top", type=int, default=12, help="processes shown per machine")
    args = ap.parse_args()
    lab = Lab.chosen(args.lab)
    backend = backend_for(lab.state["backend"])
    machines = [m for m in lab.state["machines"] if m.get("ip")]
    remotes = {m["name"]: SshRemote(lab.ssh_target(m["name"])) for m in machines}
    try:
        def read_all() -> dict[str, Sample]:
            out = {}
            for name, remote in remotes.items():
                result = remote.run(GUEST_READ, timeout=120, check=True)
                out[name] = parse(result.stdout, time.monotonic())
            return out

        first, emu0, host0, t0 = read_all(), backend.cpu_seconds(lab), host.cpu_times(), time.monotonic()
        time.sleep(args.seconds)
        second, emu1, host1, t1 = read_all(), backend.cpu_seconds(lab), host.cpu_times(), time.monotonic()
    finally:
        for remote in remotes.values():
            remote.close()
    print(f"lab {lab.name}: a {t1 - t0:.0f} s window; this host ({os.cpu_count()} cores) busy "
          f"{(host1[0] - host0[0]) / (t1 - t0):.2f} cores")
    for m in machines:
        name = m["name"]
        _, kinds, names = difference(first[name], second[name])
        emu = ""
        if name in emu0 and name in emu1 and emu0[name][0] == emu1[name][0]:
            emu = f"its emulator took {(emu1[name][1] - emu0[name][1]) / (t1 - t0):.2f} host cores; "
        vcpus = m.get("cpus") or "?"
        busy = sum(kinds.values())
        print(f"\n{name} ({vcpus} vCPU): {emu}its kernel counted {busy:.2f} vCPU cores busy "
              f"(user {kinds['user']:.2f}, system {kinds['system']:.2f}, interrupts {kinds['irq']:.2f})")
        for proc, used in sorted(names.items(), key=lambda kv: -kv[1])[:args.top]:
            print(f"  {proc:<28} {used:5.2f}  {used / busy:6.1%}" if busy else f"  {proc:<28} {used:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
