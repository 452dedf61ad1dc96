"""The images of a kit: which binaries, where, as which user, on which userland.

Paths, users, entrypoints and working directories follow upstream's images,
so kubeadm's static pods, its kube-proxy DaemonSet and CoreDNS Deployment, and
flannel's manifest run them unchanged:

- kube-apiserver, -controller-manager, -scheduler: binary at /usr/local/bin/<name>,
  root; kube-apiserver carries cap_net_bind_service=+ep (kubernetes
  build/server-image/Dockerfile and kube-apiserver/Dockerfile). Upstream's base
  image sets ENTRYPOINT /go-runner (kubernetes/release images/build/go-runner);
  that module is not served by the module proxy, so these images have no
  entrypoint: kubeadm's manifests always give `command`.
- kube-proxy: /usr/local/bin/kube-proxy on an iptables userland with ipset and kmod's
  modprobe, root, no entrypoint (distroless-iptables, which stages the ipset, iptables and
  kmod packages: kubernetes/release images/build/distroless-iptables/distroless-trixie/
  Dockerfile; kube-proxy's IPVS mode, kubespray's default, runs `ipset --version` and
  `modprobe ip_vs`).
- etcd: /usr/local/bin/{etcd,etcdctl,etcdutl}, WORKDIR /var/lib/etcd/,
  CMD ["/usr/local/bin/etcd"], root (etcd-io/etcd Dockerfile @ v3.6.8; since
  3.6.5 registry.k8s.io/etcd:X-0 is a copy of that image).
- coredns: /coredns with cap_net_bind_service=+ep, USER nonroot:nonroot,
  ENTRYPOINT ["/coredns"] (coredns/coredns Dockerfile @ v1.14.2).
- pause: /pause alone, USER 65535:65535, ENTRYPOINT ["/pause"] (kubernetes build/pause/Dockerfile).
- flannel: /opt/bin/flanneld on an iptables userland plus `cp` (v0.28.4's
  install-cni init container runs `cp -f /etc/kube-flannel/cni-conf.json
  /etc/cni/net.d/10-flannel.conflist`), ENTRYPOINT ["/opt/bin/flanneld"], root
  (flannel images/Dockerfile and Documentation/kube-flannel.yml @ v0.28.4).
- flannel-cni-plugin: /flannel plus `cp` (the init container runs `cp -f
  /flannel /opt/cni/bin/flannel`), no entrypoint (flannel-io/cni-plugin Dockerfile.image).

- nginx (kubespray's workers' local API proxy, loadbalancer_apiserver_type: nginx): Debian's
  nginx with its stream module, which Debian ships as a dynamic module. kubespray's static pod
  (roles/kubernetes/node/templates/manifests/nginx-proxy.manifest.j2, master 46dbdd39) gives no
  command and mounts the host's /etc/nginx over the image's, so the module is loaded from the
  command line, as `daemon off;` is in upstream's CMD (nginxinc/docker-nginx Dockerfile:
  CMD ["nginx", "-g", "daemon off;"], STOPSIGNAL SIGQUIT); nginx opens its compiled-in paths
  (/run/nginx.pid, /var/lib/nginx/*, /var/log/nginx/error.log) before it reads the config, and,
  started as root without a `user` directive, switches its workers to nobody:nogroup. Built
  under the tag kubespray asks for (its alpine tag), with Debian's release in the store record.

- kubelab.local/toolbox: busybox (Debian's busybox-static) for the cluster
  probes: `nslookup` for DNS from a pod, `httpd` answering with the pod's
  name for the Service proof, `wget` as the client. kubelab's own image,
  under kubelab's own registry name.

Userland comes from Debian's packages (debs.py); the small base layer
(passwd, group, /tmp) is written here, in the shape of distroless's.
"""

from __future__ import annotations

from dataclasses import dataclass

from .layout import CAP_NET_BIND_SERVICE, DEFAULT_PATH, ImageConfig, file_capability

BIN = "/usr/local/bin"


@dataclass(frozen=True)
class Binary:
    component: str  # kit component whose store entry holds it
    name: str  # file name in that entry
    dest: str  # absolute path in the image
    bind_low_ports: bool = False  # cap_net_bind_service=+ep, as upstream's setcap

    @property
    def xattrs(self):
        return (("security.capability", file_capability(CAP_NET_BIND_SERVICE)),) if self.bind_low_ports else ()


@dataclass(frozen=True)
class ImageRecipe:
    ref: str
    binaries: tuple[Binary, ...]
    config: ImageConfig
    userland: tuple[str, ...] = ()  # names in USERLANDS, unpacked into one layer
    base: bool = True  # kubelab's base layer (passwd, group, /tmp)
    dirs: tuple[tuple[str, int], ...] = ()  # extra empty directories (path, mode)
    groups: tuple[str, ...] = ()  # /etc/group lines beyond the base layer's
    owned: tuple[tuple[str, int], ...] = ()  # empty files (path, owner uid and gid) a non-root user writes

    @property
    def group_file(self) -> str:
        return GROUP + "".join(f"{line}\n" for line in self.groups)

    @property
    def name(self) -> str:
        return self.ref.rpartition(":")[0].rpartition("/")[2]


