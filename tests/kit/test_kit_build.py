"""The kit on the host: version checks against the module proxy, the no-op rebuild,
damage detection, the built binaries, the OCI layouts and the read-only registry."""

import io
import json
import subprocess

import pytest

from harness.artifacts import kit as kits
from harness.artifacts import store
from harness.artifacts.versions import DEFAULT_KUBERNETES, KubeVersion
from harness.errors import UsageError
from harness.oci import build as oci_build
from harness.progress import Progress
from harness.serve import process, registry
from tests.kit import buildinfo

pytestmark = pytest.mark.artifacts


def recorded_progress():
    stream = io.StringIO()
    return Progress(stream=stream), stream


def test_an_unserved_version_is_refused_with_the_served_ones():
    with pytest.raises(UsageError) as info:
        kits.check_version("1.36.99")
    text = str(info.value)
    assert "k8s.io/kubernetes@v1.36.99 is not served by the Go module proxy" in text
    assert DEFAULT_KUBERNETES in text and "1.34.0" in text  # the default, and a served release of another minor


def test_a_version_outside_the_supported_minors_is_refused_before_asking_the_proxy():
    with pytest.raises(UsageError, match="kubelab builds Kubernetes 1.34, 1.35, 1.36, 1.37"):
        kits.check_version("1.30.4")


def test_building_again_is_a_no_op(kit):
    progress, out = recorded_progress()
    again = kits.build_kit(KubeVersion.parse(kit["kubernetes"]), progress)
    assert "go build" not in out.getvalue() and "push " not in out.getvalue()
    assert again["components"] == kit["components"] and again["images"] == kit["images"]


def test_a_damaged_store_entry_is_detected_and_rebuilt(kit):
    entry = kits.kit_entry(kit, "pause")
    entry.path("pause").write_bytes(b"not the pause binary")
    assert store.lookup(entry.key)[0] is None
    progress, out = recorded_progress()
    kits.build_kit(KubeVersion.parse(kit["kubernetes"]), progress)
    assert f"pause: store entry {entry.key[:store.KEY_LEN]} is damaged" in out.getvalue()
    rebuilt, problems = store.lookup(entry.key)
    assert problems == [] and rebuilt is not None
    assert subprocess.run([str(rebuilt.path("pause")), "-v"], capture_output=True, text=True).stdout.startswith(
        "kubelab pause 3.10.2")


def test_every_program_is_built_from_the_module_the_kit_asked_for(kit):
    """Read from the binaries' own build info (go version -m), not from the version kubelab stamps."""
    checked = []
    for name, component in kit["components"].items():
        entry = kits.kit_entry(kit, name)
        if entry.data["module"].startswith("kubelab "):  # pause: the project's own C program
            continue
        for output, package in entry.data["programs"].items():
            buildinfo.assert_built_from(entry.path(output), package, entry.data["module"].rpartition("@")[2])
            checked.append(package)
    assert "k8s.io/kubernetes/cmd/kubeadm" in checked and "k8s.io/kubernetes/cmd/kubelet" in checked


def test_binaries_report_the_kit_version(kit):
    """kubeadm picks its images by its own version: the stamp must say the release built (above)."""
    kubeadm = kits.kit_entry(kit, "kubeadm").path("kubeadm")
    assert subprocess.run([str(kubeadm), "version", "-o", "short"], capture_output=True, text=True).stdout.strip() \
        == kit["kubernetes"]
    kubelet = kits.kit_entry(kit, "kubelet").path("kubelet")
    assert subprocess.run([str(kubelet), "--version"], capture_output=True, text=True).stdout.strip() \
        == f"Kubernetes {kit['kubernetes']}"


def test_every_entry_names_module_go_flags_sha256_size_and_seconds(kit):
    for name in kit["components"]:
        d = kits.kit_entry(kit, name).data
        assert d["module"] and d["toolchain"] and isinstance(d["flags"], list)
        assert len(d["sha256"]) == 64 and d["size"] > 0 and d["build_seconds"] >= 0


def test_the_kit_images_are_exactly_kubeadms_list_plus_flannels_plus_the_toolbox(kit):
    assert sorted(kit["images"]) == sorted(kit["kubeadm_images"] + [kits.FLANNEL_IMAGE, kits.FLANNEL_CNI_IMAGE,
                                                                    kits.TOOLBOX_IMAGE])


EXPECTED_CONFIG = {  # from upstream's Dockerfiles, see harness/oci/catalog.py
    "kube-apiserver": (None, None, None),
    "kube-proxy": (None, None, None),
    "etcd": (None, None, ["/usr/local/bin/etcd"]),
    "coredns": (["/coredns"], "nonroot:nonroot", None),
    "pause": (["/pause"], "65535:65535", None),
    "flannel": (["/opt/bin/flanneld"], None, None),
}


@pytest.mark.parametrize("name", sorted(EXPECTED_CONFIG))
def test_image_config_matches_upstream(kit, name):
    ref = next(r for r in kit["images"] if r.rpartition(":")[0].endswith("/" + name))
    entry, _ = store.lookup(kit["images"][ref]["key"])
    tag = ref.rpartition(":")[2]
    out = subprocess.run(["skopeo", "inspect", "--config", f"oci:{entry.directory}:{tag}"], capture_output=True,
                         text=True, check=True)
    config = json.loads(out.stdout)["config"]
    entrypoint, user, cmd = EXPECTED_CONFIG[name]
    assert config.get("Entrypoint") == entrypoint
    assert config.get("User") == user
    assert config.get("Cmd") == cmd


