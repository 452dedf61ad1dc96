"""What a machine is: OS, kernel, containerd, runc, systemd, init, cgroup version.

Read once per machine at `prepare`; expectations choose by these versions and
every report shows them.
"""

from __future__ import annotations

import re

from ..remote.result import CommandResult

COMMAND = (
    '. /etc/os-release; echo "os=$PRETTY_NAME"; echo "kernel=$(uname -r)"; '
    'echo "containerd=$(containerd --version 2>/dev/null)"; '
    "echo \"containerd_package=$(dpkg-query -W -f='${Version}' containerd 2>/dev/null)\"; "
    'echo "runc=$(runc --version 2>/dev/null | head -n1)"; '
    'echo "systemd=$(systemctl --version 2>/dev/null | head -n1)"; echo "pid1=$(cat /proc/1/comm)"; '
    'echo "cgroupfs=$(stat -fc %T /sys/fs/cgroup)"'
)
# upstream's own builds print a `v` (`containerd github.com/containerd/containerd/v2 v2.2.9 <rev>`)
_VERSION = re.compile(r"\bv?(\d+\.\d+(?:\.\d+)?[^\s]*)")


def parse(result: CommandResult) -> dict[str, str]:
    """Lines of `key=value` from COMMAND, e.g. on bookworm:
    `containerd=containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3`
    `runc=runc version 1.1.5+ds1` `systemd=systemd 252 (252.39-1~deb12u2)` `pid1=systemd`
    Versions are reduced to their first version-looking token.

    containerd is the version of the binary that runs, as exactly as can be known:
    Debian's builds report only the upstream part (sid's says `2.1.9+unknown`), so when
    the Debian package's upstream version is the same, the package version is the
    answer (`2.1.9~ds1-1`); a binary built from source over it reports its own. What it
    printed and the package stay beside it (containerd_reported, containerd_package)."""
    raw = dict(l.split("=", 1) for l in result.stdout.splitlines() if "=" in l)
    facts = {"os": raw.get("os", ""), "kernel": raw.get("kernel", ""), "pid1": raw.get("pid1", ""),
             "cgroupfs": raw.get("cgroupfs", "")}
    for name in ("containerd", "runc", "systemd"):
        text = raw.get(name, "")
        if name == "systemd":
            m = re.search(r"\(([^)]+)\)", text) or _VERSION.search(text)
        else:
            m = _VERSION.search(text.split(" ", 2)[-1] if name == "containerd" else text)
        facts[name] = m.group(1) if m else ""
    facts["containerd_reported"] = facts["containerd"]
    facts["containerd_package"] = raw.get("containerd_package", "").strip()
    facts["containerd"] = real_containerd(facts["containerd_reported"], facts["containerd_package"])
    return facts


def real_containerd(reported: str, package: str) -> str:
    """The package version when the binary is the package's (same upstream version), else what it reports."""
    if package and (not reported or numeric(reported) == numeric(package)):
        return package
    return reported


def numeric(version: str) -> tuple[int, ...]:
    """`1.6.20~ds1` -> (1, 6, 20); `2.1` -> (2, 1, 0)."""
    m = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", version or "")
    if not m:
        return ()
    return tuple(int(g or 0) for g in m.groups())
