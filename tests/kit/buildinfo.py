"""What a Go binary says it was built from: `go version -m`, the module graph the Go toolchain
records in every binary it links (runtime/debug.BuildInfo). Unlike `--version`, which prints
whatever `-X` stamped, this cannot be told a version the build did not use."""

import subprocess
from dataclasses import dataclass

from harness.artifacts.gotool import go_binary


@dataclass(frozen=True)
class BuildInfo:
    path: str                 # the main package built (`path` line)
    modules: dict[str, str]   # module path -> version, main module and every dependency (after replace)


def read(binary) -> BuildInfo:
    out = subprocess.run([go_binary(), "version", "-m", str(binary)], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    path, modules = "", {}
    for line in out.splitlines():
        fields = line.split("\t")
        if len(fields) >= 3 and fields[1] == "path":
            path = fields[2]
        elif len(fields) >= 4 and fields[1] in ("mod", "dep"):
            modules[fields[2]] = fields[3]
        elif len(fields) >= 4 and fields[1] == "=>":  # a replaced dependency: what was really built
            modules[list(modules)[-1]] = fields[3]
    return BuildInfo(path, modules)


def assert_built_from(binary, package: str, version: str) -> None:
    """`binary` is `package`, linked from the module that holds it (the longest module path the
    package starts with) at `version` itself."""
    info = read(binary)
    assert info.path == package, f"{binary}: main package {info.path!r}, not {package!r}"
    holders = [m for m in info.modules if package == m or package.startswith(m + "/")]
    assert holders, f"{binary}: no module of its build holds {package} ({sorted(info.modules)})"
    module = max(holders, key=len)
    assert info.modules[module] == version, f"{binary}: {package} from {module} {info.modules[module]}, not {version}"
