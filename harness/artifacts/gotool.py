"""The `go` command, run with kubelab's caches (outside the checkout) and a fixed toolchain.

Every failure names the component, the exact command line (with the
environment that matters) and the last lines Go printed.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

from .. import diskspace, paths, streamed
from ..errors import ArtifactError, BuildFailed, UsageError
from ..progress import Progress

GO_CANDIDATES = ("/usr/local/go/bin/go",)
DOWNLOAD_TIMEOUT = 900
BUILD_TIMEOUT = 3600


def go_binary() -> str:
    found = shutil.which("go") or next((c for c in GO_CANDIDATES if os.access(c, os.X_OK)), None)
    if not found:
        raise ArtifactError("no `go` command: install Go (1.26) at /usr/local/go or put `go` on PATH")
    return found


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    base = paths.go_dir()
    env = dict(os.environ)
    env.update({
        "GOMODCACHE": str(base / "mod"),
        "GOCACHE": str(base / "build"),
        "GOPATH": str(base / "path"),
        "GOTOOLCHAIN": "local",
        "GOFLAGS": "-mod=mod -buildvcs=false",
    })
    env.update(extra or {})
    return env


def go_version() -> str:
    out = subprocess.run([go_binary(), "env", "GOVERSION"], capture_output=True, text=True,
                         env=environment(), timeout=60)
    if out.returncode != 0:
        raise ArtifactError(f"`go env GOVERSION` failed: {out.stderr.strip()}")
    return out.stdout.strip()


def run(args: list[str], component: str, cwd: Path | None = None, env: dict[str, str] | None = None,
        timeout: float = BUILD_TIMEOUT, progress: Progress | None = None) -> str:
    """Run `go ARGS`; return its output. BuildFailed carries the command and its tail."""
    cmd = [go_binary(), *args]
    shown_env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted((env or {}).items()))
    shown = (shown_env + " " if shown_env else "") + shlex.join(cmd)
    progress_line = (lambda line: progress.update(f"{component}: {line[:100]}")) if progress else None
    done = streamed.run(cmd, timeout, env=environment(env), cwd=cwd, on_line=progress_line)
    if done.exit_code is not None and done.exit_code != 0 and diskspace.ran_out(paths.go_dir(), done.lines):
        raise diskspace.full(paths.go_dir(), f"{component}: `go {args[0]}`", diskspace.KIT_NEEDS)
    if done.exit_code != 0:
        raise BuildFailed(component, shown, done.exit_code, done.lines, str(cwd or ""))
    return done.output


def served_versions(module: str) -> list[str]:
    """The versions the module proxy lists for `module` (may be a subset of what it serves)."""
    try:
        out = run(["list", "-m", "-versions", "-json", module], f"version list of {module}",
                  cwd=_scratch(), timeout=120)
    except BuildFailed as exc:
        raise ArtifactError(f"the Go module proxy did not list versions of {module}:\n"
                            + "\n".join("    " + l for l in exc.lines[-5:])) from None
    return json.loads(out).get("Versions") or []


def download(module: str, version: str, component: str = "") -> dict:
    """`go mod download -json MODULE@VERSION`: the module's go.mod, zip and directory.
    Needs no dependency resolution, so it works for k8s.io/kubernetes' v0.0.0 requires."""
    what = component or f"{module}@{version}"
    try:
        out = run(["mod", "download", "-json", f"{module}@{version}"], what, cwd=_scratch(),
                  timeout=DOWNLOAD_TIMEOUT)
    except BuildFailed as exc:
        # `go mod download -json` prints the JSON (with an Error field) and exits 1.
        try:
            info = json.loads("\n".join(l for l in exc.lines if not l.startswith("go: ")))
        except ValueError:
            raise exc from None
        raise UsageError(f"{module}@{version} is not served by the Go module proxy: "
                         f"{info.get('Error', '').strip()}") from None
    info = json.loads(out)
    if info.get("Error"):
        raise UsageError(f"{module}@{version} is not served by the Go module proxy: {info['Error']}")
    return info


def is_served(module: str, tag: str, keep) -> tuple[bool, list[str]]:
    """(served?, the listed versions `keep` accepts). The proxy's list can be partial, so a
    version missing from it is asked for once."""
    served = [v for v in served_versions(module) if keep(v)]
    if tag in served:
        return True, served
    try:
        download(module, tag)
        return True, served
    except UsageError:
        return False, served


def module_go_line(gomod_text: str) -> str:
    for line in gomod_text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "go":
            return parts[1]
    return "1.16"


def _scratch() -> Path:
    """An empty directory outside any module, for module queries."""
    d = paths.go_dir() / "scratch"
    d.mkdir(parents=True, exist_ok=True)
    return d
