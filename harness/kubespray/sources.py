"""Where the lab would get each kubespray download the kit does not serve, and what a user can
do about one that cannot be made here.

Every file and image the lab serves is built locally: Go programs from their released modules
through the module proxy, userland from Debian's packages. So "not in the kit" has two meanings
that a user must be told apart: a download kubelab could build (its module is served) but does not
yet, and one that cannot be built on this machine at all (its module is not served), for which
the only way on is the kubespray variable that leaves it out, where one exists.

The module proxy is asked at preflight, never a list kept here: a module served tomorrow makes its
download buildable without a change to kubelab. Which module builds which download is upstream
fact (each project's go.mod); which variable leaves a download out is kubespray's
(roles/kubespray_defaults/defaults/main/download.yml, `enabled:` of each entry, master 46dbdd39).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..artifacts import git_source
from ..artifacts.containerd import in_series as containerd_series
from ..errors import UsageError
from ..oci import catalog
from .downloads import Download


@dataclass(frozen=True)
class Source:
    modules: tuple[str, ...] = ()   # Go module paths that build it (it is made when any one is served)
    debian: str = ""                # or a Debian package it is made from
    leave_out: Mapping = None       # kubespray variables that leave it out of the play, if any
    kept_because: str = ""          # where none does: why kubespray always fetches it
    recipe: bool = False            # kubelab builds the file from its module (extras.py)
    image: Callable[[str], catalog.ImageRecipe] | None = None  # or makes the image from `debian` under kubespray's ref
    releases: Callable[[str], bool] | None = None  # the releases its recipe builds (None: any served)
    releases_said: str = ""
    git: git_source.GitSource | None = None  # or built from a clone of its repository at the release's tag
    instead: str = ""               # a scenario setting (not a variable) that leaves it out


# calico is the scenario's `install.cni`, which sets kube_network_plugin (the loader refuses the variable)
CALICO_INSTEAD = "set `install.cni: flannel` in the scenario"

# download name in kubespray's `downloads:` -> where the lab would make it
SOURCES: dict[str, Source] = {
    "etcd": Source(modules=("go.etcd.io/etcd/server/v3",), recipe=True),
    "runc": Source(modules=("github.com/opencontainers/runc",), recipe=True),
    "containerd": Source(modules=("github.com/containerd/containerd/v2",), recipe=True,
                         releases=containerd_series, releases_said="2.2-2.4"),
    # The Go module proxy does not serve these (nerdctl 2.3.0 is refused; cmd/nerdctl of every
    # release needs mod/tigron, a module nested in the repository; k8s.io/dns, the autoscaler and
    # calico's monorepo are not served at all): each is built from a clone at kubespray's tag.
    "nerdctl": Source(git=git_source.NERDCTL, recipe=True,
                      kept_because="kubespray's containerd role depends on container-engine/nerdctl "
                                   "(roles/container-engine/containerd/meta/main.yml) and download.yml enables "
                                   "`nerdctl` whenever container_manager is containerd"),
    "nodelocaldns": Source(git=git_source.NODE_CACHE, image=catalog.node_cache,
                           leave_out={"enable_nodelocaldns": False}),
    "dnsautoscaler": Source(git=git_source.AUTOSCALER, image=catalog.dns_autoscaler,
                            leave_out={"enable_dns_autoscaler": False}),
    # kube_network_plugin: calico, kubespray's default; calicoctl and the CRD file are files,
    # the rest images (typha and the API server are off by default: download.yml `enabled:`)
    "calicoctl": Source(git=git_source.CALICO, recipe=True, instead=CALICO_INSTEAD),
    "calico_crds": Source(git=git_source.CALICO, recipe=True, instead=CALICO_INSTEAD),
    "calico_node": Source(git=git_source.CALICO, image=catalog.calico_node, instead=CALICO_INSTEAD),
    "calico_cni": Source(git=git_source.CALICO, image=catalog.calico_cni, instead=CALICO_INSTEAD),
    "calico_policy": Source(git=git_source.CALICO, image=catalog.calico_kube_controllers,
                            leave_out={"enable_network_policy": False}),
    # the workers' local API proxy (loadbalancer_apiserver_type: nginx, kubespray's default)
    "nginx": Source(debian="nginx", image=catalog.nginx_proxy, leave_out={"loadbalancer_apiserver_localhost": False}),
}


@dataclass(frozen=True)
class Gap:
    download: Download
    buildable: bool | None      # None: kubelab has no recipe and no idea where it would come from
    reason: str

    def line(self) -> str:
        what = f"file {self.download.name}: {self.download.path}" if self.download.kind == "file" \
            else f"image {self.download.name}: {self.download.image}"
        return f"{what}\n      {self.reason}"


def module_version(d: Download) -> str:
    """The release a download is of, as a Go module version (v3.6.14, v1.25.0)."""
    return "v" + str(d.version or d.tag or "").lstrip("v")


def _leave_out(source: Source) -> str:
    if source.instead:
        return f"to go on without it, {source.instead}"
    if source.leave_out:
        setting = ", ".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}"
                            for k, v in source.leave_out.items())
        return f"to go on without it, set `install.variables: {{{setting}}}` in the scenario"
    return f"kubespray cannot leave it out: {source.kept_because}" if source.kept_because else \
        "no kubespray variable leaves it out"


def gaps(missing: list[Download], served: Callable[[str, str], tuple[bool, str]], build_hint: str = "") -> list[Gap]:
    """Each missing download, told apart: buildable here (not built yet) or not (and what to do).

    served(module, version) -> (served?, the proxy's answer when not); build_hint: the command that
    builds kubelab's recipes now (e.g. `invoke artifacts.build --kubernetes 1.36.3 --kubespray PATH`)."""
    out = []
    for d in missing:
        source = SOURCES.get(d.name)
        if source is None:
            out.append(Gap(d, None, "kubelab has no recipe for it"))
        elif source.git:
            out.append(_from_git(d, source, build_hint))
        elif source.debian and source.image:
            now = f" ({build_hint} builds it now)" if build_hint else ""
            out.append(Gap(d, True, f"made from Debian's `{source.debian}` package; kubelab builds it once nothing "
                                    f"else is missing{now}"))
        elif source.debian:
            out.append(Gap(d, True, f"can be made from Debian's `{source.debian}` package; kubelab does not "
                                    f"build it yet; {_leave_out(source)}"))
        else:
            version, answers = module_version(d), []
            for module in source.modules:
                ok, answer = served(module, version)
                if ok:
                    out.append(_servable(d, source, f"{module}@{version}", build_hint))
                    break
                answers.append(f"{module}@{version}" + (f" ({answer})" if answer else ""))
            else:
                out.append(Gap(d, False, "cannot be built here: not served by the Go module proxy: "
                                         + "; ".join(answers) + f"; {_leave_out(source)}"))
    return out


def _from_git(d: Download, source: Source, build_hint: str) -> Gap:
    """Buildable when a clone with the release's tag is given; else what is wrong and how to give it."""
    version = release(d)
    try:
        found = git_source.resolve(source.git, source.git.tag(version))
    except UsageError as exc:
        return Gap(d, False, f"{exc}; or, {_leave_out(source)}")
    now = f" ({build_hint} builds it now)" if build_hint else ""
    return Gap(d, True, f"built from {found.path} at {found.tag} ({found.commit[:12]}); kubelab builds it once "
                        f"nothing else is missing{now}")


def release(d: Download) -> str:
    """The upstream release a download is of, without a leading v (3.31.7, 1.25.0)."""
    return str(d.version or d.tag or "").lstrip("v")


def _servable(d: Download, source: Source, module_at: str, build_hint: str) -> Gap:
    """A download whose module is served: kubelab builds it where it has the recipe for this
    kind and release, otherwise it is buildable in principle but not by kubelab yet."""
    if source.recipe and d.kind == "file" and (source.releases is None or source.releases(module_version(d))):
        now = f" ({build_hint} builds it now)" if build_hint else ""
        return Gap(d, True, f"{module_at} is served by the Go module proxy; kubelab builds it once nothing else "
                            f"is missing{now}")
    if source.recipe and d.kind == "file":
        return Gap(d, False, f"{module_at} is served by the Go module proxy, but kubelab builds {d.name} "
                             f"{source.releases_said} only")
    return Gap(d, True, f"{module_at} is served by the Go module proxy; kubelab does not build it yet"
                        + (" as an image" if d.kind == "image" and source.recipe else ""))


# what the module proxy (or go) says for a module version it does not have; anything else (no
# route, no name resolution, a timeout) is not an answer about the module at all
NOT_SERVED = ("not available", "403 forbidden", "404 not found", "410 gone", "unknown revision",
              "invalid version", "no matching versions")


def proxy_answer(module: str, version: str) -> tuple[bool, str]:
    """Ask the module proxy (through `go mod download`) whether it serves module@version; a proxy
    that cannot be asked is a host problem, never "not served"."""
    from ..artifacts import gotool
    from ..errors import HostError, UsageError

    try:
        gotool.download(module, version)
        return True, ""
    except UsageError as exc:
        said = str(exc).rsplit(": ", 1)[-1].strip()
        if any(marker in str(exc).lower() for marker in NOT_SERVED):
            return False, said
        raise HostError(f"cannot ask the Go module proxy whether it serves {module}@{version}: {exc}") from None
