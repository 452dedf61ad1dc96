"""What a kit is built from: one Component per `go build` target group. Pure data.

A component builds one or more programs from one upstream module, inside a
wrapper module (gomod.py) that it may share with other components of the same
module. Everything that can change the output is in `inputs()`, which is what
the store is addressed by.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from . import gomod
from .versions import CNI_PLUGINS, FLANNEL, FLANNEL_CNI_PLUGIN_MODULE, FLANNEL_EXTRA_REQUIRES, KubeVersion

# The Go toolchain must never be swapped behind our back (a `go 1.27` line fails loudly).
BASE_ENV = {"GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod -buildvcs=false", "GOOS": "linux", "GOARCH": "amd64"}
KUBERNETES_COMMANDS = ("kubeadm", "kubelet", "kubectl", "kube-apiserver", "kube-controller-manager",
                       "kube-scheduler", "kube-proxy")
# No component but flanneld needs cgo. Upstream links the 1.34-1.37 kubelet against glibc; it
# becomes static (CGO_ENABLED=0) upstream in 1.38 (kubernetes#135870), which is what
# kubelab does for every minor: the lab has local users only, so os/user's
# /etc/passwd-only lookup is enough.
CGO = "0"
CNI_PROGRAMS = ("main/bridge", "main/host-device", "main/ipvlan", "main/loopback", "main/macvlan",
                "main/ptp", "main/vlan", "main/dummy", "main/tap", "ipam/host-local", "ipam/static",
                "ipam/dhcp", "meta/bandwidth", "meta/firewall", "meta/portmap", "meta/sbr",
                "meta/tuning", "meta/vrf")


def _env(cgo: str = CGO) -> tuple[tuple[str, str], ...]:
    return tuple(sorted({**BASE_ENV, "CGO_ENABLED": cgo}.items()))


@dataclass(frozen=True)
class Program:
    package: str  # Go import path
    output: str  # file name in the artifact


@dataclass(frozen=True)
class Component:
    name: str
    module: str
    version: str
    wrapper: str  # name of the wrapper module directory (shared by components of one module@version)
    gomod_text: str
    programs: tuple[Program, ...]
    ldflags: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default_factory=lambda: _env())
    note: str = ""
    # built in the exported tree of a git tag (git_source.py) instead of a wrapper module; what
    # the store key and the manifest record of it: {upstream, tag, commit} (+ repository)
    tree: str = ""
    source: dict | None = None
    copies: tuple[tuple[str, str], ...] = ()  # (path in the tree, name in the entry): files an image needs

    @property
    def module_at(self) -> str:
        return f"{self.module}@{self.version}"

    def flags(self) -> list[str]:
        """The `go build` flags, in the order given (without -o and the package)."""
        out = ["-trimpath"]
        if self.tags:
            out += ["-tags", ",".join(self.tags)]
        out += ["-ldflags", " ".join(("-s", "-w") + self.ldflags)]
        return out

    def inputs(self, go_version: str) -> dict:
        out = {
            "component": self.name, "module": self.module_at, "go": go_version, "env": dict(self.env),
            "flags": self.flags(), "programs": [[p.package, p.output] for p in self.programs],
            "go.mod": self.gomod_text,
        }
        if self.source:  # where the clone is does not change what is built; the commit does
            out["source"] = {k: self.source[k] for k in ("upstream", "tag", "commit")}
            out["copies"] = [list(c) for c in self.copies]
        return out

    def key(self, go_version: str) -> str:
        blob = json.dumps(self.inputs(go_version), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()


def _go_line(upstream_line: str) -> str:
    """Wrapper go line: upstream's, but at least 1.24 (the first with `tool` lines)."""
    parts = tuple(int(x) for x in upstream_line.split(".")[:2])
    return upstream_line if parts >= (1, 24) else "1.24.0"


def kubernetes(version: KubeVersion, kubernetes_gomod: str, build_date: str) -> list[Component]:
    text = gomod.kubernetes_wrapper(version, kubernetes_gomod, list(KUBERNETES_COMMANDS))
    flags = tuple(gomod.kubernetes_version_flags(version, build_date))
    return [
        Component(name=c, module="k8s.io/kubernetes", version=version.tag, wrapper=f"kubernetes-{version.tag}",
                  gomod_text=text, programs=(Program(f"k8s.io/kubernetes/cmd/{c}", c),), ldflags=flags)
        for c in KUBERNETES_COMMANDS
    ]


