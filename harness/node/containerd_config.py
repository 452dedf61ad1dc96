"""containerd's config.toml, in the config version that the guest's containerd reads natively.

    1.x  version = 2, everything under plugins."io.containerd.grpc.v1.cri"
    2.x  version = 3, split into io.containerd.cri.v1.images and io.containerd.cri.v1.runtime

Debian ships the same version-2 file on bookworm, trixie and sid (CNI bin_dir
/usr/lib/cni, opt path /var/lib/containerd/opt); kubelab's keeps Debian's
opt path and points CNI at /opt/cni/bin, where the kit's plugins are and
where flannel's init container copies its own. Only what a caller sets is
written; everything else stays containerd's default, so this is also the
"fresh node" config on which the install tracks and faults act.
"""

from __future__ import annotations

import re

from ..serve.mirror import CONFIG_PATH

CONFIG = "/etc/containerd/config.toml"
CNI_BIN_DIR = "/opt/cni/bin"
CNI_CONF_DIR = "/etc/cni/net.d"
OPT_PATH = "/var/lib/containerd/opt"  # Debian's


def major(containerd_version: str) -> int:
    """`1.6.20~ds1-1+deb12u3`, `2.1.9+ds1-3` or `v2.3.4` -> 1 or 2."""
    return release(containerd_version)[0]


def release(containerd_version: str) -> tuple[int, int]:
    """(major, minor) of a Debian or upstream version: `1:2.2.1-1` -> (2, 2), `v2.3.4` -> (2, 3)."""
    parts = containerd_version.lstrip("v").split(":")[-1].split(".")
    return int(parts[0]), int(re.match(r"\d*", parts[1] if len(parts) > 1 else "").group() or 0)


# The CRI plugin's background stats collector: every container's and sandbox's CPU read through
# its shim once a period, default 1 s, for UsageNanoCores ("cri: Add background stats collector",
# containerd PR 12629; internal/cri/server/stats_collector.go defaultCollectionInterval in v2.3.4
# and v2.4.2, absent in v2.0.5; set by `stats_collect_period` of io.containerd.cri.v1.runtime).
STATS_COLLECTOR_SINCE = (2, 3)


def has_stats_collector(containerd_version: str) -> bool:
    return release(containerd_version) >= STATS_COLLECTOR_SINCE


def _bool(value: bool) -> str:
    return "true" if value else "false"


def config_toml(containerd_version: str, sandbox_image: str | None = None,
                systemd_cgroup: bool | None = None, cni_bin_dir: str = CNI_BIN_DIR,
                stats_collect_period: str = "") -> str:
    """`stats_collect_period` is written only for a containerd that has the collector."""
    if major(containerd_version) >= 2:
        period = stats_collect_period if has_stats_collector(containerd_version) else ""
        return _v3(sandbox_image, systemd_cgroup, cni_bin_dir, period)
    return _v2(sandbox_image, systemd_cgroup, cni_bin_dir)


def _v2(sandbox_image, systemd_cgroup, cni_bin_dir) -> str:
    cri = 'plugins."io.containerd.grpc.v1.cri"'
    out = ["version = 2", "", "[plugins]", f"  [{cri}]"]
    if sandbox_image:
        out.append(f'    sandbox_image = "{sandbox_image}"')
    out += [f"    [{cri}.cni]", f'      bin_dir = "{cni_bin_dir}"', f'      conf_dir = "{CNI_CONF_DIR}"',
            f"    [{cri}.registry]", f'      config_path = "{CONFIG_PATH}"']
    if systemd_cgroup is not None:
        out += [f"    [{cri}.containerd.runtimes.runc]", '      runtime_type = "io.containerd.runc.v2"',
                f"      [{cri}.containerd.runtimes.runc.options]", f"        SystemdCgroup = {_bool(systemd_cgroup)}"]
    out += ['  [plugins."io.containerd.internal.v1.opt"]', f'    path = "{OPT_PATH}"', ""]
    return "\n".join(out)


def _v3(sandbox_image, systemd_cgroup, cni_bin_dir, stats_collect_period) -> str:
    images, runtime = "plugins.'io.containerd.cri.v1.images'", "plugins.'io.containerd.cri.v1.runtime'"
    out = ["version = 3", "", f"[{images}.registry]", f"  config_path = '{CONFIG_PATH}'"]
    if sandbox_image:
        out += [f"[{images}.pinned_images]", f"  sandbox = '{sandbox_image}'"]
    if stats_collect_period:
        out += [f"[{runtime}]", f"  stats_collect_period = '{stats_collect_period}'"]
    out += [f"[{runtime}.cni]", f"  bin_dirs = ['{cni_bin_dir}']", f"  conf_dir = '{CNI_CONF_DIR}'"]
    if systemd_cgroup is not None:
        out += [f"[{runtime}.containerd.runtimes.runc]", "  runtime_type = 'io.containerd.runc.v2'",
                f"[{runtime}.containerd.runtimes.runc.options]", f"  SystemdCgroup = {_bool(systemd_cgroup)}"]
    out += ["[plugins.'io.containerd.internal.v1.opt']", f"  path = '{OPT_PATH}'", ""]
    return "\n".join(out)
