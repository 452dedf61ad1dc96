"""What kubespray would download for a Kubernetes version, read from the checkout's own list.

Sources in the checkout (paths as of kubespray v2.31.0 and master 46dbdd39):

    roles/kubespray_defaults/defaults/main/download.yml   `downloads:` (every file and image, with
                                                          `enabled`, `url`, `repo`, `tag`, `groups`)
                                                          and the URL, version and image variables
    roles/kubespray_defaults/defaults/main/main.yml       kube_version, container_manager, ...
    roles/kubespray_defaults/vars/main/main.yml           kube_major_version, pod_infra/etcd per minor
    roles/kubespray_defaults/vars/main/checksums.yml      the sha256 tables, {arch: {version: sha256}}

kubespray's default `kube_version` is the first key of `kubelet_checksums.amd64`;
its validate_inventory role asserts kube_version is a key of the kubeadm,
kubelet and kubectl tables. Files are fetched by `get_url` with
`checksum: sha256:<table value>`; images are pulled by repo:tag.

kubeadm's own images are not in `downloads:`: roles/download/tasks/prep_kubeadm_images.yml
runs `kubeadm config images list` and drops coredns and pause; for the
configuration it writes (kubeadm-images.yaml.j2) that is kube-apiserver,
kube-controller-manager, kube-scheduler and kube-proxy at v<kube_version> below
`kubeadm_image_repo`, plus etcd when `etcd_deployment_type` is `kubeadm`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from .template import Checksum, Scope, Table, TemplateError, Undefined, load_yaml, version_key

DOWNLOAD_FILE = "roles/kubespray_defaults/defaults/main/download.yml"
DEFAULTS_FILE = "roles/kubespray_defaults/defaults/main/main.yml"
VARS_FILE = "roles/kubespray_defaults/vars/main/main.yml"
CHECKSUMS_FILE = "roles/kubespray_defaults/vars/main/checksums.yml"
KUBE_TABLES = ("kubeadm_checksums", "kubelet_checksums", "kubectl_checksums")
KUBEADM_IMAGES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy")
ARCH = "amd64"

# A Debian amd64 guest as Ansible's facts describe it: host_architecture is a `{% %}` block in
# the defaults (main.yml), so it is given here as what it evaluates to on such a guest.
GUEST_FACTS = {"ansible_facts": {"system": "Linux", "architecture": "x86_64", "os_family": "Debian"},
               "host_architecture": ARCH, "host_os": "linux"}


@dataclass(frozen=True)
class Download:
    name: str                       # the key in `downloads:` (kubeadm images: kubeadm_<image>)
    kind: str                       # "file" or "image"
    groups: tuple[str, ...]         # inventory groups whose hosts fetch it
    url: str | None = None          # files: upstream URL as kubespray builds it
    sha256: str | None = None       # files: the table's value, hex
    table: str | None = None        # files: the checksum table it came from (kubeadm_checksums)
    version: str | None = None      # files: that table's key
    repo: str | None = None         # images
    tag: str | None = None

    @property
    def path(self) -> str | None:
        """A file's place below files_repo: the URL without its scheme (the offline doc's tip:
        the original domains as top folders), e.g. dl.k8s.io/release/v1.36.4/bin/linux/amd64/kubeadm."""
        return self.url.split("://", 1)[-1] if self.url else None

    @property
    def file_name(self) -> str | None:
        return self.url.rsplit("/", 1)[-1] if self.url else None

    @property
    def image(self) -> str | None:
        return f"{self.repo}:{self.tag}" if self.repo else None


class Defaults:
    """kubespray's download-related variables, read from a checkout (or any folder with the same files)."""

    def __init__(self, root: Path, label: str = ""):
        self.root = root
        self.label = label or str(root)
        self.download = self._read(DOWNLOAD_FILE)
        self.defaults = self._read(DEFAULTS_FILE)
        self.role_vars = self._read(VARS_FILE)
        # a release outside a table is one kubelab adds a row for (offline.checksum_tables)
        self.checksums = {k: Table(k, v, grows=True) for k, v in self._read(CHECKSUMS_FILE).items()
                          if isinstance(v, dict)}
        if not isinstance(self.download.get("downloads"), dict):
            raise UsageError(f"{root / DOWNLOAD_FILE}: no `downloads:` mapping; kubelab cannot tell "
                             f"what kubespray {self.label} downloads")

    def _read(self, relative: str) -> dict:
        f = self.root / relative
        if not f.exists():
            raise UsageError(f"kubespray {self.label}: {f} is missing")
        try:
            return load_yaml(f.read_text(), str(f))
        except TemplateError as exc:
            raise UsageError(str(exc)) from exc

    # -- the version table ---------------------------------------------------
    def supported(self, arch: str = ARCH) -> dict[str, list[str]]:
        """{table: versions} for kubeadm, kubelet and kubectl, in the table's order (newest first)."""
        return {t: list(self.checksums.get(t, {}).get(arch, {}) or []) for t in KUBE_TABLES}

    def supported_versions(self, arch: str = ARCH) -> list[str]:
        """Kubernetes versions all three tables carry, newest first."""
        tables = self.supported(arch)
        common = set.intersection(*(set(v) for v in tables.values()))
        return sorted(common, key=version_key, reverse=True)

    def default_kube_version(self) -> str:
        return str(self.scope({}).get("kube_version"))

    def supported_summary(self, arch: str = ARCH) -> str:
        """The versions of its tables as ranges: `1.34.0-1.34.6, 1.35.0-1.35.3, ...`."""
        return _ranges(self.supported_versions(arch)) or "none"

    def check_version(self, kube_version: str, arch: str = ARCH) -> None:
        lacking = [t for t, versions in self.supported(arch).items() if kube_version not in versions]
        if lacking:
            have = self.supported_summary(arch)
            raise UsageError(
                f"Kubernetes {kube_version} is not in kubespray {self.label}'s checksum tables "
                f"({self.root / CHECKSUMS_FILE}: no {', '.join(f'{t}.{arch}' for t in lacking)} entry "
                f"{kube_version!r}); it supports {have}. Use one of those versions, or another kubespray")

    # -- evaluation ------------------------------------------------------------
    def scope(self, settings: Mapping, checksums: Mapping[str, Table] | None = None) -> Scope:
        """Ansible's order, lowest first: role defaults, guest facts, role vars, extra vars.
        `settings` are what kubelab passes as extra vars, so they win over role vars."""
        return Scope([self.defaults, self.download, GUEST_FACTS, self.role_vars,
                      dict(self.checksums), dict(checksums or {}), dict(settings)])

    def resolve(self, kube_version: str | None = None, settings: Mapping | None = None) -> list[Download]:
        """Every enabled file and image for `kube_version` (kubespray's default when None) with
        `settings` (inventory and extra vars kubelab sets: container_manager, kube_network_plugin ...)."""
        settings = dict(settings or {})
        if kube_version is not None:
            settings["kube_version"] = kube_version
        scope = self.scope(settings)
        version = str(scope.get("kube_version"))
        self.check_version(version)
        entries = self.download["downloads"]
        out = []
        for name, entry in entries.items():
            field = _Fields(scope, name, entry, self.label)
            if not _truthy(field.get("enabled", False)):
                continue
            groups = tuple(field.get("groups", []) or [])
            if _truthy(field.get("file", False)):
                checksum = field.get("checksum")
                sha = str(checksum).removeprefix("sha256:") if checksum else None
                url = _web_url(str(field.get("url")), name, self.label)
                out.append(Download(name=name, kind="file", groups=groups, url=url, sha256=sha,
                                    table=getattr(checksum, "table", None), version=getattr(checksum, "version", None)))
            elif _truthy(field.get("container", False)):
                out.append(Download(name=name, kind="image", groups=groups,
                                    repo=str(field.get("repo")), tag=str(field.get("tag"))))
        out.extend(self._kubeadm_images(scope))
        return out

    def _kubeadm_images(self, scope: Scope) -> list[Download]:
        def var(n):
            return _get(scope, n, "kubeadm images", self.label)

        # `skip_kubeadm_images | default(false)`, as prep_kubeadm_images.yml reads it
        if _truthy(scope.get("skip_kubeadm_images")):
            return []
        repo, version = var("kubeadm_image_repo"), var("kube_version")
        images = [Download(name=f"kubeadm_{n.replace('-', '_')}", kind="image", groups=("k8s_cluster",),
                           repo=f"{repo}/{n}", tag=f"v{version}") for n in KUBEADM_IMAGES]
        if var("etcd_deployment_type") == "kubeadm":
            images.append(Download(name="kubeadm_etcd", kind="image", groups=("k8s_cluster",),
                                   repo=str(var("etcd_image_repo")), tag=str(var("etcd_image_tag"))))
        return images