def _post(url: str) -> tuple[int, str, str]:
    """A push's first request (start a blob upload): status, Allow header, body."""
    import urllib.error
    import urllib.request

    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy
    try:
        with direct.open(urllib.request.Request(url, method="POST"), timeout=30) as r:
            return r.status, r.headers.get("Allow", ""), r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("Allow", ""), err.read().decode()


def test_the_registry_serves_every_image_read_only(kit, tmp_path):
    storage = kit["registry"]
    port = registry.free_port()
    daemon = registry.start(__import__("pathlib").Path(storage) / "data", "127.0.0.1", port, tmp_path)
    try:
        for ref, img in kit["images"].items():
            info = json.loads(subprocess.run(
                ["skopeo", "inspect", "--tls-verify=false", f"docker://127.0.0.1:{port}/{ref}"],
                capture_output=True, text=True, check=True).stdout)
            assert info["Digest"] == img["manifest"], ref
        pause = next(r for r in kit["images"] if "/pause:" in r)
        entry, _ = store.lookup(kit["images"][pause]["key"])
        push = subprocess.run(["skopeo", "copy", "--dest-tls-verify=false", f"oci:{entry.directory}:3.10.2",
                               f"docker://127.0.0.1:{port}/kubelab/should-not-land:1"], capture_output=True, text=True)
        # read-only, the registry itself refuses: distribution v2.8.2 registers no POST on the upload
        # route then (registry/handlers/blobupload.go blobUploadDispatcher, `if !ctx.readOnly`), and
        # gorilla's MethodHandler answers 405 with the methods it has. A wrong tag or a TLS error
        # fails the push too, but not with this status.
        # skopeo's own words for it: "initiating layer upload to /v2/<repo>/blobs/uploads/ in <host>: StatusCode: 405,
        # Method not allowed" (the registry's body)
        assert push.returncode != 0 and "blobs/uploads/" in push.stderr and \
            "StatusCode: 405, Method not allowed" in push.stderr, push.stderr
        status, allow, body = _post(f"http://127.0.0.1:{port}/v2/kubelab/should-not-land/blobs/uploads/")
        assert (status, allow, body.strip()) == (405, "GET, HEAD", "Method not allowed")
    finally:
        assert process.stop(daemon)
    assert not daemon.alive()


def test_an_image_layout_records_its_debian_userland(kit):
    ref = next(r for r in kit["images"] if "/kube-proxy:" in r)
    entry, _ = store.lookup(kit["images"][ref]["key"])
    packages = entry.data["image"]["packages"]
    assert "iptables" in packages and "libc6" in packages
    # kube-proxy's IPVS mode (kubespray's default) needs ipset and modprobe, as upstream's
    # distroless-iptables carries them; the build ran both before the layer was written
    assert "ipset" in packages and "kmod" in packages
    assert oci_build.inspect(entry)["Digest"] == kit["images"][ref]["manifest"]


def test_flannel_manifest_is_upstreams_object_for_object(kit):
    """kubelab renders flannel's manifest itself; upstream's file, read from the Go module
    cache (never copied), must have the same objects, field for field, with the default Network."""
    import json as _json
    from pathlib import Path

    import yaml

    from harness.artifacts import gotool
    from harness.artifacts.versions import FLANNEL
    from harness.provisioners import flannel

    info = gotool.download("github.com/flannel-io/flannel", FLANNEL)
    upstream = [d for d in yaml.safe_load_all((Path(info["Dir"]) / "Documentation/kube-flannel.yml").read_text()) if d]
    ours = flannel.objects("10.244.0.0/16", kits.FLANNEL_IMAGE, kits.FLANNEL_CNI_IMAGE)

    def normal(obj):  # the ConfigMap's JSON documents compared as data, not as text
        obj = _json.loads(_json.dumps(obj))
        if obj["kind"] == "ConfigMap":
            obj["data"] = {k: _json.loads(v) for k, v in obj["data"].items()}
        return obj

    assert [normal(o) for o in ours] == [normal(o) for o in upstream]
    # the lab's one difference: flanneld told its interface (no default route in the lab)
    lab = flannel.objects("10.244.0.0/16", kits.FLANNEL_IMAGE, kits.FLANNEL_CNI_IMAGE, iface="eth0")
    lab_args = lab[5]["spec"]["template"]["spec"]["containers"][0]["args"]
    upstream_args = upstream[5]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert lab_args == upstream_args + ["--iface=eth0"]
    lab[5]["spec"]["template"]["spec"]["containers"][0]["args"] = upstream_args
    assert [normal(o) for o in lab] == [normal(o) for o in upstream]
    pods = flannel.objects("172.20.0.0/16", kits.FLANNEL_IMAGE, kits.FLANNEL_CNI_IMAGE)
    assert _json.loads(pods[4]["data"]["net-conf.json"])["Network"] == "172.20.0.0/16"
