"""Layer `etcd`: where etcd runs, found not assumed, and whether it answers (S3).

Found from three places, none of which assumes the installer: mirror pods with
`component=etcd` in kube-system (kubeadm's stacked etcd: a static pod), a host
unit `etcd.service` with `/etc/etcd.env` (kubespray's `etcd_deployment_type:
host`), and the API server's own `--etcd-servers`. Health and the member list
are asked over etcd's TLS client endpoints with the client certificate the API
server uses (`--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile` in its static
pod manifest): `GET /health` and the v3 gRPC gateway's `POST
/v3/cluster/member/list` (etcd server/etcdserver/api/v3rpc, gateway paths as in
etcd v3.6's api/etcdserverpb/rpc.proto).
"""

from __future__ import annotations

import json
import re
import shlex

from .finding import NOT_APPLICABLE, RECORDED, Finding, holds
from .sections import script, split

LAYER = "etcd"
MANIFEST = "/etc/kubernetes/manifests/kube-apiserver.yaml"
ENV_FILE = "/etc/etcd.env"
READS = (f"API GET pods -l component=etcd in kube-system; on each control-plane node: systemctl show etcd.service, "
         f"{ENV_FILE}, {MANIFEST} (--etcd-*); then curl /health and /v3/cluster/member/list on each --etcd-servers "
         "endpoint with the API server's etcd client certificate")
FLAGS = ("etcd-servers", "etcd-cafile", "etcd-certfile", "etcd-keyfile")


def node_script() -> str:
    return script([("unit", "systemctl show -p LoadState -p ActiveState -p FragmentPath etcd.service"),
                   ("env", f"cat {ENV_FILE} || true"),
                   ("apiserver", f"cat {MANIFEST} || true")])


def apiserver_flags(manifest: str) -> dict[str, str]:
    """`--etcd-servers=...` and the cert flags from the API server's static pod manifest."""
    out = {}
    for flag in FLAGS:
        m = re.search(rf"--{flag}=(\S+)", manifest)
        if m:
            out[flag] = m.group(1).strip("'\"")
    return out


def unit(text: str) -> dict[str, str]:
    """`systemctl show -p ...` lines as a dict (LoadState=not-found where there is no unit)."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def env(text: str) -> dict[str, str]:
    """KEY=value lines of /etc/etcd.env (comments and blanks skipped)."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def ask_script(flags: dict[str, str]) -> str:
    tls = " ".join(f"--{opt} {shlex.quote(flags[flag])}" for opt, flag in
                   (("cacert", "etcd-cafile"), ("cert", "etcd-certfile"), ("key", "etcd-keyfile")))
    parts = []
    for ep in flags["etcd-servers"].split(","):
        parts.append((f"health {ep}", f"curl -sS --max-time 30 --retry 2 --retry-all-errors {tls} {shlex.quote(ep + '/health')}; echo"))
        parts.append((f"members {ep}", f"curl -sS --max-time 30 --retry 2 --retry-all-errors {tls} -X POST -d '{{}}' "
                                        f"{shlex.quote(ep + '/v3/cluster/member/list')}; echo"))
    return script(parts)