def etcd(version: str, upstream_go_line: str) -> Component:
    """etcd, etcdctl and etcdutl, as in upstream's image (etcd-io/etcd Dockerfile). The
    server module is its own main package; its go.mod replaces siblings with ../, which
    a dependency ignores, so the siblings resolve at the versions it requires."""
    mods = {name: f"go.etcd.io/etcd/{name}/v3" for name in ("server", "etcdctl", "etcdutl")}
    text = gomod.wrapper({m: version for m in mods.values()}, list(mods.values()), _go_line(upstream_go_line))
    return Component(name="etcd", module=mods["server"], version=version, wrapper=f"etcd-{version}",
                     gomod_text=text,
                     programs=(Program(mods["server"], "etcd"), Program(mods["etcdctl"], "etcdctl"),
                               Program(mods["etcdutl"], "etcdutl")),
                     note=f"etcdctl and etcdutl from their modules at {version}")


def coredns(version: str, upstream_go_line: str) -> Component:
    """Upstream's Makefile pins GOTOOLCHAIN, so it is not used; its flags are:
    CGO_ENABLED=0, -tags grpcnotrace (coredns Makefile)."""
    mod = "github.com/coredns/coredns"
    return Component(name="coredns", module=mod, version=version, wrapper=f"coredns-{version}",
                     gomod_text=gomod.wrapper({mod: version}, [mod], _go_line(upstream_go_line)),
                     programs=(Program(mod, "coredns"),), tags=("grpcnotrace",))


def flannel(upstream_go_line: str, version: str = FLANNEL) -> Component:
    """flanneld as upstream's Makefile builds it on amd64: with cgo (main imports the UDP
    backend, whose amd64 code is C) and linked statically; netgo/osusergo keep name and
    user lookups in Go, so the static binary never needs glibc's NSS at run time."""
    mod = "github.com/flannel-io/flannel"
    return Component(name="flannel", module=mod, version=version, wrapper=f"flannel-{version}",
                     gomod_text=gomod.wrapper({mod: version, **FLANNEL_EXTRA_REQUIRES}, [mod],
                                              _go_line(upstream_go_line)),
                     programs=(Program(mod, "flanneld"),), tags=("netgo", "osusergo"),
                     ldflags=(f"-X {mod}/pkg/version.Version={version}", "-extldflags=-static"),
                     env=_env(cgo="1"),
                     note="the wrapper requires " + ", ".join(f"{m}@{v}" for m, v in FLANNEL_EXTRA_REQUIRES.items())
                          + " (the version flannel asks for is not served)")


def flannel_cni_plugin(upstream_go_line: str) -> Component:
    mod, version = FLANNEL_CNI_PLUGIN_MODULE
    return Component(
        name="flannel-cni-plugin", module=mod, version=version, wrapper=f"cni-plugins-{version}",
        gomod_text=gomod.wrapper({mod: version}, [f"{mod}/plugins/meta/flannel"], _go_line(upstream_go_line)),
        programs=(Program(f"{mod}/plugins/meta/flannel", "flannel"),),
        ldflags=(f"-X {mod}/pkg/utils/buildversion.BuildVersion={version}",),
        tags=("netgo", "osusergo"),
        note="github.com/flannel-io/cni-plugin is not served by the module proxy; the same plugin "
             f"from {mod}@{version} plugins/meta/flannel, its last release there",
    )


def cni_plugins(upstream_go_line: str, version: str = CNI_PLUGINS) -> Component:
    mod = "github.com/containernetworking/plugins"
    programs = tuple(Program(f"{mod}/plugins/{p}", p.split("/")[1]) for p in CNI_PROGRAMS)
    return Component(name="cni-plugins", module=mod, version=version, wrapper=f"cni-plugins-{version}",
                     gomod_text=gomod.wrapper({mod: version}, [p.package for p in programs],
                                              _go_line(upstream_go_line)),
                     programs=programs, tags=("netgo", "osusergo"),
                     ldflags=(f"-X {mod}/pkg/utils/buildversion.BuildVersion={version}",))