# Debian packages (with their Depends) for each userland, and what must run in it.
USERLANDS = {
    "iptables": (("iptables",), (["/usr/sbin/iptables", "--version"], ["/usr/sbin/iptables-restore", "--version"])),
    "busybox": (("busybox-static",), (["/bin/cp", "--help"],)),
    "ipvs": (("ipset", "kmod"), (["/usr/sbin/ipset", "--version"], ["/sbin/modprobe", "--version"])),
    "nginx": (("nginx", "libnginx-mod-stream"), (["/usr/sbin/nginx", "-V"],)),
    # calico-node's runit services and what their scripts and felix call (node/Dockerfile.amd64
    # installs runit, iptables legacy and nft, ipset, iproute with tc, conntrack-tools, kmod,
    # procps, which, net-tools, findutils); Debian's iptables carries both backends
    "calico-node": (("dash", "bash", "coreutils", "debianutils", "runit", "ipset", "iproute2", "conntrack", "kmod",
                     "procps", "findutils", "sed", "grep", "net-tools"),
                    # runsvdir has no version flag (it would run); start_runit finds it with `which`
                    (["/usr/bin/which", "runsvdir", "svlogd", "sv"], ["/sbin/ip", "-V"],
                     ["/usr/sbin/conntrack", "--version"], ["/bin/bash", "--version"],
                     ["/usr/sbin/ipset", "--version"], ["/sbin/modprobe", "--version"])),
}
# The iptables package's postinst picks the nft backend through update-alternatives
# (Debian's default since buster, and what bookworm, trixie and sid guests use).
IPTABLES_LINKS = {f"/usr/sbin/{family}{suffix}": f"{family}-nft{suffix}"
                  for family in ("iptables", "ip6tables") for suffix in ("", "-save", "-restore")}
# Links a package's postinst makes through update-alternatives, which unpacking skips: per userland.
# debianutils' `which` (Debian 12 on: /usr/bin/which -> which.debianutils)
ALTERNATIVES = {"iptables": IPTABLES_LINKS, "calico-node": {"/usr/bin/which": "which.debianutils"}}


TOOLBOX_IMAGE = "kubelab.local/toolbox:1"
NGINX_STREAM_MODULE = "/usr/lib/nginx/modules/ngx_stream_module.so"  # libnginx-mod-stream


def nginx_proxy(ref: str) -> ImageRecipe:
    """The workers' API proxy kubespray deploys, under kubespray's own ref for it."""
    return ImageRecipe(ref, (), ImageConfig(cmd=("/usr/sbin/nginx", "-g",
                                                  f"load_module {NGINX_STREAM_MODULE}; daemon off;"),
                                             stop_signal="SIGQUIT"),
                       userland=("nginx",), groups=("nogroup:x:65534:",),
                       dirs=(("/run", 0o755), ("/var/lib/nginx", 0o755), ("/var/log/nginx", 0o755)))


def node_cache(ref: str) -> ImageRecipe:
    """nodelocaldns: /node-cache on an iptables userland, ENTRYPOINT ["/node-cache"], root
    (kubernetes/dns Dockerfile.node-cache @ 1.25.0, FROM distroless-iptables)."""
    return ImageRecipe(ref, (Binary("node-cache", "node-cache", "/node-cache"),),
                       ImageConfig(entrypoint=("/node-cache",)), userland=("iptables",))


def dns_autoscaler(ref: str) -> ImageRecipe:
    """/cluster-proportional-autoscaler alone, ENTRYPOINT itself, HOME=/, distroless/static:nonroot's
    user (kubernetes-sigs/cluster-proportional-autoscaler Dockerfile.in and Makefile @ v1.8.8)."""
    name = "cluster-proportional-autoscaler"
    return ImageRecipe(ref, (Binary(name, name, f"/{name}"),),
                       ImageConfig(entrypoint=(f"/{name}",), user="nonroot:nonroot", env=(DEFAULT_PATH, "HOME=/")))


def _calico_file(name: str) -> str:
    """Where node/filesystem's files go in calico-node's image: sbin/* to /usr/sbin, the rest at
    its place (node/Dockerfile.amd64: COPY filesystem/etc/ /etc, filesystem/sbin/* /usr/sbin/)."""
    inside = name.removeprefix("filesystem/")
    return "/usr/sbin/" + inside.removeprefix("sbin/") if inside.startswith("sbin/") else "/" + inside


def calico_node(ref: str, files: list[str]) -> ImageRecipe:
    """calico-node: /bin/calico-node, node/filesystem's scripts and configuration, runit's
    runsvdir as the command (CMD ["start_runit"], ENV SVDIR=/etc/service/enabled), root.
    `files`: the calico entry's filesystem/ files."""
    return ImageRecipe(ref, (Binary("calico", "calico-node", "/bin/calico-node"),)
                       + tuple(Binary("calico", f, _calico_file(f)) for f in sorted(files)),
                       ImageConfig(cmd=("start_runit",), env=(DEFAULT_PATH, "SVDIR=/etc/service/enabled")),
                       userland=("iptables", "calico-node"), dirs=(("/var/log/calico", 0o755),))