def _answer(text: str) -> dict | None:
    """The last JSON object curl printed: after a retried attempt its error line comes first,
    e.g. `curl: (28) Operation timed out after 30007 milliseconds with 0 bytes received`, then
    the retry's answer (seen under TCG in a CI run)."""
    for line in reversed(text.strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


def health(text: str) -> tuple[bool, str]:
    """etcd's /health answer: {"health":"true","reason":""} (the whole text kept, retries and all)."""
    data = _answer(text)
    if data is None:
        return False, text.strip()[:200] or "no answer"
    return str(data.get("health")) == "true", text.strip()


def members(text: str) -> list[str] | None:
    """Member names with their client URLs, from the gateway's member list (None: no list)."""
    data = _answer(text)
    if data is None:
        return None
    return [f"{m.get('name') or m.get('ID')} ({','.join(m.get('clientURLs', []))})" for m in data.get("members", [])]


def static_pods(pods) -> list[str]:
    """`etcd-cp1 on cp1` for each etcd pod that is a static pod (a mirror pod owned by its Node)."""
    out = []
    for p in sorted(pods, key=lambda p: p.metadata.name):
        owner = (p.metadata.owner_references or [None])[0]
        if owner is not None and owner.kind == "Node":
            out.append(f"{p.metadata.name} on {p.spec.node_name}")
    return out


def judge_placement(pods: list[str], units: dict[str, dict], envs: dict[str, dict]) -> list[Finding]:
    src_pods = "API GET /api/v1/namespaces/kube-system/pods?labelSelector=component=etcd"
    hosts = sorted(n for n, u in units.items() if u.get("LoadState") == "loaded")
    where = []
    if pods:
        where.append("static pod (" + "; ".join(pods) + ")")
    if hosts:
        where.append("host unit etcd.service (" + "; ".join(f"{n}: {units[n].get('ActiveState', '?')}" for n in hosts) + ")")
    out = [Finding(LAYER, "etcd runs as", RECORDED, " and ".join(where) or "neither a static pod nor a host unit on "
                   "these nodes (external to them)", f"{src_pods}; systemctl show etcd.service")]
    out.append(Finding(LAYER, "static pod", RECORDED if pods else NOT_APPLICABLE,
                       "; ".join(pods) if pods else "no etcd mirror pod in kube-system", src_pods))
    if hosts:
        for n in hosts:
            e = envs.get(n, {})
            shown = ", ".join(f"{k}={e[k]}" for k in ("ETCD_NAME", "ETCD_LISTEN_CLIENT_URLS", "ETCD_DATA_DIR") if k in e)
            out.append(holds(LAYER, f"host unit on {n}", units[n].get("ActiveState") == "active",
                             f"etcd.service {units[n].get('ActiveState')} ({units[n].get('FragmentPath', '')}); "
                             f"{ENV_FILE}: {shown or 'absent'}", f"{n}: systemctl show etcd.service; cat {ENV_FILE}"))
    else:
        out.append(Finding(LAYER, "host unit", NOT_APPLICABLE, "no etcd.service on any control-plane node",
                           "systemctl show etcd.service"))
    return out


def check(access) -> list[Finding]:
    pods = static_pods(access.cluster.pods("kube-system", "component=etcd"))
    units, envs, flags_by_node = {}, {}, {}
    for node in access.control_planes():
        parts = split(access.shell(node, node_script()).stdout)
        units[node] = unit(parts.get("unit", ""))
        envs[node] = env(parts.get("env", ""))
        flags_by_node[node] = apiserver_flags(parts.get("apiserver", ""))
    out = judge_placement(pods, units, envs)
    asked = [(n, f) for n, f in flags_by_node.items() if "etcd-servers" in f]
    if not asked:
        out.append(Finding(LAYER, "API server's etcd endpoints", NOT_APPLICABLE,
                           f"no --etcd-servers in {MANIFEST} on a control-plane node reached "
                           f"({', '.join(flags_by_node) or 'none reached'})", MANIFEST))
        return out
    node, flags = asked[0]
    out.append(Finding(LAYER, "API server's etcd endpoints", RECORDED,
                       f"{flags['etcd-servers']} (client cert {flags.get('etcd-certfile', '?')}, "
                       f"CA {flags.get('etcd-cafile', '?')})", f"{node}: {MANIFEST}"))
    if not all(f in flags for f in FLAGS[1:]):
        out.append(holds(LAYER, "etcd client certificate", False, "the manifest names no --etcd-cafile/certfile/keyfile",
                         f"{node}: {MANIFEST}"))
        return out
    answers = split(access.shell(node, ask_script(flags)).stdout)
    for ep in flags["etcd-servers"].split(","):
        ok, said = health(answers.get(f"health {ep}", ""))
        out.append(holds(LAYER, f"health {ep}", ok, said, f"{node}: curl {ep}/health"))
        listed = members(answers.get(f"members {ep}", ""))
        out.append(holds(LAYER, f"members via {ep}", bool(listed),
                         f"{len(listed)} member(s): " + "; ".join(listed) if listed else
                         (answers.get(f"members {ep}", "").strip()[:200] or "no answer"),
                         f"{node}: curl -X POST {ep}/v3/cluster/member/list"))
    return out
