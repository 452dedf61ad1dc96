"""The ansible-playbook command a kubespray install runs on the host, as data.

A future host-side plan step executes exactly this and `--dry-run` prints it
(`shown()`): the venv's ansible-playbook, the generated inventory, the two
extra-vars files, the playbook, and the environment kubelab sets on top of
the host's.

The environment:
- ANSIBLE_CONFIG: the checkout's ansible.cfg, named rather than found in the
  working directory (ansible ignores an ansible.cfg in a world-writable one).
- ANSIBLE_HOST_KEY_CHECKING / ANSIBLE_SSH_ARGS: the lab's pinned host keys
  (inventory.ssh_environment).
- ANSIBLE_CACHE_PLUGIN_CONNECTION: kubespray's ansible.cfg caches facts as
  JSON files named by host under /tmp for a day, with `gathering = smart`
  (gather only hosts without cached facts); lab machines reuse names such as
  `cp1`, so another lab's facts would be taken as this one's. Each run gets
  its own cache folder.
- ANSIBLE_SSH_CONTROL_PATH_DIR: kubespray's ssh_args keep each SSH master
  connection for 30 minutes after use (`ControlPersist=30m`); with the
  sockets in the run's own folder, the step can close them when the play
  ends (`ssh -O exit`), so no ssh process outlives the run.
- PATH and VIRTUAL_ENV: the venv first, as if it were activated (kubespray's
  roles_path mentions $VIRTUAL_ENV).

No --become: the inventory logs in as root, and cluster.yml's plays do not
ask for become themselves; pass become=True for any other user.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from .inventory import ssh_environment


@dataclass(frozen=True)
class PlaybookCommand:
    argv: tuple[str, ...]
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)  # what kubelab adds to the host's environment
    path_prefix: str = ""                                 # put before the host's PATH

    def shown(self) -> str:
        """One line for dry-run and the step log: `cd DIR && K=V ... ansible-playbook ...`."""
        env = [f"{k}={shlex.quote(v)}" for k, v in sorted(self.env.items())]
        if self.path_prefix:
            env.append(f'PATH={shlex.quote(self.path_prefix)}:"$PATH"')
        return f"cd {shlex.quote(str(self.cwd))} && {' '.join(env)} {shlex.join(self.argv)}"

    def environment(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The full environment to run with: the host's (or `base`) plus kubelab's."""
        out = dict(os.environ if base is None else base)
        out.update(self.env)
        if self.path_prefix:
            out["PATH"] = f"{self.path_prefix}:{out['PATH']}" if out.get("PATH") else self.path_prefix
        return out


def playbook_command(*, venv_bin: Path, checkout: Path, inventory: Path, vars_file: Path,
                     checksums_file: Path, known_hosts: Path, fact_cache: Path, control_dir: Path,
                     playbook: str = "cluster.yml", become: bool = False,
                     tags: tuple[str, ...] = (), skip_tags: tuple[str, ...] = ()) -> PlaybookCommand:
    """The command for `playbook` of the checkout against the lab in `inventory`."""
    argv = [str(venv_bin / "ansible-playbook"), "-i", str(inventory),
            "-e", f"@{vars_file}", "-e", f"@{checksums_file}"]
    if become:
        argv.append("--become")
    if tags:
        argv += ["--tags", ",".join(tags)]
    if skip_tags:
        argv += ["--skip-tags", ",".join(skip_tags)]
    argv.append(playbook)
    ansible_cfg = checkout / "ansible.cfg"
    env = {
        "ANSIBLE_CONFIG": str(ansible_cfg),
        "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(fact_cache),
        "ANSIBLE_SSH_CONTROL_PATH_DIR": str(control_dir),
        "VIRTUAL_ENV": str(venv_bin.parent),
        **ssh_environment(ansible_cfg.read_text(), known_hosts),
    }
    return PlaybookCommand(argv=tuple(argv), cwd=checkout, env=env, path_prefix=str(venv_bin))
