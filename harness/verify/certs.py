"""Layer `certificates`: every certificate file on the control-plane nodes, read with
openssl on the node, its lineage, and what `kubeadm certs check-expiration` covers
(S4, S8, K11).

The folders come from the API server's manifest (the directories of
`--client-ca-file` and `--etcd-cafile`: kubeadm's `/etc/kubernetes/pki`, or
kubespray's `/etc/kubernetes/ssl` and `/etc/ssl/etcd/ssl`), plus the kubelet's
own `/var/lib/kubelet/pki`. A certificate's lineage is the CA whose Subject Key
Identifier is its Authority Key Identifier (by subject where a certificate
carries no key identifiers).
"""

from __future__ import annotations

import calendar
import re
import shlex
import time
from dataclasses import dataclass

from .etcd import MANIFEST, apiserver_flags
from .finding import NOT_APPLICABLE, RECORDED, Finding, holds
from .sections import script, split

LAYER = "certificates"
KUBELET_PKI = "/var/lib/kubelet/pki"
DEFAULT_DIRS = ("/etc/kubernetes/pki", "/etc/kubernetes/ssl", "/etc/ssl/etcd/ssl")
READS = (f"on each control-plane node: {MANIFEST} (--client-ca-file, --etcd-cafile), then `openssl x509 -noout "
         f"-subject -issuer -enddate -ext subjectKeyIdentifier,authorityKeyIdentifier` of every certificate under "
         f"those folders and {KUBELET_PKI}, and `kubeadm certs check-expiration`")
CHECK_EXPIRATION = "kubeadm certs check-expiration"


@dataclass(frozen=True)
class Cert:
    path: str
    subject: str
    issuer: str
    not_after: float  # epoch seconds
    ski: str = ""
    aki: str = ""

    @property
    def self_signed(self) -> bool:
        return self.subject == self.issuer and (not self.aki or self.aki == self.ski)


def read_script(dirs: list[str]) -> str:
    quoted = " ".join(shlex.quote(d) for d in dirs)
    # one list over every folder, each file once (kubeadm's etcd folder is inside its pki folder)
    listing = (f"for d in {quoted}; do [ -d \"$d\" ] && find \"$d\" -maxdepth 2 -type f "
               "\\( -name '*.crt' -o -name '*.pem' \\); done | sort -u | while read -r f; do "
               "grep -q 'BEGIN CERTIFICATE' \"$f\" || continue; echo \"-- $f\"; "
               "openssl x509 -in \"$f\" -noout -subject -issuer -enddate "
               "-ext subjectKeyIdentifier,authorityKeyIdentifier -nameopt RFC2253 2>&1; done")
    return script([("now", "date +%s"), ("files", listing),
                   ("kubeadm", f"if command -v kubeadm >/dev/null; then {CHECK_EXPIRATION}; "
                               "else echo 'kubeadm: not on this node'; fi")])


def folders(manifest: str) -> list[str]:
    """The pki folders the API server uses, then the usual ones, then the kubelet's."""
    etcd_ca = apiserver_flags(manifest).get("etcd-cafile", "")
    named = [cert_dir_of(manifest)] + ([etcd_ca.rsplit("/", 1)[0]] if etcd_ca else [])
    return list(dict.fromkeys(named + list(DEFAULT_DIRS) + [KUBELET_PKI]))


def _not_after(text: str) -> float:
    """openssl's `notAfter=Dec  3 18:40:02 2027 GMT` as epoch seconds."""
    return float(calendar.timegm(time.strptime(" ".join(text.split()), "%b %d %H:%M:%S %Y GMT")))


def parse_certs(text: str) -> list[Cert]:
    """Blocks of `-- <path>` then openssl's output, e.g.
        -- /etc/kubernetes/pki/apiserver.crt
        subject=CN=kube-apiserver
        issuer=CN=kubernetes
        notAfter=Dec  3 18:40:02 2027 GMT
        X509v3 Subject Key Identifier:
            2A:...
        X509v3 Authority Key Identifier:
            5F:...
    """
    out = []
    for block in re.split(r"^-- ", text, flags=re.M)[1:]:
        lines = block.splitlines()
        path, fields, pending = lines[0].strip(), {}, None
        for line in lines[1:]:
            s = line.strip()
            if pending:
                fields[pending] = s.replace("keyid:", "").strip()
                pending = None
            elif s.startswith(("subject=", "issuer=", "notAfter=")):
                k, v = s.split("=", 1)
                fields[k] = v.strip()
            elif s.startswith("X509v3 Subject Key Identifier"):
                pending = "ski"
            elif s.startswith("X509v3 Authority Key Identifier"):
                pending = "aki"
        if "notAfter" in fields:
            out.append(Cert(path, fields.get("subject", ""), fields.get("issuer", ""), _not_after(fields["notAfter"]),
                            fields.get("ski", ""), fields.get("aki", "")))
    return out


def lineage(cert: Cert, certs: list[Cert]) -> str:
    """The path of the CA that signed it ("self-signed" for a root), or "unknown CA (<issuer>)"."""
    if cert.self_signed:
        return "self-signed"
    for ca in certs:
        if ca is cert:
            continue
        if (cert.aki and ca.ski == cert.aki) or (not cert.aki and ca.subject == cert.issuer):
            return ca.path
    return f"unknown CA ({cert.issuer})"