class _Fields:
    """One `downloads:` entry, its fields evaluated on demand (a disabled entry's url is never read)."""

    def __init__(self, scope: Scope, name: str, entry, label: str):
        self.scope, self.name, self.entry, self.label = scope, name, entry or {}, label

    def get(self, key: str, default=None):
        if key not in self.entry:
            return default
        try:
            value = self.scope.render(self.entry[key])
        except TemplateError as exc:
            raise UsageError(f"kubespray {self.label}, {DOWNLOAD_FILE}: downloads.{self.name}.{key}: {exc}") from exc
        return value.strip() if isinstance(value, str) and not isinstance(value, Checksum) else value


def _web_url(url: str, name: str, label: str) -> str:
    """A file's URL, which becomes a path below the lab's file server: http(s), a host, no `..`."""
    scheme, _, rest = url.partition("://")
    if scheme not in ("http", "https") or not rest or rest.startswith("/") or ".." in rest.split("/"):
        raise UsageError(f"kubespray {label}: downloads.{name}.url is `{url}`; kubelab serves a file at its "
                         "http(s) URL's host and path (check the scenario's install.variables)")
    return url


def _get(scope: Scope, name: str, what: str, label: str):
    try:
        value = scope.get(name)
    except TemplateError as exc:
        raise UsageError(f"kubespray {label}: {what}: {exc}") from exc
    if isinstance(value, Undefined):
        raise UsageError(f"kubespray {label}: {what}: `{name}` is not defined")
    return value


def _truthy(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "on", "1")
    return bool(value) and not isinstance(value, Undefined)


def _ranges(versions: list[str]) -> str:
    """'1.34.0-1.34.11, 1.35.0-1.35.8' from a version list: one span per minor."""
    by_minor: dict[str, list[str]] = {}
    for v in versions:
        by_minor.setdefault(".".join(v.split(".")[:2]), []).append(v)
    spans = []
    for minor in sorted(by_minor, key=version_key):
        vs = sorted(by_minor[minor], key=version_key)
        spans.append(vs[0] if len(vs) == 1 else f"{vs[0]}-{vs[-1]}")
    return ", ".join(spans)
