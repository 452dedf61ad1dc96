"""The extra vars that send every kubespray download to the lab's own servers.

kubespray's offline support (docs/operations/offline-environment.md and
inventory/sample/group_vars/all/offline.yml, kubespray v2.31.0 and master 46dbdd39):

- files: `files_repo` is the HTTP base; the whole-host URL variables of
  roles/kubespray_defaults/defaults/main/download.yml (`github_url`,
  `dl_k8s_io_url`, `storage_googleapis_url`, `get_helm_url`) point below it,
  with "the original domains as top directories" (the doc's tip), so a file's
  path on the lab's file server is its upstream URL without the scheme.
- images: the registry variables (`kube_image_repo`, `docker_image_repo`,
  `quay_image_repo`, `gcr_image_repo`, `github_image_repo`) point at the lab
  registry; kubelab's registry keeps the upstream host as the first path part
  (`registry.k8s.io/pause`), so each becomes `<registry>/<upstream host>`.
  `containerd_registries_mirrors` tells containerd that registry speaks plain
  HTTP (roles/container-engine/containerd/templates/hosts.toml.j2), and sends
  kubelab's own images (`kubelab.local/toolbox`, which `invoke verify` and the
  cluster probes run) to it, as the kubeadm track's hosts.toml does
  (serve/mirror.py; measured: without it the probe pods stayed in ImagePullBackOff).
- checksums: the per-version tables are role vars in
  roles/kubespray_defaults/vars/main/checksums.yml, which only extra vars
  override, and validate_inventory asserts `kube_version` is in the kubeadm,
  kubelet and kubectl tables. So kubelab passes whole tables: the checkout's
  rows with its own sha256 in place of upstream's for each file it serves
  (the kit builds from source: same versions, other bytes).
- `unsafe_show_logs: true`: otherwise a failed download prints only
  "the output has been hidden due to the fact that 'no_log: true' was
  specified" (roles/download/tasks/download_file.yml) instead of the URL and error.

Both variable sets are read from the checkout's download.yml, not listed here:
the URL variables are those whose default is a bare https:// origin, the
registry variables those `*_image_repo` whose default is a bare registry host.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import yaml

from ..errors import UsageError
from ..oci.catalog import TOOLBOX_IMAGE
from .downloads import ARCH, Defaults, Download

ORIGIN = re.compile(r"^https://([A-Za-z0-9.-]+)/?$")
KUBELAB_IMAGES = TOOLBOX_IMAGE.partition("/")[0]  # kubelab's own registry name: kubelab.local
REGISTRY_HOST = re.compile(r"^[a-z0-9.-]+\.[a-z]+(:\d+)?$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")


def url_variables(defaults: Defaults) -> dict[str, str]:
    """{variable: upstream host} for the whole-host URL variables (github_url: github.com, ...)."""
    out = {}
    for name, value in defaults.download.items():
        m = ORIGIN.match(value) if name.endswith("_url") and isinstance(value, str) else None
        if m:
            out[name] = m.group(1)
    return out


def registry_variables(defaults: Defaults) -> dict[str, str]:
    """{variable: upstream registry} for the registry variables (kube_image_repo: registry.k8s.io, ...)."""
    return {name: value for name, value in defaults.download.items()
            if name.endswith("_image_repo") and isinstance(value, str) and REGISTRY_HOST.match(value)}


def extra_vars(defaults: Defaults, kube_version: str, files_repo: str, registry: str,
               settings: Mapping | None = None) -> dict:
    """The vars file kubelab passes with `-e @vars.yml`.

    files_repo: the lab's file server, e.g. http://192.168.100.1:8080 (no trailing slash);
    registry: the lab registry as host:port, e.g. 192.168.100.1:5000;
    settings: further variables of the scenario (container_manager, kube_network_plugin, ...)."""
    if not re.match(r"^https?://[^/]+(/.*)?$", files_repo) or files_repo.endswith("/"):
        raise UsageError(f"files_repo `{files_repo}`: give an http(s) URL without a trailing slash")
    if not re.match(r"^[A-Za-z0-9.-]+:\d+$", registry):
        raise UsageError(f"registry `{registry}`: give host:port, e.g. 192.168.100.1:5000")
    defaults.check_version(kube_version)
    out: dict = {"kube_version": kube_version, "files_repo": files_repo,
                 "registry_host": registry, "registry_addr": registry}
    out.update({name: f"{files_repo}/{host}" for name, host in sorted(url_variables(defaults).items())})
    out.update({name: f"{registry}/{upstream}" for name, upstream in sorted(registry_variables(defaults).items())})
    out["containerd_registries_mirrors"] = [{
        "prefix": registry,
        "server": f"http://{registry}",
        "mirrors": [{"host": f"http://{registry}", "capabilities": ["pull", "resolve"], "skip_verify": False}],
    }, {
        "prefix": KUBELAB_IMAGES, "server": f"https://{KUBELAB_IMAGES}",
        "mirrors": [{"host": f"http://{registry}/v2/{KUBELAB_IMAGES}", "capabilities": ["pull", "resolve"],
                     "skip_verify": False, "override_path": True}],
    }]
    out["unsafe_show_logs"] = True
    for key, value in (settings or {}).items():
        if key in out and out[key] != value:
            raise UsageError(f"install.variables: `{key}` is kubelab's to set: it points kubespray at the lab's "
                             "offline servers (file server, registry)")
        out[key] = value
    return out


def checksum_tables(defaults: Defaults, downloads: list[Download], sha256: Mapping[str, str],
                    arch: str = ARCH) -> dict:
    """The checksums file kubelab passes with `-e @checksums.yml`.

    sha256: {download name (kubeadm, runc, etcd, ...): hex sha256 of the file kubelab serves}.
    Each table a served file comes from is given whole for `arch` (extra vars replace a variable,
    they do not merge into it), upstream's rows kept, the served version's row replaced."""
    by_name = {d.name: d for d in downloads if d.kind == "file"}
    unknown = sorted(set(sha256) - set(by_name))
    if unknown:
        raise UsageError(f"checksums given for {', '.join(unknown)}, which kubespray {defaults.label} does not "
                         f"download here; its files: {', '.join(by_name) or 'none'}")
    tables: dict = {}
    for name in sorted(sha256):
        value = sha256[name].lower().removeprefix("sha256:")
        if not SHA256.match(value):
            raise UsageError(f"checksum for {name}: `{sha256[name]}` is not a sha256 (64 hex digits)")
        d = by_name[name]
        if not d.table or not d.version:
            raise UsageError(f"kubespray {defaults.label}: the checksum of {name} does not come from a "
                             "checksum table kubelab can override")
        key = _table_key(defaults.checksums.get(d.table, {}), arch)
        if d.table not in tables:
            upstream = defaults.checksums.get(d.table, {}).get(key) or {}
            tables[d.table] = {key: {str(k): v for k, v in upstream.items()}}
        tables[d.table][key][d.version] = f"sha256:{value}"
    return tables


def _table_key(table: Mapping, arch: str) -> str:
    """The table's key a file's row is under: the architecture, or `no_arch` for a file that is
    the same everywhere (calico_crds_checksums.no_arch, read so by roles/network_plugin/calico/
    tasks/check.yml and download.yml, v2.31.0-96-g46dbdd399)."""
    if arch not in table and "no_arch" in table:
        return "no_arch"
    return arch


def missing_checksums(downloads: list[Download], sha256: Mapping[str, str]) -> list[str]:
    """Files kubespray would fetch that kubelab has no checksum of its own for (it would fail there)."""
    return [d.name for d in downloads if d.kind == "file" and d.name not in sha256]


def dump(data: dict, header: str) -> str:
    """YAML for `-e @file`, with a comment saying what made it and from which checkout."""
    lines = "".join(f"# {line}\n" for line in header.splitlines())
    return lines + yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
