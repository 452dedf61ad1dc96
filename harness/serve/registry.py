"""The lab's image registry: Debian's docker-registry (CNCF distribution 2.8).

The kit's images are pushed once, with skopeo, into a registry storage folder
in the cache (`populate`), by a writable registry on loopback. Each lab then
serves that folder read-only on its network's host address (`start`), and
guests' containerd uses it as the mirror of registry.k8s.io and ghcr.io.
Repositories keep their upstream host as a prefix (`registry.k8s.io/pause`),
so refs read the same in the registry as in kubeadm's list.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from pathlib import Path

from .. import paths
from ..errors import ArtifactError, HostError
from ..fsutil import write_atomic, write_json
from ..progress import Progress
from . import process

PORT = 5000
BINARY = "docker-registry"
POPULATED = "kubelab-populated.json"
PUSH_FORMAT = 2  # bump when the way images are pushed changes (the storage is keyed by it)


def binary() -> str:
    found = shutil.which(BINARY)
    if not found:
        raise HostError(f"{BINARY} is not installed: apt-get install -y docker-registry")
    return found


def config_yaml(storage: Path, addr: str, readonly: bool) -> str:
    """Filesystem storage, no auth. Upload purging is off: it runs even in read-only
    mode and would delete a concurrent lab's nothing; read-only refuses every push
    (distribution 2.8 registry/handlers/app.go)."""
    return "\n".join([
        "version: 0.1",
        "log:",
        "  level: info",
        "  accesslog:",
        "    disabled: false",
        "storage:",
        "  filesystem:",
        f"    rootdirectory: {storage}",
        "  maintenance:",
        "    uploadpurging:",
        "      enabled: false",
        "    readonly:",
        f"      enabled: {'true' if readonly else 'false'}",
        "http:",
        f"  addr: {addr}",
        "",
    ])


def start(storage: Path, host: str, port: int, workdir: Path, readonly: bool = True) -> process.Daemon:
    config = workdir / "registry.yml"
    write_atomic(config, config_yaml(storage, f"{host}:{port}", readonly))
    return process.start("registry", [binary(), "serve", str(config)], workdir / "registry.log",
                         f"http://{host}:{port}/v2/")


def free_port(host: str = "127.0.0.1") -> int:
    s = socket.socket()
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def storage_dir(digest: str) -> Path:
    return paths.artifacts_dir() / "registry" / digest[:24]


def populated(storage: Path) -> dict | None:
    try:
        return json.loads((storage / POPULATED).read_text())
    except (OSError, ValueError):
        return None


def populate(images: dict[str, Path], digest: str, progress: Progress) -> Path:
    """Push every OCI layout (ref -> layout folder) into a registry storage keyed by `digest`."""
    storage = storage_dir(digest)
    if populated(storage):
        return storage
    shutil.rmtree(storage, ignore_errors=True)
    storage.mkdir(parents=True)
    try:
        pushed = _push(storage, images, progress)
    except BaseException:
        shutil.rmtree(storage, ignore_errors=True)
        raise
    write_json(storage / POPULATED, {"digest": digest, "images": pushed})
    return storage


def served(storage: Path) -> dict[str, str]:
    """{ref: manifest digest} of every image the storage holds: the kit's and those added since."""
    record = populated(storage) or {}
    return {**record.get("images", {}), **record.get("added", {})}


def add(storage: Path, images: dict[str, Path], progress: Progress) -> dict[str, str]:
    """Push more layouts into a populated storage (a kubespray checkout's extra images), beside
    the kit's; a lab serving it read-only meanwhile only ever sees complete images, since a
    manifest is written after its blobs. Callers hold the store lock."""
    record = populated(storage)
    if record is None:
        raise ArtifactError(f"registry storage {storage} is not populated; `invoke artifacts.build` first")
    have = served(storage)
    todo = {ref: layout for ref, layout in images.items() if ref not in have}
    if todo:
        pushed = _push(storage, todo, progress)
        record.setdefault("added", {}).update(pushed)
        have.update(pushed)
    # the layouts pushed (store entries): `invoke artifacts.prune` keeps them while the storage is a kit's
    layouts = {**record.get("added_layouts", {}), **{ref: str(layout) for ref, layout in images.items()}}
    if todo or layouts != record.get("added_layouts"):
        record["added_layouts"] = layouts
        write_json(storage / POPULATED, record)
    return {ref: have[ref] for ref in images}


def added_layouts(storage: Path) -> dict[str, Path]:
    """{ref: OCI layout} of the images `add` pushed into `storage` beyond its kit's."""
    record = populated(storage) or {}
    return {ref: Path(p) for ref, p in record.get("added_layouts", {}).items()}


def _push(storage: Path, images: dict[str, Path], progress: Progress) -> dict[str, str]:
    """{ref: digest} of each layout pushed by a writable registry on loopback over `storage`."""
    workdir = storage.parent / f".push-{storage.name}"
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    daemon = start(storage / "data", "127.0.0.1", port, workdir, readonly=False)
    pushed = {}
    try:
        for ref, layout in sorted(images.items()):
            tag = ref.rpartition(":")[2]
            dest = f"docker://127.0.0.1:{port}/{ref}"  # host kept as the first path part
            with progress.step(f"push {ref}"):
                # --preserve-digests: skopeo would otherwise gzip the layers on the way in, and
                # the guests (TCG) would pay for gunzip on every pull; same digests as the kit's.
                _skopeo(["copy", "--quiet", "--preserve-digests", "--dest-tls-verify=false",
                         f"oci:{layout}:{tag}", dest], ref)
                info = json.loads(_skopeo(["inspect", "--tls-verify=false", dest], ref))
            pushed[ref] = info["Digest"]
    finally:
        process.stop(daemon)
        shutil.rmtree(workdir, ignore_errors=True)
    return pushed


def _skopeo(args: list[str], what: str) -> str:
    out = subprocess.run(["skopeo", *args], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise ArtifactError(f"{what}: `skopeo {' '.join(args)}` exited {out.returncode}: {out.stderr.strip()[-600:]}")
    return out.stdout
