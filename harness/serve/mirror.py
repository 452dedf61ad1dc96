"""How a guest's containerd finds the lab registry. Pure text.

containerd reads `<config_path>/<upstream host>/hosts.toml`
(docs/hosts.md, containerd 1.6-2.4). Each file sends pulls for one upstream
to the lab registry over plain HTTP; `override_path` keeps the upstream host
as the first part of the repository path, as the kit pushed them
(`registry.k8s.io/pause`). No `skip_verify`: on an http host it makes 1.7.16+
and 2.x try HTTPS first (remotes/docker/config/hosts.go).

`config_path` is set explicitly, as one folder, for every version: it is
empty by default in 1.6, 1.7, 2.0 and 2.1, and 2.2+'s default is a
colon-separated list that the transfer-service pull path does not split
(containerd#12808), so hosts.toml would be ignored.
"""

from __future__ import annotations

CONFIG_PATH = "/etc/containerd/certs.d"
REGISTRY_HOST = "kubelab-host"  # the lab network's host address, from /etc/hosts (seed)
LAB_REGISTRY = f"{REGISTRY_HOST}:5000"
# kubelab.local: kubelab's own images (the cluster probes' toolbox); it exists nowhere else.
MIRRORED = ("registry.k8s.io", "ghcr.io", "kubelab.local")


def hosts_toml(upstream: str, registry: str) -> str:
    return (f'server = "https://{upstream}"\n\n'
            f'[host."http://{registry}/v2/{upstream}"]\n'
            '  capabilities = ["pull", "resolve"]\n'
            "  override_path = true\n")


def hosts_path(upstream: str) -> str:
    return f"{CONFIG_PATH}/{upstream}/hosts.toml"


def hosts_files(registry: str = LAB_REGISTRY) -> dict[str, str]:
    """{path in the guest: content} for every mirrored upstream."""
    return {hosts_path(u): hosts_toml(u, registry) for u in MIRRORED}

