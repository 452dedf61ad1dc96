"""The content-addressed artifact store, outside the checkout.

    <cache>/artifacts/store/<key>/      key = sha256 of everything that makes the output
        <files...>                      the programs (or an OCI layout)
        entry.json                      the manifest entry: what, from where, how, sha256, size, seconds

An entry is trusted only while every file still has the sha256 recorded for
it; a changed or missing file makes `lookup` report it, and the caller
rebuilds. Entries are written in a hidden folder and renamed into place, so
an interrupted build leaves nothing that looks finished.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..errors import ArtifactError
from ..fsutil import sha256_file as file_sha256
from ..fsutil import write_json

ENTRY_SCHEMA = 1
KEY_LEN = 24


def store_dir() -> Path:
    return paths.artifacts_dir() / "store"


def describe_files(directory: Path) -> dict[str, dict]:
    """{relative path: {sha256, size}} of every file under `directory` but entry.json."""
    out = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.name != "entry.json":
            out[path.relative_to(directory).as_posix()] = {"sha256": file_sha256(path), "size": path.stat().st_size}
    return out


def tree_digest(files: dict[str, dict]) -> str:
    """One sha256 for a set of files: over their sorted names and sha256s."""
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(f"{name}\0{files[name]['sha256']}\n".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class Entry:
    directory: Path
    data: dict

    @property
    def key(self) -> str:
        return self.data["key"]

    @property
    def component(self) -> str:
        return self.data["component"]

    def path(self, name: str) -> Path:
        return self.directory / name

    @property
    def files(self) -> dict[str, dict]:
        return self.data["files"]

    def problems(self) -> list[str]:
        """Files whose content no longer matches the entry (empty when intact)."""
        found = []
        for name, rec in self.files.items():
            path = self.directory / name
            if not path.is_file():
                found.append(f"{name}: missing")
            elif path.stat().st_size != rec["size"] or file_sha256(path) != rec["sha256"]:
                found.append(f"{name}: sha256 no longer {rec['sha256'][:12]}…")
        return found


def entry_dir(key: str) -> Path:
    return store_dir() / key[:KEY_LEN]


def lookup(key: str) -> tuple[Entry | None, list[str]]:
    """(entry, []) when stored intact; (None, problems) when stored but damaged; (None, []) when absent."""
    d = entry_dir(key)
    try:
        data = json.loads((d / "entry.json").read_text())
    except FileNotFoundError:
        return None, []
    except (OSError, ValueError) as exc:
        return None, [f"entry.json unreadable ({exc})"]
    if data.get("schema") != ENTRY_SCHEMA or data.get("key") != key:
        return None, ["entry.json is of another schema or key"]
    entry = Entry(d, data)
    problems = entry.problems()
    return (None, problems) if problems else (entry, [])


def workdir(key: str) -> Path:
    """A fresh hidden folder to build into; `commit` moves it into place."""
    d = store_dir() / f".work-{key[:KEY_LEN]}-{os.getpid()}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    return d


def commit(key: str, work: Path, record: dict) -> Entry:
    """Describe the files in `work`, write entry.json, rename into place."""
    files = describe_files(work)
    if not files:
        raise ArtifactError(f"{record.get('component')}: the build produced no files in {work}")
    data = {
        "schema": ENTRY_SCHEMA, "key": key, **record, "files": files,
        "sha256": tree_digest(files) if len(files) > 1 else next(iter(files.values()))["sha256"],
        "size": sum(f["size"] for f in files.values()),
        "stored_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    write_json(work / "entry.json", data)
    final = entry_dir(key)
    shutil.rmtree(final, ignore_errors=True)
    os.rename(work, final)
    return Entry(final, data)


def discard(work: Path) -> None:
    shutil.rmtree(work, ignore_errors=True)


def all_entries() -> list[Entry]:
    root = store_dir()
    if not root.is_dir():
        return []
    out = []
    for d in sorted(root.iterdir()):
        try:
            out.append(Entry(d, json.loads((d / "entry.json").read_text())))
        except (OSError, ValueError):
            continue
    return out


def remove_abandoned() -> None:
    """Work folders of builds whose process is gone."""
    root = store_dir()
    if not root.is_dir():
        return
    for work in root.glob(".work-*"):
        pid = work.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(work, ignore_errors=True)
