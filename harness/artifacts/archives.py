"""Release archives in upstream's layout, made from the kit's own builds, for installers that
download archives rather than binaries (kubespray's `files_repo`).

The same members always give the same bytes (fixed order, owner, mode and time; gzip without a
name or time), so the sha256 kubelab hands kubespray for an archive holds across rebuilds. An
archive is kept under <cache>/artifacts/archives/<digest of its members>/, written atomically,
with `members.json` beside it naming the files it was made from (store entries, which
`invoke artifacts.prune` keeps while a kit's file tree links the archive).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

from .. import paths
from ..fsutil import sha256_file, write_json

MODE = 0o755  # every member is an executable, as upstream ships them
MEMBERS = "members.json"


def archives_dir() -> Path:
    return paths.artifacts_dir() / "archives"


def tar_gz(name: str, members: dict[str, Path]) -> Path:
    """`name` (e.g. crictl-v1.36.0-linux-amd64.tar.gz) holding `members` (name in the archive ->
    file), made once per set of member contents."""
    digest = hashlib.sha256("".join(f"{arc}\0{sha256_file(p)}\n" for arc, p in sorted(members.items())).encode()
                            + name.encode()).hexdigest()[:16]
    target = archives_dir() / digest / name
    if target.is_file():
        if not (target.parent / MEMBERS).is_file():  # an archive made before members were recorded
            write_json(target.parent / MEMBERS, _members_record(members))
        return target
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for arc, path in sorted(members.items()):
            info = tarfile.TarInfo(arc)
            info.size, info.mode, info.mtime = path.stat().st_size, MODE, 0
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            with path.open("rb") as f:
                tar.addfile(info, f)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".{name}.{os.getpid()}")
    with staging.open("wb") as out, gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as gz:
        gz.write(raw.getvalue())
    write_json(target.parent / MEMBERS, _members_record(members))
    staging.rename(target)
    return target


def _members_record(members: dict[str, Path]) -> dict[str, str]:
    return {arc: str(path) for arc, path in sorted(members.items())}


def member_files(archive: Path) -> list[Path]:
    """The files an archive of this folder was made from, as recorded beside it (none: not an archive
    made here, or made before they were recorded)."""
    try:
        return [Path(p) for p in json.loads((archive.parent / MEMBERS).read_text()).values()]
    except (FileNotFoundError, ValueError, AttributeError):
        return []