def crictl(version: str, upstream_go_line: str) -> Component:
    mod = "sigs.k8s.io/cri-tools"
    return Component(name="crictl", module=mod, version=version, wrapper=f"cri-tools-{version}",
                     gomod_text=gomod.wrapper({mod: version}, [f"{mod}/cmd/crictl"], _go_line(upstream_go_line)),
                     programs=(Program(f"{mod}/cmd/crictl", "crictl"),),
                     ldflags=(f"-X {mod}/pkg/version.Version={version}",))


def containerd(version: str, upstream_go_line: str) -> list[Component]:
    """containerd and ctr, and the runc shim, as upstream's Makefile builds them
    (containerd/containerd Makefile @ v2.2.9): tags `urfave_cli_no_docs`, the shim also
    `no_grpc` and with cgo off (SHIM_CGO_ENABLED ?= 0); version stamped into
    $(PKG)/version. cgo is off for containerd too: the only cgo part is the btrfs
    snapshotter, which `no_btrfs` leaves out (the lab uses overlayfs)."""
    mod = "github.com/containerd/containerd/v2"
    text = gomod.wrapper({mod: version}, [f"{mod}/cmd/{c}" for c in ("containerd", "ctr", "containerd-shim-runc-v2")],
                         _go_line(upstream_go_line))
    stamp = (f"-X {mod}/version.Version={version}", f"-X {mod}/version.Package={mod}")
    wrapper_name = f"containerd-{version}"
    return [
        Component(name="containerd", module=mod, version=version, wrapper=wrapper_name, gomod_text=text,
                  programs=(Program(f"{mod}/cmd/containerd", "containerd"), Program(f"{mod}/cmd/ctr", "ctr")),
                  ldflags=stamp, tags=("urfave_cli_no_docs", "no_btrfs")),
        Component(name="containerd-shim-runc-v2", module=mod, version=version, wrapper=wrapper_name,
                  gomod_text=text, programs=(Program(f"{mod}/cmd/containerd-shim-runc-v2", "containerd-shim-runc-v2"),),
                  ldflags=stamp, tags=("urfave_cli_no_docs", "no_grpc")),
    ]


def runc(version: str, upstream_go_line: str) -> Component:
    """runc as upstream's Makefile builds its release binary (`make static`, runc v1.4.3): cgo
    on, tags `seccomp urfave_cli_no_docs netgo osusergo`, linked statically against Debian's
    libseccomp (libseccomp-dev, which scripts/setup installs). Upstream links a static PIE on
    amd64 (`-buildmode=pie -linkmode external -extldflags -static-pie`); kubelab links the plain
    static binary of the Makefile's other platforms. The version comes from the module's own
    VERSION file (go:embed); `main.gitCommit` stays empty, as a module carries no git."""
    mod = "github.com/opencontainers/runc"
    return Component(name="runc", module=mod, version=version, wrapper=f"runc-{version}",
                     gomod_text=gomod.wrapper({mod: version}, [mod], _go_line(upstream_go_line)),
                     programs=(Program(mod, "runc"),),
                     tags=("seccomp", "urfave_cli_no_docs", "netgo", "osusergo"),
                     ldflags=("-extldflags=-static",), env=_env(cgo="1"))


# -- from a git tag (git_source.py): projects whose module path the proxy does not serve -----
def _from_tree(name: str, tree: "Tree", programs: tuple[Program, ...], ldflags: tuple[str, ...] = (),
               copies: tuple[tuple[str, str], ...] = (), note: str = "") -> Component:
    """Built inside the tagged tree with its own go.mod, from its `vendor/` where it keeps one."""
    env = dict(_env())
    if tree.vendored:
        env["GOFLAGS"] = "-mod=vendor -buildvcs=false"
    return Component(name=name, module=tree.module, version=tree.tag, wrapper="", gomod_text="",
                     programs=programs, ldflags=ldflags, env=tuple(sorted(env.items())), note=note,
                     tree=str(tree.path), source=tree.record, copies=copies)


@dataclass(frozen=True)
class Tree:
    """An exported tagged tree (git_source.tree) as a component sees it."""
    path: str
    module: str
    tag: str
    record: dict  # repository, upstream, tag, commit
    vendored: bool

    @property
    def commit(self) -> str:
        return self.record["commit"]