def parse_check_expiration(text: str) -> list[dict]:
    """`kubeadm certs check-expiration`'s two tables (cmd/kubeadm/app/cmd/certs.go, v1.36.3:
    CERTIFICATE / EXPIRES / RESIDUAL TIME / CERTIFICATE AUTHORITY / EXTERNALLY MANAGED, then
    CERTIFICATE AUTHORITY / EXPIRES / RESIDUAL TIME / EXTERNALLY MANAGED) as rows
    {name, expires, residual, ca (bool)}."""
    rows, in_cas = [], None
    for line in text.splitlines():
        if line.startswith("CERTIFICATE AUTHORITY"):
            in_cas = True
            continue
        if line.startswith("CERTIFICATE "):
            in_cas = False
            continue
        m = re.match(r"^(\S+)\s+([A-Z][a-z]{2} \d{2}, \d{4} \d{2}:\d{2} UTC)\s+(\S+)", line)
        if in_cas is not None and m:
            rows.append({"name": m.group(1), "expires": m.group(2), "residual": m.group(3), "ca": in_cas})
    return rows


def kubeadm_file(name: str, cert_dir: str) -> str:
    """The file a kubeadm certificate name stands for (certs/renewal's naming, v1.36.3):
    `etcd-ca` -> etcd/ca.crt, `etcd-server` -> etcd/server.crt, `admin.conf` -> the kubeconfig
    (its certificate is embedded), anything else -> <name>.crt, under certificatesDir."""
    if name.endswith(".conf"):
        return f"/etc/kubernetes/{name}"
    if name.startswith("etcd-"):
        return f"{cert_dir}/etcd/{name[len('etcd-'):]}.crt"
    return f"{cert_dir}/{name}.crt"


def judge(node: str, certs: list[Cert], now: float, listing: list[dict] | None, cert_dir: str) -> list[Finding]:
    src = f"{node}: openssl x509"
    out = []
    covered = {kubeadm_file(r["name"], cert_dir) for r in listing or []}
    for c in sorted(certs, key=lambda c: c.path):
        days = int((c.not_after - now) // 86400)
        listed = "listed by kubeadm" if c.path in covered else "not in kubeadm's listing"
        out.append(Finding(LAYER, f"{node}:{c.path}", RECORDED,
                           f"subject {c.subject}; issuer {c.issuer}; not after "
                           f"{time.strftime('%Y-%m-%d', time.gmtime(c.not_after))} ({days} days left); "
                           f"signed by {lineage(c, certs)}; {listed}", f"{src} -in {c.path}"))
    if not certs:
        return [Finding(LAYER, f"{node}: certificate files", NOT_APPLICABLE, "no certificate file found", src)]
    out.append(holds(LAYER, f"{node}: none expired", all(c.not_after > now for c in certs),
                     f"{sum(c.not_after <= now for c in certs)} of {len(certs)} expired", src))
    first = min(certs, key=lambda c: c.not_after)
    out.append(Finding(LAYER, f"{node}: first to expire", RECORDED,
                       f"{first.path} on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(first.not_after))} "
                       f"({int((first.not_after - now) // 86400)} days left)", src))
    if listing is None:
        out.append(Finding(LAYER, f"{node}: {CHECK_EXPIRATION}", NOT_APPLICABLE, "kubeadm is not on this node",
                           f"{node}: command -v kubeadm"))
        return out
    out.append(Finding(LAYER, f"{node}: {CHECK_EXPIRATION}", RECORDED,
                       f"{len(listing)} entries: " + ", ".join(f"{r['name']} {r['residual']}" for r in listing),
                       f"{node}: {CHECK_EXPIRATION}"))
    missed = [c.path for c in sorted(certs, key=lambda c: c.path) if c.path not in covered]
    out.append(Finding(LAYER, f"{node}: not covered by {CHECK_EXPIRATION}", RECORDED,
                       "; ".join(missed) if missed else "none: every certificate file is in kubeadm's listing",
                       f"{node}: {CHECK_EXPIRATION} against the files found"))
    return out


def cert_dir_of(manifest: str) -> str:
    """kubeadm's certificatesDir as the API server uses it: the folder of `--client-ca-file`."""
    m = re.search(r"--client-ca-file=(\S+)", manifest)
    return m.group(1).rsplit("/", 1)[0] if m else "/etc/kubernetes/pki"


def check(access) -> list[Finding]:
    out = []
    for node in access.control_planes():
        manifest = access.shell(node, f"cat {MANIFEST} || true").stdout
        parts = split(access.shell(node, read_script(folders(manifest)), timeout=300).stdout)
        now = float(parts.get("now", "").strip() or time.time())
        said = parts.get("kubeadm", "")
        listing = None if "kubeadm: not on this node" in said else parse_check_expiration(said)
        out += judge(node, parse_certs(parts.get("files", "")), now, listing, cert_dir_of(manifest))
    if not out:
        out.append(Finding(LAYER, "control-plane nodes", NOT_APPLICABLE, "no control-plane node reached over SSH",
                           "API node labels"))
    return out
