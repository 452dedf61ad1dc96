"""Write an OCI image layout (image-spec v1.1) from a list of layers. No daemon, no tool.

    <dir>/oci-layout  index.json  blobs/sha256/<digest>

Layers are plain (uncompressed) tars built from `Node`s with fixed owners,
modes and mtimes, so the same inputs give the same digests and a rebuild is
byte-identical. Uncompressed, because the guests run under TCG, where
gunzip costs far more than moving bytes over the lab bridge.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import tarfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..fsutil import sha256_file

MEDIA_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
MEDIA_CONFIG = "application/vnd.oci.image.config.v1+json"
MEDIA_LAYER = "application/vnd.oci.image.layer.v1.tar"
REF_NAME = "org.opencontainers.image.ref.name"
DEFAULT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
EPOCH = "1970-01-01T00:00:00Z"


@dataclass(frozen=True)
class Node:
    """One entry of a layer: a directory, a file (from `source` or `data`) or a symlink."""
    path: str  # absolute path in the image
    kind: str = "file"  # file | dir | symlink
    mode: int = 0o644
    uid: int = 0
    gid: int = 0
    source: Path | None = None
    data: bytes | None = None
    target: str = ""  # symlink target
    xattrs: tuple[tuple[str, bytes], ...] = ()


def file_capability(*caps: int) -> bytes:
    """`security.capability` value (VFS_CAP_REVISION_2, effective) granting `caps` as
    permitted: what `setcap cap_x=+ep` writes. containerd applies it from the layer's
    SCHILY.xattr PAX header."""
    permitted = 0
    for cap in caps:
        permitted |= 1 << cap
    return struct.pack("<IIIII", 0x02000000 | 0x000001, permitted & 0xFFFFFFFF, 0, permitted >> 32, 0)


CAP_NET_BIND_SERVICE = 10


@dataclass
class Layer:
    """A finished layer blob and what it holds."""
    path: Path  # the blob file
    digest: str  # sha256:... of the tar (also its diff_id: it is not compressed)
    size: int
    comment: str
    files: list[str] = field(default_factory=list)


def _parents(path: str) -> list[str]:
    parts = path.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[:i + 1]) for i in range(len(parts))]


def write_layer(nodes: list[Node], blobs: Path, comment: str) -> Layer:
    """A deterministic tar of `nodes` (parent directories added as root 0755), into blobs/sha256/."""
    by_path = {n.path.rstrip("/") or "/": n for n in nodes}
    for n in list(by_path.values()):
        for parent in _parents(n.path):
            by_path.setdefault(parent, Node(parent, kind="dir", mode=0o755))
    blobs.mkdir(parents=True, exist_ok=True)
    tmp = blobs / f".layer-{os.getpid()}.tar"
    with open(tmp, "wb") as f:
        with tarfile.open(fileobj=f, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for path in sorted(by_path):
                node = by_path[path]
                info = tarfile.TarInfo(path.lstrip("/"))
                info.mode, info.uid, info.gid, info.mtime = node.mode, node.uid, node.gid, 0
                info.uname = info.gname = ""
                if node.xattrs:
                    info.pax_headers = {f"SCHILY.xattr.{k}": v.decode("latin-1") for k, v in node.xattrs}
                if node.kind == "dir":
                    info.type = tarfile.DIRTYPE
                    tar.addfile(info)
                elif node.kind == "symlink":
                    info.type, info.linkname = tarfile.SYMTYPE, node.target
                    tar.addfile(info)
                else:
                    data = node.data if node.data is not None else Path(node.source).read_bytes()
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    digest = sha256_file(tmp)
    final = blobs / digest
    os.replace(tmp, final)
    return Layer(final, f"sha256:{digest}", final.stat().st_size, comment, sorted(by_path))


def _blob(blobs: Path, data: bytes) -> tuple[str, int]:
    digest = hashlib.sha256(data).hexdigest()
    (blobs / digest).write_bytes(data)
    return f"sha256:{digest}", len(data)


def _canonical(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


@dataclass(frozen=True)
class ImageConfig:
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    user: str = ""
    env: tuple[str, ...] = (DEFAULT_PATH,)
    workdir: str = "/"
    labels: tuple[tuple[str, str], ...] = ()
    stop_signal: str = ""  # e.g. SIGQUIT; containerd stops the container with it

    def key_fields(self) -> dict:
        """The fields a store key covers; an unset stop signal is left out, so images made before
        it existed keep their keys."""
        out = asdict(self)
        if not self.stop_signal:
            del out["stop_signal"]
        return out


def write_layout(directory: Path, layers: list[Layer], config: ImageConfig, ref: str,
                 annotations: dict[str, str] | None = None) -> dict:
    """Write config, manifest and index for `layers` (already in directory/blobs/sha256).
    Returns {manifest digest, size, config digest}."""
    blobs = directory / "blobs" / "sha256"
    cfg = {"architecture": "amd64", "os": "linux", "created": EPOCH,
           "config": {"Env": list(config.env), "WorkingDir": config.workdir},
           "rootfs": {"type": "layers", "diff_ids": [l.digest for l in layers]},
           "history": [{"created": EPOCH, "created_by": f"kubelab: {l.comment}"} for l in layers]}
    if config.entrypoint:
        cfg["config"]["Entrypoint"] = list(config.entrypoint)
    if config.cmd:
        cfg["config"]["Cmd"] = list(config.cmd)
    if config.user:
        cfg["config"]["User"] = config.user
    if config.labels:
        cfg["config"]["Labels"] = dict(config.labels)
    if config.stop_signal:
        cfg["config"]["StopSignal"] = config.stop_signal
    cfg_digest, cfg_size = _blob(blobs, _canonical(cfg))
    manifest = {"schemaVersion": 2, "mediaType": MEDIA_MANIFEST,
                "config": {"mediaType": MEDIA_CONFIG, "digest": cfg_digest, "size": cfg_size},
                "layers": [{"mediaType": MEDIA_LAYER, "digest": l.digest, "size": l.size} for l in layers]}
    if annotations:
        manifest["annotations"] = dict(sorted(annotations.items()))
    man_digest, man_size = _blob(blobs, _canonical(manifest))
    tag = ref.rpartition(":")[2]
    index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
             "manifests": [{"mediaType": MEDIA_MANIFEST, "digest": man_digest, "size": man_size,
                            "annotations": {REF_NAME: tag, "io.kubelab.image.ref": ref}}]}
    (directory / "index.json").write_bytes(_canonical(index))
    (directory / "oci-layout").write_bytes(_canonical({"imageLayoutVersion": "1.0.0"}))
    return {"manifest": man_digest, "manifest_size": man_size, "config": cfg_digest,
            "size": cfg_size + man_size + sum(l.size for l in layers)}