CALICO_CNI_BIN = "/opt/cni/bin"
# the containernetworking plugins calico's CNI image carries (cni-plugin/Makefile CN_FILES);
# upstream builds them from its fork, kubelab takes the kit's
CALICO_CNI_PLUGINS = ("host-local", "portmap", "loopback", "tuning")


def calico_cni(ref: str) -> ImageRecipe:
    """The CNI plugin and its installer: /opt/cni/bin/{calico, calico-ipam, install} and the
    plugins above; PATH starts with /opt/cni/bin, WORKDIR there, CMD ["/opt/cni/bin/install"]
    (calico cni-plugin/Dockerfile @ v3.31.7). calico-ipam is the same program (it acts by its name)."""
    return ImageRecipe(ref, (Binary("calico", "calico", f"{CALICO_CNI_BIN}/calico"),
                             Binary("calico", "calico", f"{CALICO_CNI_BIN}/calico-ipam"),
                             Binary("calico", "install", f"{CALICO_CNI_BIN}/install"))
                       + tuple(Binary("cni-plugins", p, f"{CALICO_CNI_BIN}/{p}") for p in CALICO_CNI_PLUGINS),
                       ImageConfig(cmd=(f"{CALICO_CNI_BIN}/install",), workdir=CALICO_CNI_BIN,
                                   env=(f"PATH={CALICO_CNI_BIN}:" + DEFAULT_PATH.removeprefix("PATH="),)))


def calico_kube_controllers(ref: str) -> ImageRecipe:
    """kube-controllers under its wrapper, user 999, /status/status.json and /profiles/*.pprof
    owned by it (calico kube-controllers/Dockerfile @ v3.31.7)."""
    return ImageRecipe(ref, tuple(Binary("calico", b, f"/usr/bin/{b}") for b in ("kube-controllers", "check-status",
                                                                              "wrapper")),
                       ImageConfig(entrypoint=("/usr/bin/wrapper", "/usr/bin/kube-controllers"), user="999"),
                       dirs=(("/status", 0o755), ("/profiles", 0o755)),
                       owned=(("/status/status.json", 999), ("/profiles/mem.pprof", 999),
                              ("/profiles/cpu.pprof", 999)))


def recipes(kubeadm_refs: list[str], flannel_ref: str, flannel_cni_ref: str) -> list[ImageRecipe]:
    by_name = {r.rpartition(":")[0].rpartition("/")[2]: r for r in kubeadm_refs}

    def control(name: str, low_ports: bool = False) -> ImageRecipe:
        return ImageRecipe(by_name[name], (Binary(name, name, f"{BIN}/{name}", low_ports),), ImageConfig())

    return [
        control("kube-apiserver", low_ports=True),
        control("kube-controller-manager"),
        control("kube-scheduler"),
        ImageRecipe(by_name["kube-proxy"], (Binary("kube-proxy", "kube-proxy", f"{BIN}/kube-proxy"),),
                    ImageConfig(), userland=("iptables", "ipvs")),
        ImageRecipe(by_name["etcd"], tuple(Binary("etcd", b, f"{BIN}/{b}") for b in ("etcd", "etcdctl", "etcdutl")),
                    ImageConfig(cmd=(f"{BIN}/etcd",), workdir="/var/lib/etcd/"),
                    dirs=(("/var/etcd", 0o755), ("/var/lib/etcd", 0o700))),
        ImageRecipe(by_name["coredns"], (Binary("coredns", "coredns", "/coredns", bind_low_ports=True),),
                    ImageConfig(entrypoint=("/coredns",), user="nonroot:nonroot")),
        ImageRecipe(by_name["pause"], (Binary("pause", "pause", "/pause"),),
                    ImageConfig(entrypoint=("/pause",), user="65535:65535"), base=False),
        ImageRecipe(flannel_ref, (Binary("flannel", "flanneld", "/opt/bin/flanneld"),),
                    ImageConfig(entrypoint=("/opt/bin/flanneld",)), userland=("iptables", "busybox")),
        ImageRecipe(flannel_cni_ref, (Binary("flannel-cni-plugin", "flannel", "/flannel"),),
                    ImageConfig(), userland=("busybox",)),
        ImageRecipe(TOOLBOX_IMAGE, (), ImageConfig(cmd=("sh",)), userland=("busybox",), dirs=(("/www", 0o755),)),
    ]


# distroless's users: root, nobody, nonroot (65532).
PASSWD = ("root:x:0:0:root:/root:/sbin/nologin\n"
          "nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"
          "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")
GROUP = "root:x:0:\ntty:x:5:\nstaff:x:50:\nnobody:x:65534:\nnonroot:x:65532:\n"
NSSWITCH = "passwd: files\ngroup: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n"