def nerdctl(tree: Tree) -> Component:
    """nerdctl as upstream's Makefile builds it (containerd/nerdctl Makefile @ v2.3.0): cgo off,
    no build tags, `$(PACKAGE)/pkg/version.Version` the tag and `.Revision` the commit. Built
    from the tag, not the module proxy: cmd/nerdctl needs mod/tigron, a module nested in the
    repository (go.mod: `replace ... => ./mod/tigron`) that the proxy does not serve."""
    mod = tree.module
    return _from_tree("nerdctl", tree, (Program(f"{mod}/cmd/nerdctl", "nerdctl"),),
                      ldflags=(f"-X {mod}/pkg/version.Version={tree.tag}", f"-X {mod}/pkg/version.Revision={tree.commit}"))


def node_cache(tree: Tree) -> Component:
    """nodelocaldns's node-cache as kubernetes/dns build/build.sh builds it: CGO_ENABLED=0,
    `-X ${PKG}/pkg/version.VERSION=${VERSION}` (the tag, `git describe --tags`), from vendor/."""
    return _from_tree("node-cache", tree, (Program(f"{tree.module}/cmd/node-cache", "node-cache"),),
                      ldflags=(f"-X {tree.module}/pkg/version.VERSION={tree.tag}",))


def autoscaler(tree: Tree) -> Component:
    """cluster-proportional-autoscaler as its build/build.sh builds it: CGO_ENABLED=0,
    `-X $(go list -m)/pkg/version.Version=${VERSION}` (the tag), from vendor/. The variable in
    pkg/version is `VERSION`, so upstream's stamp sets nothing and `--version` prints its
    default, UNKNOWN, in upstream's binary as in this one (v1.8.8); the tag is in the record."""
    name = "cluster-proportional-autoscaler"
    return _from_tree(name, tree, (Program(f"{tree.module}/cmd/{name}", name),),
                      ldflags=(f"-X {tree.module}/pkg/version.Version={tree.tag}",))


def calico(tree: Tree) -> Component:
    """calico's programs as its lib.Makefile builds them, but with CGO_ENABLED=0: libbpf's calls
    are then `!cgo` stubs that panic, so felix runs with the switch that keeps it off them in the
    VXLAN data plane (cni/calico.py NODE_ENV; the eBPF data plane cannot run);
    `-X .../pkg/buildinfo.Version` the tag (`git describe --tags`) and `.GitRevision` the commit.
    One component: calico-node, the CNI plugin (also run as calico-ipam) and its installer,
    kube-controllers with its wrapper and status check, and calicoctl; with node/filesystem, the
    CRD file kubespray downloads and the VXLAN manifest the kubeadm track applies."""
    mod = tree.module
    info = f"{mod}/pkg/buildinfo"
    programs = (Program(f"{mod}/node/cmd/calico-node", "calico-node"), Program(f"{mod}/cni-plugin/cmd/calico", "calico"),
                Program(f"{mod}/cni-plugin/cmd/install", "install"),
                Program(f"{mod}/kube-controllers/cmd/kube-controllers", "kube-controllers"),
                Program(f"{mod}/kube-controllers/cmd/check-status", "check-status"),
                Program(f"{mod}/kube-controllers/cmd/wrapper", "wrapper"),
                Program(f"{mod}/calicoctl/calicoctl", "calicoctl"))
    return _from_tree("calico", tree, programs,
                      ldflags=(f"-X {info}.Version={tree.tag}", f"-X {info}.GitRevision={tree.commit}"),
                      copies=tuple((f"node/{f}", f) for f in calico_node_files(tree))
                      + (("manifests/crds.yaml", "crds.yaml"), ("manifests/calico-vxlan.yaml", "calico-vxlan.yaml")))


def calico_node_files(tree: Tree) -> list[str]:
    """node/filesystem's files (`filesystem/...`): the scripts runit starts and their configuration,
    which calico-node's image carries (node/Dockerfile.amd64 copies them to /etc and /usr/sbin)."""
    root = Path(tree.path) / "node"
    return sorted(p.relative_to(root).as_posix() for p in (root / "filesystem").rglob("*")
                  if p.is_file() and not p.name.startswith("."))
