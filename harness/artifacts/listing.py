"""`invoke artifacts.list`: kits and store entries, as text or JSON."""

from __future__ import annotations

import json
from pathlib import Path

from . import kit, store


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def render(json_: bool = False) -> str:
    entries = store.all_entries()
    kits = _kits()
    if json_:
        return json.dumps({"kits": kits, "entries": [e.data for e in entries]}, indent=2)
    if not entries:
        return "nothing built yet: `invoke artifacts.build`"
    lines = []
    in_kits = _entries_in_use(kits)  # what prune keeps
    for k in kits:
        what = f"kit {k['kubernetes']}" if "kubernetes" in k else f"containerd {k['containerd']}"  # containerd.py
        lines.append(f"{what} ({k['go']}): {', '.join(sorted(k['components']))}")
    lines.append("")
    lines.append(f"{'component':<24} {'module@version':<52} {'sha256':<14} {'size':>10} {'build':>8}")
    for e in sorted(entries, key=lambda e: (e.component, e.data["module"])):
        d = e.data
        stale = "" if e.directory.name in in_kits else "  (in no kit: `invoke artifacts.prune`)"
        git = f"  (git {d['source']['commit'][:12]} of {d['source']['repository']})" if d.get("source") else ""
        lines.append(f"{d['component']:<24} {d['module']:<52} {d['sha256'][:12]:<14} {_mib(d['size']):>10} "
                     f"{d['build_seconds']:>7}s{stale}{git}")
    lines.append(f"\nstore: {store.store_dir()}")
    return "\n".join(lines)


def _kits() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(kit.kits_dir().glob("*.json"))] if kit.kits_dir().is_dir() else []


def _entries_in_use(kits: list[dict]) -> set[str]:
    """Store entries (folder names) the kits name, and those they use through an installer."""
    named = {c["key"][:store.KEY_LEN] for k in kits for c in (*k["components"].values(), *k.get("images", {}).values())}
    return named | _linked_entries(kits)


def _linked_entries(kits: list[dict]) -> set[str]:
    """Store entries a kit uses beyond its records: what an installer downloads, linked into its
    file tree (kubespray's calicoctl and calico's CRDs built from a git tag; the release archives
    of etcd and nerdctl, through the entries they were made from), and the images pushed into its
    registry storage (kubespray's calico, nodelocaldns, dns-autoscaler, nginx). The next run would
    otherwise have to build them again from its clone."""
    from ..serve import files as serve_files
    from ..serve import registry
    from . import archives

    root = store.store_dir().resolve()
    used: list[Path] = []
    for k in kits:
        tree = k.get("files")  # a Kubernetes kit's file tree (a containerd record's `files` are its binaries)
        for target in serve_files.added_links(Path(tree)).values() if isinstance(tree, str) else ():
            used += [target, *archives.member_files(target)]
        if isinstance(k.get("registry"), str):
            used += registry.added_layouts(Path(k["registry"])).values()
    out = set()
    for path in used:
        try:
            out.add(path.resolve().relative_to(root).parts[0])
        except (ValueError, IndexError):  # outside the store (an archive itself)
            continue
    return out


def prune() -> list[str]:
    """Store entries, registry storages and file trees that no kit record refers to, directly or
    through a link an installer added to its file tree."""
    import shutil

    from .. import paths

    kits = _kits()
    keep = _entries_in_use(kits)
    removed = []
    for entry in store.all_entries():
        if entry.directory.name not in keep:
            shutil.rmtree(entry.directory, ignore_errors=True)
            removed.append(f"store entry {entry.directory.name} ({entry.component}, {entry.data['module']})")
    storages = {k.get("registry") for k in kits}
    root = paths.artifacts_dir() / "registry"
    for d in sorted(root.iterdir()) if root.is_dir() else []:
        if str(d) not in storages:
            shutil.rmtree(d, ignore_errors=True)
            removed.append(f"registry storage {d.name}")
    return removed
