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

from ..serve.mirror import CONFIG_PATH

CONFIG = "/etc/containerd/config.toml"
CNI_BIN_DIR = "/opt/cni/bin"
CNI_CONF_DIR = "/etc/cni/net.d"
OPT_PATH = "/var/lib/containerd/opt"  # Debian's


def major(containerd_version: str) -> int:
    """`1.6.20~ds1-1+deb12u3`, `2.1.9+ds1-3` or `v2.3.4` -> 1 or 2."""
    return int(containerd_version.lstrip("v").split(":")[-1].split(".", 1)[0])


def _bool(value: bool) -> str:
    return "true" if value else "false"


def config_toml(containerd_version: str, sandbox_image: str | None = None,
                systemd_cgroup: bool | None = None, cni_bin_dir: str = CNI_BIN_DIR) -> str:
    if major(containerd_version) >= 2:
        return _v3(sandbox_image, systemd_cgroup, cni_bin_dir)
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


def _v3(sandbox_image, systemd_cgroup, cni_bin_dir) -> str:
    images, runtime = "plugins.'io.containerd.cri.v1.images'", "plugins.'io.containerd.cri.v1.runtime'"
    out = ["version = 3", "", f"[{images}.registry]", f"  config_path = '{CONFIG_PATH}'"]
    if sandbox_image:
        out += [f"[{images}.pinned_images]", f"  sandbox = '{sandbox_image}'"]
    out += [f"[{runtime}.cni]", f"  bin_dirs = ['{cni_bin_dir}']", f"  conf_dir = '{CNI_CONF_DIR}'"]
    if systemd_cgroup is not None:
        out += [f"[{runtime}.containerd.runtimes.runc]", "  runtime_type = 'io.containerd.runc.v2'",
                f"[{runtime}.containerd.runtimes.runc.options]", f"  SystemdCgroup = {_bool(systemd_cgroup)}"]
    out += ["[plugins.'io.containerd.internal.v1.opt']", f"  path = '{OPT_PATH}'", ""]
    return "\n".join(out)
