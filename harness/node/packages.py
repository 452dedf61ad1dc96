"""What the upstream kubeadm, kubelet, kubectl, cri-tools and kubernetes-cni packages
put on a node, written by kubelab (the kit has the binaries, not the packages).

Texts and paths as in kubernetes/release cmd/krel/templates/latest/ (kubelet.service,
kubeadm/10-kubeadm.conf, *.spec) at f618b2a3: binaries in /usr/bin, units in
/lib/systemd/system (the deb macros' %_unitdir), the drop-in's
/etc/sysconfig/kubelet rewritten to /etc/default/kubelet for deb, CNI plugins
in /opt/cni/bin, and the kubelet enabled.

One difference, kubelab's own drop-in: the packages leave the kubelet
restarting every 10 s until kubeadm writes its config. Under TCG each of those
starts of a 100 MB Go program cost a waiting node about half a host core
(measured: a worker waiting to join took 58 % of a core beside a control plane
starting up). The drop-in makes the kubelet wait for that config instead;
`kubeadm init` and `join` write it and restart the kubelet, which then starts.
"""

from __future__ import annotations

from dataclasses import dataclass

KUBELET_SERVICE = """[Unit]
Description=kubelet: The Kubernetes Node Agent
Documentation=https://kubernetes.io/docs/
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=/usr/bin/kubelet
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
"""

KUBEADM_DROPIN = """# Note: This dropin only works with kubeadm and kubelet v1.11+
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
# This is a file that "kubeadm init" and "kubeadm join" generates at runtime, populating the KUBELET_KUBEADM_ARGS variable dynamically
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
# This is a file that the user can use for overrides of the kubelet args as a last resort. Preferably, the user should use
# the .NodeRegistration.KubeletExtraArgs object in the configuration files instead. KUBELET_EXTRA_ARGS should be sourced from this file.
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
"""

# kubelab's drop-in (see above); `systemctl status kubelet` says "start condition unmet" until then.
WAIT_FOR_CONFIG_DROPIN = """# kubelab: start once kubeadm has written the kubelet's config (instead of restarting every 10 s)
[Unit]
ConditionPathExists=/var/lib/kubelet/config.yaml
"""

# crictl talks to containerd without guessing endpoints (it warns and tries several otherwise).
CRICTL_YAML = "runtime-endpoint: unix:///run/containerd/containerd.sock\nimage-endpoint: unix:///run/containerd/containerd.sock\ntimeout: 30\n"

UNIT_DIR = "/lib/systemd/system"
CNI_DIR = "/opt/cni/bin"


@dataclass(frozen=True)
class NodeFile:
    path: str
    content: str
    mode: int = 0o644


def files() -> list[NodeFile]:
    return [
        NodeFile(f"{UNIT_DIR}/kubelet.service", KUBELET_SERVICE),
        NodeFile(f"{UNIT_DIR}/kubelet.service.d/10-kubeadm.conf", KUBEADM_DROPIN),
        NodeFile("/etc/systemd/system/kubelet.service.d/05-kubelab-wait-for-config.conf", WAIT_FOR_CONFIG_DROPIN),
        NodeFile("/etc/default/kubelet", "KUBELET_EXTRA_ARGS=\n"),
        NodeFile("/etc/crictl.yaml", CRICTL_YAML),
    ]


# Directories the kubelet package owns, and the CNI config folder kubernetes-cni owns.
DIRECTORIES = ("/etc/kubernetes/manifests", "/var/lib/kubelet", "/etc/cni/net.d", CNI_DIR)

# (kit component, file in its store entry, path on the node)
BINARIES = (
    ("kubeadm", "kubeadm", "/usr/bin/kubeadm"),
    ("kubelet", "kubelet", "/usr/bin/kubelet"),
    ("kubectl", "kubectl", "/usr/bin/kubectl"),
    ("crictl", "crictl", "/usr/bin/crictl"),
)
