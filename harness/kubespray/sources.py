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

from ..artifacts.containerd import in_series as containerd_series
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
    version_variable: str = ""      # the kubespray variable that picks its release
    builds_here: str = ""           # a release measured to build here, offered when the pin does not


# download name in kubespray's `downloads:` -> where the lab would make it
SOURCES: dict[str, Source] = {
    "etcd": Source(modules=("go.etcd.io/etcd/server/v3",), recipe=True),
    "runc": Source(modules=("github.com/opencontainers/runc",), recipe=True),
    "containerd": Source(modules=("github.com/containerd/containerd/v2",), recipe=True,
                         releases=containerd_series, releases_said="2.2-2.4"),
    # kubespray master 46dbdd39 pins 2.3.0, which the proxy refuses here. Measured on 2026-12-04
    # with go 1.26.8: 2.2.0, 2.2.1 and 2.3.1 are served but cmd/nerdctl imports pkg/testutil, which
    # needs github.com/containerd/nerdctl/mod/tigron, a module nested in nerdctl's repository (its
    # go.mod: `replace ... => ./mod/tigron`) that the proxy does not serve; 2.0.5 builds (146 s).
    "nerdctl": Source(
        modules=("github.com/containerd/nerdctl/v2",), recipe=True, version_variable="nerdctl_version",
        builds_here="2.0.5",
        kept_because="kubespray's containerd role depends on container-engine/nerdctl "
                     "(roles/container-engine/containerd/meta/main.yml) and download.yml enables "
                     "`nerdctl` whenever container_manager is containerd"),
    # node-cache is k8s.io/dns's cmd/node-cache (kubernetes/dns go.mod: module k8s.io/dns)
    "nodelocaldns": Source(modules=("k8s.io/dns",), leave_out={"enable_nodelocaldns": False}),
    # the module was renamed when the project moved from kubernetes-incubator to kubernetes-sigs
    "dnsautoscaler": Source(modules=("sigs.k8s.io/cluster-proportional-autoscaler",
                                     "github.com/kubernetes-sigs/cluster-proportional-autoscaler",
                                     "github.com/kubernetes-incubator/cluster-proportional-autoscaler"),
                            leave_out={"enable_dns_autoscaler": False}),
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
                instead = (f"; kubelab builds {d.name} {source.builds_here} (measured to build here): set "
                           f"`install.variables: {{{source.version_variable}: {source.builds_here}}}` in the scenario"
                           if source.builds_here and source.version_variable else f"; {_leave_out(source)}")
                out.append(Gap(d, False, "cannot be built here: not served by the Go module proxy: "
                                         + "; ".join(answers) + instead))
    return out


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
