"""Layer `records`: what the install left on the nodes for a later reader (S6).

kubeadm's configuration as the cluster keeps it (ConfigMap kube-system/
kubeadm-config) and the files installers leave: kubespray's
`/etc/kubernetes/kubeadm-config.yaml`, `/etc/etcd.env` and download cache
`/tmp/releases`; the config and logs `kubeadm init` was run with by hand (as
kubelab's kubeadm track does, in /root). Each with its size and sha256, or
`absent`: which installer made the cluster shows in which of them exist.
"""

from __future__ import annotations

import hashlib
import shlex

from .finding import NOT_APPLICABLE, RECORDED, Finding

LAYER = "records"
FILES = ("/etc/kubernetes/kubeadm-config.yaml", "/etc/kubernetes/kubeadm-images.yaml", "/etc/etcd.env",
         "/root/kubeadm-config.yaml", "/root/kubeadm-join.yaml", "/root/kubeadm-init.log", "/root/kubeadm-join.log")
FOLDERS = ("/tmp/releases",)
READS = (f"API GET configmaps/kubeadm-config in kube-system; on every node: size and sha256 of {', '.join(FILES)} "
         f"and of the files under {', '.join(FOLDERS)}")


def list_script() -> str:
    files = " ".join(shlex.quote(f) for f in FILES)
    folders = " ".join(shlex.quote(d) for d in FOLDERS)
    return (f"for f in {files}; do if [ -f \"$f\" ]; then echo \"$(stat -c %s \"$f\") "
            f"$(sha256sum < \"$f\" | cut -d' ' -f1) $f\"; else echo \"absent - $f\"; fi; done; "
            f"for d in {folders}; do if [ -d \"$d\" ]; then find \"$d\" -maxdepth 2 -type f | sort | "
            "while read -r f; do echo \"$(stat -c %s \"$f\") $(sha256sum < \"$f\" | cut -d' ' -f1) $f\"; done; "
            "else echo \"absent - $d/\"; fi; done")


def parse(text: str) -> list[tuple[str, str, str]]:
    """(size, sha256, path) per line; size `absent` where the file is not there, e.g.
        1234 9f86d0...c15d /root/kubeadm-config.yaml
        absent - /etc/etcd.env"""
    out = []
    for line in text.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3:
            out.append((parts[0], parts[1], parts[2]))
    return out


def judge(node: str, rows: list[tuple[str, str, str]], command: str) -> list[Finding]:
    present = [(s, h, p) for s, h, p in rows if s != "absent"]
    absent = [p for s, _, p in rows if s == "absent"]
    out = [Finding(LAYER, f"{node}:{p}", RECORDED, f"{s} bytes, sha256 {h}", f"{node}: stat, sha256sum")
           for s, h, p in present]
    out.append(Finding(LAYER, f"{node}: absent", RECORDED if absent else NOT_APPLICABLE,
                       ", ".join(absent) or "every record looked for is there", f"{node}: {command[:60]}..."))
    return out


def check(access) -> list[Finding]:
    out = []
    cm = access.cluster.config_map("kube-system", "kubeadm-config")
    src = "API GET /api/v1/namespaces/kube-system/configmaps/kubeadm-config"
    if cm is None:
        out.append(Finding(LAYER, "kubeadm-config ConfigMap", NOT_APPLICABLE, "absent: not a kubeadm-made cluster", src))
    else:
        for key, text in sorted((cm.data or {}).items()):
            out.append(Finding(LAYER, f"kubeadm-config ConfigMap: {key}", RECORDED,
                               f"{len(text.encode())} bytes, sha256 {hashlib.sha256(text.encode()).hexdigest()}",
                               src, text))
    command = list_script()
    for node in sorted(access.remotes):
        out += judge(node, parse(access.shell(node, command).stdout), command)
    return out
