"""The Kubernetes kit: build times, image sizes, pulls under TCG, and whether a control
plane comes up in a TCG guest at all (the feasibility figure).

    .venv/bin/python benchmarks/kit.py [--cold] [--kubernetes 1.36.3] [--skip-init]

- build time per component: with --cold, a full build into an empty cache
  (KUBELAB_CACHE in a temporary folder: empty Go module and build caches);
  otherwise the build seconds each store entry recorded when it was built;
- the warm no-op: `build_kit` again on the filled cache;
- image sizes (the OCI layouts);
- pulling every kit image into a 1-node sid lab with `crictl pull` through the mirror;
- feasibility: `kubeadm init` by hand on a 1-node sid lab with 2 vCPUs and 3 GiB,
  timed until the API server answers /readyz, with the guest's memory use.

One run, printed, nothing asserted.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
import time

from harness import host, lifecycle, signals
from harness.artifacts import kit as kits
from harness.artifacts import store
from harness.artifacts.versions import DEFAULT_KUBERNETES
from harness.images import node
from harness.progress import Progress
from harness.remote.ssh import SshRemote

INIT_TIMEOUT = 1500


def build_table(record: dict) -> list[tuple[str, str, float, int]]:
    rows = []
    for name, c in sorted(record["components"].items()):
        entry, _ = store.lookup(c["key"])
        rows.append((name, c["module"], entry.data["build_seconds"], entry.data["size"]))
    return rows


def cold_build(version) -> tuple[dict, float, list]:
    with tempfile.TemporaryDirectory(prefix="kubelab-cold-") as tmp:
        os.environ["KUBELAB_CACHE"] = tmp
        try:
            start = time.monotonic()
            record = kits.build_kit(version, Progress())
            took = time.monotonic() - start
            return record, took, build_table(record)
        finally:
            del os.environ["KUBELAB_CACHE"]


def pull_all(lab, record: dict) -> tuple[float, list[tuple[str, float]]]:
    refs = record["kubeadm_images"] + [kits.FLANNEL_IMAGE, kits.FLANNEL_CNI_IMAGE]
    each = []
    with SshRemote(lab.ssh_target("node1")) as r:
        start = time.monotonic()
        for ref in refs:
            t = time.monotonic()
            r.run(f"crictl pull {shlex.quote(ref)}", timeout=900, check=True)
            each.append((ref, time.monotonic() - t))
        return time.monotonic() - start, each


# kubeadm's own defaults fail under TCG: the admin ClusterRoleBinding is created
# before the wait for the control plane, within timeouts.kubernetesAPICall (1m,
# cmd/kubeadm/app/phases/kubeconfig/kubeconfig.go @ v1.36.3), and the API server is
# not serving by then. So the by-hand run gives kubeadm a config with longer waits.
INIT_CONFIG = """apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: {ip}
nodeRegistration:
  name: {name}
  kubeletExtraArgs:
  - name: node-ip
    value: {ip}
timeouts:
  kubernetesAPICall: 10m
  controlPlaneComponentHealthCheck: 10m
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: {version}
networking:
  podSubnet: 10.244.0.0/16
"""


def kubeadm_init_by_hand(lab, record: dict, defaults: bool) -> dict:
    """Forwarding on, then kubeadm init: with its defaults (flags only), or with INIT_CONFIG."""
    m = lab.state["machines"][0]
    ip = m["ip"]
    with SshRemote(lab.ssh_target("node1")) as r:
        r.run("sysctl -w net.ipv4.ip_forward=1", check=True)
        before = r.run("free -m | awk '/Mem:/ {print $3}'", check=True).stdout.strip()
        if defaults:
            r.run(f"echo 'KUBELET_EXTRA_ARGS=--node-ip={ip}' > /etc/default/kubelet", check=True)
            cmd = (f"kubeadm init --kubernetes-version {record['kubernetes']} --apiserver-advertise-address {ip} "
                   f"--pod-network-cidr 10.244.0.0/16 --node-name {m['name']}")
        else:
            config = INIT_CONFIG.format(ip=ip, name=m["name"], version=record["kubernetes"])
            r.put(config.encode(), "/root/kubeadm-config.yaml")
            cmd = "kubeadm init --config /root/kubeadm-config.yaml"
        start = time.monotonic()
        r.run(f"nohup sh -c {shlex.quote(cmd)} > /root/kubeadm-init.log 2>&1 &", check=True)
        readyz = finished = None
        while time.monotonic() - start < INIT_TIMEOUT and (readyz is None or finished is None):
            if readyz is None:
                ok = r.run(f"curl -sk --max-time 5 https://{ip}:6443/readyz", timeout=30)
                if ok.ok and ok.stdout.strip() == "ok":
                    readyz = time.monotonic() - start
            if finished is None and not r.run("pgrep -x kubeadm", timeout=30).ok:
                finished = time.monotonic() - start
            time.sleep(2)
        log = r.run("cat /root/kubeadm-init.log", check=True).stdout
        mem = r.run("free -m | awk '/Mem:/ {print $3, $2}'", check=True).stdout.split()
        top = r.run("ps -eo rss,comm --sort=-rss | head -8", check=True).stdout
    healthy = [l for l in log.splitlines() if "is healthy after" in l or "kubelet is healthy" in l]
    return {"readyz_s": readyz, "kubeadm_exit_s": finished, "mem_used_mib": int(mem[0]), "mem_total_mib": int(mem[1]),
            "mem_before_mib": int(before), "healthy_lines": healthy, "top": top,
            "succeeded": "Your Kubernetes control-plane has initialized successfully" in log, "log_tail": log[-1500:]}


def tb_flushes(lab) -> str:
    """QEMU's own count of translation-cache flushes (each one retranslates all guest code)."""
    import subprocess

    domain = lab.state["machines"][0]["domain"]
    out = subprocess.run(["virsh", "-c", "qemu:///system", "qemu-monitor-command", "--hmp", domain, "info jit"],
                         capture_output=True, text=True, timeout=60).stdout
    keep = [l.strip() for l in out.splitlines() if l.startswith(("gen code size", "TB flush count"))]
    return "; ".join(keep) or "(info jit unavailable)"


