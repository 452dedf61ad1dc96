"""The image the kubespray track makes beyond the kit (harness/kubespray/extras.py): the workers'
API proxy, Debian's nginx under the ref kubespray pulls. Made here without a checkout (the ref
is kubespray master 46dbdd39's nginx_image_repo:nginx_image_tag); its unpacked layers run as
kubespray's static pod would run them, and it is pushed beside the kit's images."""

import json
import signal
import socket
import socketserver
import subprocess
import tarfile
import threading
import time
import urllib.request

import pytest

from harness.kubespray import extras
from harness.oci import catalog
from harness.progress import Progress
from harness.serve import process, registry

pytestmark = pytest.mark.artifacts

REF = "docker.io/library/nginx:1.30.1-alpine"  # roles/kubespray_defaults/defaults/main/download.yml @ 46dbdd39


@pytest.fixture(scope="module")
def layout():
    return extras.make_image("nginx", REF, Progress(quiet=True))


def _blob(layout, digest: str):
    return layout / "blobs" / "sha256" / digest.removeprefix("sha256:")


def _manifest(layout) -> dict:
    [m] = json.loads((layout / "index.json").read_text())["manifests"]
    return json.loads(_blob(layout, m["digest"]).read_text())


def _config(layout) -> dict:
    """The image config's `config`: what containerd runs it with."""
    return json.loads(_blob(layout, _manifest(layout)["config"]["digest"]).read_text())["config"]


class _Echo(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.sendall(b"apiserver says: " + self.request.recv(64))


def _wait_port(port: int, proc, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"nginx exited {proc.returncode}: {proc.stderr.read()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing listened on 127.0.0.1:{port} within {seconds} s")


def test_the_image_runs_without_a_command_as_kubesprays_static_pod_gives_none(layout):
    """nginx-proxy.manifest.j2 gives no command: the image's own must load the stream module
    (a dynamic module in Debian) and stay in the foreground; containerd stops it with SIGQUIT
    (nginx's graceful stop), as upstream's image says."""
    config = _config(layout)
    assert config["Cmd"] == ["/usr/sbin/nginx", "-g", f"load_module {catalog.NGINX_STREAM_MODULE}; daemon off;"]
    assert config["StopSignal"] == "SIGQUIT" and "Entrypoint" not in config


def test_unpacked_it_proxies_the_api_port_and_answers_healthz_as_nobody(layout, tmp_path):
    """The layers unpacked in order, the host's /etc/nginx replaced by a config in the shape
    kubespray's nginx.conf.j2 has (stream upstream to the control plane, an http server for
    /healthz, `aio threads`), run with the image's Cmd in a chroot on loopback."""
    root = tmp_path / "root"
    for layer in _manifest(layout)["layers"]:
        with tarfile.open(_blob(layout, layer["digest"])) as tar:
            tar.extractall(root, filter="fully_trusted")
    upstream = socketserver.TCPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    proxy, health = registry.free_port(), registry.free_port()
    (root / "etc/nginx").mkdir(parents=True, exist_ok=True)
    (root / "etc/nginx/nginx.conf").write_text(f"""
error_log stderr notice;
worker_processes 2;
events {{ worker_connections 64; }}
stream {{
  upstream kube_apiserver {{ least_conn; server 127.0.0.1:{upstream.server_address[1]}; }}
  server {{ listen 127.0.0.1:{proxy}; proxy_pass kube_apiserver; proxy_connect_timeout 1s; }}
}}
http {{
  aio threads;
  server {{ listen 127.0.0.1:{health}; location /healthz {{ access_log off; return 200; }} }}
}}
""")
    nginx = subprocess.Popen(["chroot", str(root), *_config(layout)["Cmd"]], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        _wait_port(health, nginx)
        with urllib.request.urlopen(f"http://127.0.0.1:{health}/healthz", timeout=10) as answer:
            assert answer.status == 200
        with socket.create_connection(("127.0.0.1", proxy), timeout=10) as conn:
            conn.sendall(b"hello")
            assert conn.recv(64) == b"apiserver says: hello"
        workers = subprocess.run(["ps", "-o", "user=,group=,args=", "--ppid", str(nginx.pid)],
                                 capture_output=True, text=True, timeout=10).stdout.splitlines()
        assert workers and all(w.split()[:2] == ["nobody", "nogroup"] and "worker process" in w for w in workers)
    finally:
        nginx.send_signal(signal.SIGQUIT)
        try:
            nginx.wait(timeout=30)
        finally:
            if nginx.poll() is None:
                nginx.kill()
            upstream.shutdown()
    assert nginx.returncode == 0


def test_pushed_beside_a_kits_images_it_is_served_under_kubesprays_ref(layout, tmp_path):
    """registry.add into a populated storage: the kit's record keeps its images, the added one is
    listed apart, and a read-only registry over the storage serves it by kubespray's ref."""
    storage = tmp_path / "storage"
    storage.mkdir()
    (storage / registry.POPULATED).write_text(json.dumps({"digest": "test", "images": {}}))
    pushed = registry.add(storage, {REF: layout}, Progress(quiet=True))
    assert registry.served(storage) == pushed and list(pushed) == [REF]
    assert registry.add(storage, {REF: layout}, Progress(quiet=True)) == pushed  # nothing pushed twice
    port = registry.free_port()
    daemon = registry.start(storage / "data", "127.0.0.1", port, tmp_path / "serve")
    try:
        said = subprocess.run(["skopeo", "inspect", "--tls-verify=false", f"docker://127.0.0.1:{port}/{REF}"],
                              capture_output=True, text=True, timeout=120)
        assert said.returncode == 0, said.stderr
        assert json.loads(said.stdout)["Digest"] == pushed[REF]
    finally:
        process.stop(daemon)
