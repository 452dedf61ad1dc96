"""The Kubernetes kit on a real guest: a 1-node lab from the sid node image, its
registry and file server on the lab network, and nothing left after lab.down."""

import json
import re

import pytest

from harness import lifecycle
from harness.artifacts import kit as kits
from harness.artifacts.versions import KubeVersion
from harness.remote.ssh import SshRemote
from harness.serve import process

from .helpers import objects_of, unique_lab_name

pytestmark = [pytest.mark.vm, pytest.mark.artifacts]


@pytest.fixture(scope="module")
def lab(libvirt_backend, sid_node_image, kit):
    spec = lifecycle.plan_lab(1, "sid", 2, 2048, unique_lab_name("kit"), kubernetes=kit["kubernetes"])
    spec = type(spec)(**{**spec.__dict__, "preload": True})
    the_lab = lifecycle.up(spec)
    yield the_lab
    if the_lab.directory.exists():
        lifecycle.down(the_lab.name)


@pytest.fixture(scope="module")
def node(lab):
    with SshRemote(lab.ssh_target("node1")) as remote:
        yield remote


def test_the_lab_boots_the_node_image(lab, sid_node_image, kit):
    assert lab.state["image"]["id"] == sid_node_image.id
    assert sid_node_image.manifest["kubernetes"]["kubeadm"] == kit["kubernetes"]
    # its build pulled every kit image through the lab registry with crictl
    assert sid_node_image.manifest["preloaded"] == sorted(kit["images"])


def test_kubeadm_kubelet_and_kubectl_report_the_kit_version(node, kit):
    assert node.run("kubeadm version -o short", timeout=120, check=True).stdout.strip() == kit["kubernetes"]
    assert node.run("kubelet --version", timeout=120, check=True).stdout.strip() == f"Kubernetes {kit['kubernetes']}"
    client = json.loads(node.run("kubectl version --client -o json", timeout=120, check=True).stdout)
    assert client["clientVersion"]["gitVersion"] == kit["kubernetes"]
    release = KubeVersion.parse(kit["kubernetes"])
    assert (client["clientVersion"]["major"], client["clientVersion"]["minor"]) == (str(release.major), str(release.minor))


def test_kubelet_unit_and_drop_in_are_installed_and_enabled(node):
    assert node.run("systemctl is-enabled kubelet", check=True).stdout.strip() == "enabled"
    cat = node.run("systemctl cat kubelet", check=True).stdout
    assert "/lib/systemd/system/kubelet.service.d/10-kubeadm.conf" in cat
    assert "EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env" in cat
    # kubelab's one difference: no restart loop before kubeadm writes the kubelet's config
    assert "ConditionPathExists=/var/lib/kubelet/config.yaml" in cat
    state = node.run("systemctl show kubelet -p ActiveState -p NRestarts -p ConditionResult", check=True).stdout
    assert "ConditionResult=no" in state and "NRestarts=0" in state, state


def test_every_kit_image_pulls_through_the_mirror(lab, node, kit):
    # kubeadm's own list, asked in the guest, plus the flannel manifest's images
    listed = node.run(f"kubeadm config images list --kubernetes-version {kit['kubernetes']}", timeout=180,
                      check=True).stdout.split()
    assert listed == kit["kubeadm_images"]
    refs = listed + [kits.FLANNEL_IMAGE, kits.FLANNEL_CNI_IMAGE]
    # preloaded, so only the resolution goes to the registry; the node image's own build
    # pulled every layer the same way (test_the_lab_boots_the_node_image)
    for ref in refs:
        r = node.run(f"crictl pull {ref}", timeout=600)
        assert r.ok, f"crictl pull {ref}: {r.stdout}{r.stderr}"
    images = node.run("crictl images -o json", check=True).stdout
    got = {tag for img in json.loads(images)["images"] for tag in img["repoTags"]}
    assert set(refs) <= got
    # ... and they came from the lab registry, not from anywhere else
    log = open(lab.state["services"]["registry"]["log"]).read()
    for ref in refs:
        repo, tag = ref.rsplit(":", 1)
        # containerd adds ?ns=<upstream host> to mirror requests (remotes/docker/resolver.go)
        assert re.search(rf'"(GET|HEAD) /v2/{re.escape(repo)}/manifests/{re.escape(tag)}\?ns=[^ "]+ HTTP', log), ref


