"""containerd built from its Go module: the matrix's containerd axis beyond Debian's.

Debian's suites bring 1.6, 1.7 and 2.1; the module proxy serves
github.com/containerd/containerd/v2 from v2.2 to v2.4. A build makes
containerd, ctr and containerd-shim-runc-v2 (runc stays Debian's), records
them like any kit component, and writes a record that the image layer
(images/containerd_image.py) reads:

    <cache>/artifacts/kits/containerd-v2.2.9.json
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from ..errors import ArtifactError, UsageError
from ..fsutil import write_json
from ..progress import Progress
from . import build, components, gotool, store
from .kit import kits_dir

MODULE = "github.com/containerd/containerd/v2"
# What the module proxy serves of v2 (github.com/containerd/containerd/v2, 2026-11): 2.2 to 2.4.
SERIES = ((2, 2), (2, 3), (2, 4))
VERSION_RE = re.compile(r"^v?(2)\.(\d+)\.(\d+)$")
RECORD_SCHEMA = 1
# The built column CI's matrix test runs (.ci/run builds it beside the kit): the newest served.
CI_CONTAINERD = "2.4.2"
# Where the binaries go in the guest: over Debian's (the containerd package's unit runs
# /usr/bin/containerd; the shim is found on PATH next to it).
INSTALL_PATHS = {"containerd": "/usr/bin/containerd", "ctr": "/usr/bin/ctr",
                 "containerd-shim-runc-v2": "/usr/bin/containerd-shim-runc-v2"}


def parse(text: str) -> str:
    """'2.2.9' or 'v2.2.9' -> 'v2.2.9'; anything else, or a series not served, is refused."""
    m = VERSION_RE.match((text or "").strip())
    series = ", ".join(f"{a}.{b}" for a, b in SERIES)
    if not m:
        raise UsageError(f"--containerd {text!r}: give a release like 2.2.9 (kubelab builds containerd {series})")
    if not in_series(m.group(0).strip()):
        raise UsageError(f"--containerd {text}: kubelab builds containerd {series} from source "
                         "(1.6, 1.7 and 2.1 come from Debian's bookworm, trixie and sid)")
    return "v" + ".".join(m.groups())


def check_version(text: str) -> str:
    """The tag, if the module proxy serves it; else a message listing what it serves."""
    tag = parse(text)
    ok, served = gotool.is_served(MODULE, tag, in_series)
    if ok:
        return tag
    raise UsageError(f"--containerd {tag.lstrip('v')}: {MODULE}@{tag} is not served by the Go module proxy; "
                     f"served here: {', '.join(v.lstrip('v') for v in served) or 'none in 2.2-2.4'}")


def in_series(tag: str) -> bool:
    m = VERSION_RE.match(tag)
    return bool(m) and (int(m.group(1)), int(m.group(2))) in SERIES


def record_path(tag: str) -> Path:
    return kits_dir() / f"containerd-{tag}.json"


def build_containerd(tag: str, progress: Progress, rebuild: bool = False) -> dict:
    """Build (or find) containerd `tag`; write and return its record."""
    started = time.monotonic()
    go_version = gotool.go_version()
    with build.store_lock(progress):
        info = gotool.download(MODULE, tag)
        go_line = gotool.module_go_line(Path(info["GoMod"]).read_text())
        entries = {c.name: build.ensure(c, go_version, progress, rebuild) for c in components.containerd(tag, go_line)}
        files = {}
        for name, entry in entries.items():
            for program in entry.files:
                files[program] = {"component": name, "key": entry.key, "install": INSTALL_PATHS[program]}
        record = {
            "schema": RECORD_SCHEMA, "containerd": tag, "module": f"{MODULE}@{tag}", "go": go_version,
            "components": {n: {"key": e.key, "module": e.data["module"], "sha256": e.data["sha256"]}
                           for n, e in entries.items()},
            "files": files, "seconds": round(time.monotonic() - started, 1),
        }
        write_json(record_path(tag), record)
    return record


def load_record(tag: str) -> dict:
    try:
        return json.loads(record_path(tag).read_text())
    except FileNotFoundError:
        raise ArtifactError(f"containerd {tag.lstrip('v')} is not built: "
                            f"`invoke artifacts.build --containerd {tag.lstrip('v')}`") from None


def binaries(record: dict) -> dict[str, Path]:
    """install path in the guest -> verified file in the store."""
    out = {}
    for program, f in sorted(record["files"].items()):
        entry, problems = store.lookup(f["key"])
        if entry is None:
            why = "; ".join(problems) if problems else "missing from the store"
            raise ArtifactError(f"containerd {record['containerd']}: {f['component']} is {why}: "
                                f"`invoke artifacts.build --containerd {record['containerd'].lstrip('v')}` rebuilds it")
        out[f["install"]] = entry.path(program)
    return out
