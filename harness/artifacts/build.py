"""Build one component into the store, or find it there: `ensure`.

A wrapper module per upstream module@version lives in <cache>/go/work/<name>/;
its go.sum is resolved once and kept. Each program is one
`go build` with the component's flags, timed on its own, so the manifest and
the benchmark can give a build time per component.
"""

from __future__ import annotations

import fcntl
import hashlib
import shlex
import shutil
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

from .. import diskspace, paths
from ..errors import ArtifactError, BuildFailed
from ..fsutil import write_atomic
from ..progress import Progress
from . import gotool, store
from .components import Component

PAUSE_SOURCE = paths.project_root() / "images" / "pause" / "pause.c"


@contextmanager
def store_lock(progress: Progress):
    """One kit build at a time on this host; a second one waits for the first."""
    root = paths.artifacts_dir()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress.note("another artifact build is running on this host; waiting for it")
            with progress.activity("waiting for the other artifact build to finish"):
                fcntl.flock(f, fcntl.LOCK_EX)
        store.remove_abandoned()
        yield


def _cached(key: str, what: str, progress: Progress, rebuild: bool) -> store.Entry | None:
    entry, problems = store.lookup(key)
    if problems:
        progress.note(f"{what}: store entry {key[:store.KEY_LEN]} is damaged ({'; '.join(problems[:3])}); rebuilding")
    return None if rebuild else entry


def ensure(component: Component, go_version: str, progress: Progress, rebuild: bool = False) -> store.Entry:
    key = component.key(go_version)
    entry = _cached(key, component.name, progress, rebuild)
    if entry:
        return entry
    wrapper = Path(component.tree) if component.tree else _wrapper(component, progress)
    work = store.workdir(key)
    try:
        started = time.monotonic()
        for program in component.programs:
            with progress.step(f"{component.name}: go build {program.package}"):
                gotool.run(["build", *component.flags(), "-o", str(work / program.output), program.package],
                           component.name, cwd=wrapper, env=dict(component.env), progress=progress)
        for inside, name in component.copies:  # files from the tagged tree an image carries
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(wrapper / inside, work / name)
        seconds = round(time.monotonic() - started, 1)
        return store.commit(key, work, {
            "component": component.name, "module": component.module_at, "toolchain": go_version,
            "flags": component.flags(), "env": dict(component.env),
            "programs": {p.output: p.package for p in component.programs},
            "build_seconds": seconds, "note": component.note,
            **({"source": component.source} if component.source else {}),
        })
    except BaseException as exc:
        out_of_space = isinstance(exc, OSError) and diskspace.ran_out(work, exc=exc)
        store.discard(work)
        if out_of_space:  # copying into the store: the entry was not committed
            raise diskspace.full(paths.artifacts_dir(), f"{component.name}: store entry", diskspace.KIT_NEEDS) from None
        raise


def _wrapper(component: Component, progress: Progress) -> Path:
    """The wrapper module directory, with go.mod written and go.sum resolved."""
    d = paths.go_dir() / "work" / component.wrapper
    d.mkdir(parents=True, exist_ok=True)
    gomod = d / "go.mod"
    stamp = d / ".resolved"
    digest = hashlib.sha256(component.gomod_text.encode()).hexdigest()
    if gomod.exists() and stamp.exists() and stamp.read_text() == digest:
        return d
    # A fresh start: go.mod exactly as generated.
    write_atomic(gomod, component.gomod_text)
    (d / "go.sum").unlink(missing_ok=True)
    stamp.unlink(missing_ok=True)
    # `go list -deps` resolves exactly what these programs import (tidy would also want
    # the tests of every package, whose modules the proxy may not serve).
    with progress.step(f"{component.name}: resolve {component.module_at}"):
        gotool.run(["list", "-deps", "-f", "{{if .Module}}{{.Module.Path}}{{end}}",
                    *[p.package for p in component.programs]], component.name, cwd=d, env=dict(component.env),
                   progress=progress, timeout=gotool.DOWNLOAD_TIMEOUT)
    # resolving rewrites go.mod with the whole graph; the stamp remembers what it was made from.
    stamp.write_text(digest)
    return d


# -- pause: the project's own C program, built with the host's gcc -----------------
def pause_flags(version: str) -> list[str]:
    """As upstream's build/pause/Makefile: -Os -Wall -Werror -static, version compiled in."""
    return ["-Os", "-Wall", "-Werror", "-static", f"-DVERSION=\"{version}\""]


def gcc_version() -> str:
    out = subprocess.run(["gcc", "--version"], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise ArtifactError("gcc is missing: apt-get install -y gcc libc6-dev (builds the pause binary)")
    return out.stdout.splitlines()[0]


def ensure_pause(version: str, progress: Progress, rebuild: bool = False) -> store.Entry:
    source = PAUSE_SOURCE.read_bytes()
    toolchain = gcc_version()
    flags = pause_flags(version)
    key = hashlib.sha256(repr(("pause", toolchain, flags, hashlib.sha256(source).hexdigest())).encode()).hexdigest()
    entry = _cached(key, "pause", progress, rebuild)
    if entry:
        return entry
    work = store.workdir(key)
    try:
        started = time.monotonic()
        cmd = ["gcc", *flags, "-o", str(work / "pause"), str(PAUSE_SOURCE)]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if out.returncode != 0:
            raise BuildFailed("pause", shlex.join(cmd), out.returncode, (out.stdout + out.stderr).splitlines())
        subprocess.run(["strip", str(work / "pause")], check=True, timeout=60)
        return store.commit(key, work, {
            "component": "pause", "module": f"kubelab images/pause/pause.c ({version})", "toolchain": toolchain,
            "flags": flags, "env": {}, "programs": {"pause": "images/pause/pause.c"},
            "build_seconds": round(time.monotonic() - started, 1), "note": "",
        })
    except BaseException:
        store.discard(work)
        raise