def test_mirror_config_is_at_the_path_of_that_containerd(node):
    dump = node.run("containerd config dump", check=True).stdout
    # sid's containerd is 2.x: the images plugin of config version 3 holds config_path
    assert re.search(r"\[plugins\.'io\.containerd\.cri\.v1\.images'\.registry\]\n\s+config_path = '/etc/containerd/certs\.d'",
                     dump), dump[:2000]
    hosts = node.run("cat /etc/containerd/certs.d/registry.k8s.io/hosts.toml", check=True).stdout
    assert 'server = "https://registry.k8s.io"' in hosts


def test_the_guest_still_has_no_default_route(lab, node):
    assert node.run("ip route show default", check=True).stdout.strip() == ""
    assert node.run("ip -6 route show default", check=True).stdout.strip() == ""
    subnet = lab.state["network"]["subnet"]
    assert all(subnet in line for line in node.run("ip -4 route", check=True).stdout.splitlines())


def test_the_file_server_serves_the_kit_binaries(lab, node, kit):
    url = f"http://kubelab-host:8080/release/{kit['kubernetes']}/bin/linux/amd64/kubeadm"
    got = node.run(f"curl -fsS {url} | sha256sum", timeout=300, check=True).stdout.split()[0]
    assert got == kit["components"]["kubeadm"]["sha256"]


def test_the_file_server_serves_kubesprays_paths_with_the_sha256_kubelab_hands_it(node, kit):
    """What kubespray fetches below files_repo (download.yml's kubeadm/kubelet/kubectl_download_url,
    cni_download_url and crictl_download_url, kubespray v2.31.0), from a guest, against the sha256
    the kubespray track puts in its checksums file (harness/kubespray/serving.py)."""
    from pathlib import Path

    from harness.artifacts import components
    from harness.kubespray.serving import sha256_of

    tree = Path(kit["files"])
    cni = kit["components"]["cni-plugins"]["module"].rpartition("@")[2]
    crictl = kit["components"]["crictl"]["module"].rpartition("@")[2]
    wanted = [f"dl.k8s.io/release/{kit['kubernetes']}/bin/linux/amd64/{c}" for c in components.KUBERNETES_COMMANDS]
    wanted += [f"github.com/containernetworking/plugins/releases/download/{cni}/cni-plugins-linux-amd64-{cni}.tgz",
               f"github.com/kubernetes-sigs/cri-tools/releases/download/{crictl}/crictl-{crictl}-linux-amd64.tar.gz"]
    handed = sha256_of({path: tree / path for path in wanted})
    for path in wanted:
        got = node.run(f"curl -fsS http://kubelab-host:8080/{path} | sha256sum", timeout=300, check=True).stdout
        assert got.split()[0] == handed[path], path
    listed = node.run(f"curl -fsS http://kubelab-host:8080/{wanted[-1]} | tar -tzf -", timeout=120, check=True).stdout
    assert listed.split() == ["crictl"]


def test_servers_listen_on_the_lab_network_only(lab):
    gateway = lab.state["network"]["gateway"]
    for name, state in lab.state["services"].items():
        assert state["url"].startswith(f"http://{gateway}:"), (name, state["url"])
        assert process.Daemon.from_state(state).alive()
    assert process.listening(gateway, 5000) and process.listening(gateway, 8080)
    assert not process.listening("127.0.0.1", 5000)  # the lab network only, not every address


def test_lab_down_stops_the_servers_and_leaves_nothing(lab):
    daemons = [process.Daemon.from_state(s) for s in lab.state["services"].values()]
    lifecycle.down(lab.name)
    assert objects_of(lab.name) == []
    assert not any(d.alive() for d in daemons)
    gateway = lab.state["network"]["gateway"]
    assert not process.listening(gateway, 5000) and not process.listening(gateway, 8080)
    from harness.serve import lab as services

    assert services.orphans(keep_labs=set()) == []
