"""The ansible-playbook command a kubespray install runs on the host, as data.

A host-side plan step executes exactly this (harness/host_command.py) and
`--dry-run` prints it (`shown()`): the venv's ansible-playbook, the generated inventory, the two
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
  sockets in a folder of the lab's own (control_dir), the step can close them
  when the play ends (`ssh -O exit`) and remove the folder, so no ssh process
  outlives the run. Not the run folder: a socket's path must fit a Unix
  socket address, and a book's --out made it longer (a real run: "ControlPath
  too long (... >= 108 bytes)", every host unreachable at the play's first task).
- ANSIBLE_NOCOWS: a host with cowsay installed would draw every banner as a
  cow; the output is read line by line (play_log.py) and kept for readers.
- ANSIBLE_DISPLAY_SKIPPED_HOSTS: every task's banner when it starts, so
  play_log.py times each task from its own banner.
- PATH and VIRTUAL_ENV: the venv first, as if it were activated (kubespray's
  roles_path mentions $VIRTUAL_ENV).

No --become: the inventory logs in as root, and cluster.yml's plays do not
ask for become themselves; pass become=True for any other user.
"""

from __future__ import annotations

from pathlib import Path

from ..host_command import HostCommand
from .inventory import ssh_environment


def playbook_command(*, venv_bin: Path, checkout: Path, inventory: Path, vars_file: Path,
                     checksums_file: Path, known_hosts: Path, fact_cache: Path, control_dir: Path,
                     playbook: str = "cluster.yml", become: bool = False,
                     tags: tuple[str, ...] = (), skip_tags: tuple[str, ...] = (),
                     extra: tuple[str, ...] = (), ansible_cfg_text: str | None = None) -> HostCommand:
    """The command for `playbook` of the checkout against the lab in `inventory`.
    `extra`: further `-e key=value` (reset.yml's reset_confirmation=yes);
    `ansible_cfg_text`: the checkout's ansible.cfg when it is not read from the checkout."""
    argv = [str(venv_bin / "ansible-playbook"), "-i", str(inventory),
            "-e", f"@{vars_file}", "-e", f"@{checksums_file}"]
    for item in extra:
        argv += ["-e", item]
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
        # banners as text, not cowsay's drawings, wherever cowsay is installed (utils/display.py)
        "ANSIBLE_NOCOWS": "1",
        "ANSIBLE_NOCOLOR": "1",  # whatever the user's environment forces: the output is parsed
        # kubespray's ansible.cfg hides skipped hosts, and then the default callback prints a
        # task's banner only with its first shown result (callback/default.py, _task_start):
        # shown at each task's start, the banners time every task, skipped ones included
        "ANSIBLE_DISPLAY_SKIPPED_HOSTS": "True",
        **ssh_environment(ansible_cfg.read_text() if ansible_cfg_text is None else ansible_cfg_text, known_hosts),
    }
    return HostCommand(argv=tuple(argv), cwd=checkout, env=env, path_prefix=str(venv_bin), output="ansible",
                       after=close_masters(control_dir))


# ssh refuses a ControlPath of sizeof(sun_path) = 108 bytes or more (ssh's mux.c); ansible names
# each socket with a 10-character hash under ANSIBLE_SSH_CONTROL_PATH_DIR (plugins/connection/ssh.py)
SOCKET_PATH_MAX = 107
SOCKET_NAME = 11  # "/" and the hash


def control_dir(lab_name: str) -> Path:
    """The folder of the play's SSH master sockets: short, under kubelab's run folder, one per lab."""
    from ..errors import UsageError
    from ..paths import run_dir

    folder = run_dir() / "ssh" / lab_name
    if len(str(folder)) + SOCKET_NAME > SOCKET_PATH_MAX:
        raise UsageError(f"{folder}: too long a folder for ansible's SSH sockets ({len(str(folder)) + SOCKET_NAME} "
                         f"bytes with a socket's name; a Unix socket's path fits {SOCKET_PATH_MAX}): set KUBELAB_RUN "
                         "to a shorter folder")
    return folder


def close_masters(control_dir: Path) -> tuple[str, ...]:
    """`ssh -O exit` for every master connection the play left in `control_dir`, then the folder goes."""
    return ("sh", "-c", 'for s in "$1"/*; do [ -S "$s" ] && ssh -o ControlPath="$s" -O exit lab 2>&1; done; '
            'rm -rf -- "$1"; true', "close-ssh-masters", str(control_dir))
