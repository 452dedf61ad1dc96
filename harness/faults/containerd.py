"""containerd configuration faults.

Where runc's options live depends on the containerd version found in the
guest (containerd's own config layout, versions 2 and 3):
  1.x  plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options
  2.x  plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options
Debian ships /etc/containerd/config.toml as `version = 2` with CNI bin_dir
/usr/lib/cni and no `imports` line, on bookworm, trixie and sid alike.
"""

from __future__ import annotations

from ..params import Param
from ..probes.base import q
from ..probes.facts import numeric
from .base import Fault, check

CONFIG = "/etc/containerd/config.toml"
V1_CRI = 'plugins."io.containerd.grpc.v1.cri"'
V2_RUNTIME = "plugins.\"io.containerd.cri.v1.runtime\""


def containerd_major(facts: dict) -> int:
    version = numeric(facts.get("containerd", ""))
    return version[0] if version else 1


def runc_options_key(facts: dict) -> str:
    base = V2_RUNTIME if containerd_major(facts) >= 2 else V1_CRI
    return f"{base}.containerd.runtimes.runc.options"


def restart_containerd() -> str:
    return "systemctl restart containerd && systemctl is-active containerd"


def _runc_tables(systemd_cgroup: bool) -> str:
    """runc's runtime tables in the layout of Debian's version-2 config.toml."""
    value = "true" if systemd_cgroup else "false"
    return (f"[{V1_CRI}.containerd.runtimes.runc]\n"
            f"  runtime_type = \"io.containerd.runc.v2\"\n"
            f"[{V1_CRI}.containerd.runtimes.runc.options]\n"
            f"  SystemdCgroup = {value}\n")


def _sed_escape(text: str) -> str:
    return text.replace(".", "\\.").replace("/", "\\/")


def _printf(text: str, path: str, append: bool = False) -> str:
    return f"printf '%s' {q(text)} {'>>' if append else '>'} {q(path)}"


SENTINEL = "max_container_log_line_size = 12345"  # default 16384 on 1.6, 1.7 and 2.1


class ContainerdDropin(Fault):
    """A drop-in with only runc's SystemdCgroup, imported from config.toml.

    inject() also marks config.toml's own CRI table with a sentinel
    (max_container_log_line_size = 12345; the default is 16384): the dump
    then shows whether config.toml's table survived the import (merged) or
    was replaced by the drop-in's (the sentinel is back to its default).
    """

    kind = "containerd-dropin"
    summary = "a conf.d drop-in carrying only part of the CRI settings, plus the `imports` line"
    PARAMS = {
        "file": Param(str, required=False, default="/etc/containerd/conf.d/50-kubelab.toml"),
        "systemd_cgroup": Param(bool, required=False, default=True),
    }

    def _dropin(self) -> str:
        # Written in the root file's own layout (version 2, no `version` line of its own),
        # the way course notes for containerd 1.x show it.
        value = "true" if self.params["systemd_cgroup"] else "false"
        return f"[{V1_CRI}.containerd.runtimes.runc.options]\n  SystemdCgroup = {value}\n"

    def inject(self):
        f = self.params["file"]
        return [
            f"mkdir -p {q(f.rsplit('/', 1)[0])}",
            _printf(self._dropin(), f),
            f"grep -q '^imports' {CONFIG} || sed -i '1i imports = [\"/etc/containerd/conf.d/*.toml\"]' {CONFIG}",
            f"sed -i '/^  \\[{_sed_escape(V1_CRI)}\\]$/a\\    {SENTINEL}' {CONFIG} && grep -q '{SENTINEL}' {CONFIG}",
            restart_containerd(),
        ]

    def armed_checks(self):
        # 1.x lists each imported file; 2.x lists the glob as written
        return [
            check("drop-in imported", "containerd-config", {"key": "imports"}, pattern=r"/etc/containerd/conf\.d/"),
            check("containerd running", "unit-state", {"unit": "containerd"}, equals="active"),
        ]

    def recover(self):
        # One complete CRI table in config.toml, no partial drop-in: right on every version.
        return [
            f"rm -f {q(self.params['file'])}",
            f"sed -i -e '/^imports = /d' -e '/{SENTINEL}/d' {CONFIG}",
            _printf(_runc_tables(self.params["systemd_cgroup"]), CONFIG, append=True),
            restart_containerd(),
        ]

    def persistence_checks(self):
        key = runc_options_key(self.facts)
        return [check("SystemdCgroup as set", "containerd-config", {"key": f"{key}.SystemdCgroup"},
                      equals=self.params["systemd_cgroup"])]


class ContainerdCgroupDriver(Fault):
    kind = "containerd-cgroup-driver"
    summary = "runc's SystemdCgroup set at the config path of the containerd version in the guest"
    PARAMS = {"systemd_cgroup": Param(bool, required=False, default=False, help="the bad value")}

    def _set(self, value: bool) -> list[str]:
        text = "true" if value else "false"
        if containerd_major(self.facts) >= 2:
            # containerd 2.x reads runc options from io.containerd.cri.v1.runtime in a version 3
            # file: migrate Debian's version-2 file first, then add the table there.
            return [
                f"containerd config migrate > {CONFIG}.v3 && mv {CONFIG}.v3 {CONFIG}",
                f"grep -q 'SystemdCgroup' {CONFIG} && sed -i 's/SystemdCgroup = .*/SystemdCgroup = {text}/' {CONFIG} || "
                + _printf(f"[{V2_RUNTIME}.containerd.runtimes.runc.options]\n  SystemdCgroup = {text}\n", CONFIG, append=True),
                restart_containerd(),
            ]
        return [
            f"grep -q 'SystemdCgroup' {CONFIG} && sed -i 's/SystemdCgroup = .*/SystemdCgroup = {text}/' {CONFIG} || "
            + _printf(_runc_tables(value), CONFIG, append=True),
            restart_containerd(),
        ]

    def inject(self):
        return self._set(self.params["systemd_cgroup"])

    def armed_checks(self):
        bad = self.params["systemd_cgroup"]
        return [
            check(f"SystemdCgroup = {str(bad).lower()} in the effective config", "containerd-config",
                  {"key": f"{runc_options_key(self.facts)}.SystemdCgroup"}, equals=bad),
            check("systemd is PID 1", "file-content", {"path": "/proc/1/comm"}, pattern=r"^systemd$"),
        ]

    def recover(self):
        return self._set(not self.params["systemd_cgroup"])

    def persistence_checks(self):
        good = not self.params["systemd_cgroup"]
        return [check(f"SystemdCgroup = {str(good).lower()}", "containerd-config",
                      {"key": f"{runc_options_key(self.facts)}.SystemdCgroup"}, equals=good)]
