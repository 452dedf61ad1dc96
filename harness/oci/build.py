"""Build a kit's images as OCI layouts in the artifact store (no daemon, no registry).

An image's store key covers its recipe, the sha256 of every binary it holds,
the exact Debian package versions of its userland and the layout format, so
an unchanged kit rebuilds nothing, and a changed binary rebuilds exactly the
images that hold it.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
import time
from pathlib import Path

from ..artifacts import store
from ..errors import ArtifactError
from ..progress import Progress
from . import catalog, debs
from .layout import Layer, Node, write_layer, write_layout

LAYOUT_FORMAT = 1  # bump when layer or config writing changes


def _base_nodes(recipe: catalog.ImageRecipe) -> list[Node]:
    return [
        Node("/etc/passwd", data=catalog.PASSWD.encode()),
        Node("/etc/group", data=recipe.group_file.encode()),
        Node("/etc/nsswitch.conf", data=catalog.NSSWITCH.encode()),
        Node("/tmp", kind="dir", mode=0o1777),
        Node("/root", kind="dir", mode=0o700),
        Node("/home/nonroot", kind="dir", mode=0o700, uid=65532, gid=65532),
    ]


def _userland_packages(userland: tuple[str, ...]) -> list[debs.Package]:
    roots = [p for name in userland for p in catalog.USERLANDS[name][0]]
    return debs.download(debs.closure(roots))


def _userland_layer(userland: tuple[str, ...], packages: list[debs.Package], blobs: Path) -> Layer:
    checks = [argv for name in userland for argv in catalog.USERLANDS[name][1]]
    with tempfile.TemporaryDirectory(prefix="kubelab-userland-") as tmp:
        root = Path(tmp)
        debs.unpack(packages, root)
        for name in userland:
            for link, target in catalog.ALTERNATIVES.get(name, {}).items():
                (root / link.lstrip("/")).symlink_to(target)
        if "busybox" in userland:
            applets = debs.check_runs(root, ["/bin/busybox", "--list-full"]).split()
            for applet in applets:
                path = root / applet
                if not path.exists() and not path.is_symlink():
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.symlink_to("/bin/busybox")
        debs.ldconfig(root)
        for argv in checks:  # the userland must really run before it becomes a layer
            debs.check_runs(root, argv)
        nodes = debs.nodes(root)
        versions = ", ".join(f"{p.name} {p.version}" for p in packages)
        return write_layer(nodes, blobs, f"Debian packages: {versions}")


def _links(userland: tuple[str, ...]) -> dict:
    return {k: v for name in userland for k, v in catalog.ALTERNATIVES.get(name, {}).items()}


def _key(recipe: catalog.ImageRecipe, entries: dict[str, store.Entry], packages: list[debs.Package]) -> str:
    binaries = [[b.component, b.name, b.dest, b.bind_low_ports, entries[b.component].files[b.name]["sha256"]]
                for b in recipe.binaries]
    blob = {"format": LAYOUT_FORMAT, "ref": recipe.ref, "config": recipe.config.key_fields(), "base": recipe.base,
            "base_files": [catalog.PASSWD, recipe.group_file, catalog.NSSWITCH], "dirs": recipe.dirs,
            "binaries": binaries, "userland": recipe.userland, **({"owned": recipe.owned} if recipe.owned else {}),
            "packages": [[p.name, p.version] for p in packages],
            "links": _links(recipe.userland)}
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()


def ensure_image(recipe: catalog.ImageRecipe, entries: dict[str, store.Entry], progress: Progress,
                 rebuild: bool = False) -> store.Entry:
    packages = _userland_packages(recipe.userland) if recipe.userland else []
    key = _key(recipe, entries, packages)
    entry, problems = store.lookup(key)
    if problems:
        progress.note(f"image {recipe.ref}: store entry {key[:store.KEY_LEN]} is damaged "
                      f"({'; '.join(problems[:3])}); rebuilding")
    if entry and not rebuild:
        return entry
    work = store.workdir(key)
    started = time.monotonic()
    try:
        with progress.step(f"image {recipe.ref}"):
            blobs = work / "blobs" / "sha256"
            layers = []
            if recipe.base:
                layers.append(write_layer(_base_nodes(recipe), blobs, "base: passwd, group, nsswitch, /tmp"))
            if recipe.userland:
                layers.append(_userland_layer(recipe.userland, packages, blobs))
            nodes = [Node(d, kind="dir", mode=m) for d, m in recipe.dirs]
            nodes += [Node(b.dest, mode=0o755, source=entries[b.component].path(b.name), xattrs=b.xattrs)
                      for b in recipe.binaries]
            nodes += [Node(path, data=b"", uid=uid, gid=uid) for path, uid in recipe.owned]
            if nodes:
                layers.append(write_layer(nodes, blobs, "binaries: " + ", ".join(b.dest for b in recipe.binaries)
                                          if recipe.binaries else "directories"))
            written = write_layout(work, layers, recipe.config, recipe.ref,
                                   {"io.kubelab.components": ",".join(sorted({b.component for b in recipe.binaries}))})
        return store.commit(key, work, {
            "component": f"image {recipe.name}", "module": recipe.ref, "toolchain": f"kubelab OCI layout v{LAYOUT_FORMAT}",
            "flags": [], "env": {}, "programs": {b.dest: f"{b.component}/{b.name}" for b in recipe.binaries},
            "build_seconds": round(time.monotonic() - started, 1), "note": "", "image": {
                "ref": recipe.ref, "manifest": written["manifest"], "config": written["config"],
                "layers": [{"digest": l.digest, "size": l.size, "comment": l.comment} for l in layers],
                "packages": {p.name: p.version for p in packages}},
        })
    except BaseException:
        store.discard(work)
        raise


def inspect(entry: store.Entry) -> dict:
    """What skopeo, a real OCI client, reads from the layout."""
    tag = entry.data["image"]["ref"].rpartition(":")[2]
    out = subprocess.run(["skopeo", "inspect", f"oci:{entry.directory}:{tag}"], capture_output=True, text=True,
                         timeout=120)
    if out.returncode != 0:
        raise ArtifactError(f"skopeo inspect oci:{entry.directory}:{tag} failed: {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout)