def fmt_seconds(value: float | None) -> str:
    return "never (within the benchmark's limit)" if value is None else f"{value:.0f} s"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kubernetes", default=DEFAULT_KUBERNETES)
    ap.add_argument("--cold", action="store_true", help="also build everything into an empty cache (tens of minutes)")
    ap.add_argument("--skip-init", action="store_true", help="skip the kubeadm init feasibility run")
    ap.add_argument("--defaults", action="store_true", help="kubeadm init with flags only (its default timeouts)")
    args = ap.parse_args()
    host.prepare(log=lambda m: None)
    version = kits.check_version(args.kubernetes)
    quiet = Progress(quiet=True)

    start = time.monotonic()
    record = kits.build_kit(version, quiet)
    warm = time.monotonic() - start
    if args.cold:
        _, cold_total, rows = cold_build(version)
        print(f"cold build of the whole kit (empty Go caches): {cold_total:.0f} s")
    else:
        rows = build_table(record)
        print("build seconds as recorded by each store entry (run with --cold for a fresh measurement):")
    for name, module, seconds, size in rows:
        print(f"  {name:<24} {module:<50} {seconds:7.1f} s  {size / 2**20:7.1f} MiB")
    print(f"warm no-op build_kit: {warm:.1f} s")

    print("images (OCI layouts, uncompressed layers):")
    for ref, img in sorted(record["images"].items()):
        print(f"  {ref:<58} {img['size'] / 2**20:7.1f} MiB")
    print(f"  total {sum(i['size'] for i in record['images'].values()) / 2**20:.1f} MiB")

    image = node.ensure("sid", record["kubernetes"], Progress())
    lab = lifecycle.up(lifecycle.plan_lab(1, "sid", 2, 3072, "bench-kit", kubernetes=record["kubernetes"]), quiet)
    try:
        total, each = pull_all(lab, record)
        print(f"pull of every kit image into a sid guest (2 vCPU, TCG) through the mirror: {total:.1f} s")
        for ref, seconds in each:
            print(f"  {ref:<58} {seconds:6.1f} s")
        if not args.skip_init:
            f = kubeadm_init_by_hand(lab, record, args.defaults)
            how = "flags only, kubeadm's default timeouts" if args.defaults else "config with kubernetesAPICall and controlPlaneComponentHealthCheck at 10m"
            print(f"feasibility: kubeadm init ({how}) on node image {image.id} (2 vCPU, 3 GiB, TCG), images already pulled")
            print(f"  API server /readyz answered after {fmt_seconds(f['readyz_s'])}; kubeadm exited after {fmt_seconds(f['kubeadm_exit_s'])};"
                  f" init {'succeeded' if f['succeeded'] else 'FAILED'}")
            print(f"  guest memory used {f['mem_used_mib']} MiB of {f['mem_total_mib']} MiB (before init: {f['mem_before_mib']} MiB)")
            for line in f["healthy_lines"]:
                print(f"  kubeadm: {line.strip()}")
            print("  largest processes (RSS KiB):\n" + "\n".join("    " + l for l in f["top"].splitlines()))
            print(f"  QEMU translation cache: {tb_flushes(lab)}")
            if not f["succeeded"]:
                print(f["log_tail"])
    finally:
        lifecycle.down(lab.name, quiet)


if __name__ == "__main__":
    sys.exit(signals.run(main))
