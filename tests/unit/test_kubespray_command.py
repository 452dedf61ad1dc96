"""The ansible-playbook command line and environment, as data for a host-side step."""

import shlex
import subprocess
from pathlib import Path

import pytest

from harness.kubespray.command import playbook_command

from . import kubespray_tree


def command(tmp_path, **kw):
    root = kubespray_tree.write(tmp_path / "ks")
    run = tmp_path / "run"
    return root, run, playbook_command(
        venv_bin=Path("/cache/kubespray-venv/abc/bin"), checkout=root, inventory=run / "inventory.yml",
        vars_file=run / "vars.yml", checksums_file=run / "checksums.yml", known_hosts=run / "known_hosts",
        fact_cache=run / "facts", control_dir=run / "cp", **kw)


def test_argv_runs_the_venvs_ansible_playbook_with_inventory_vars_and_checksums(tmp_path):
    root, run, cmd = command(tmp_path)
    assert cmd.argv == ("/cache/kubespray-venv/abc/bin/ansible-playbook", "-i", f"{run}/inventory.yml",
                        "-e", f"@{run}/vars.yml", "-e", f"@{run}/checksums.yml", "cluster.yml")
    assert cmd.cwd == root


def test_become_tags_and_another_playbook(tmp_path):
    _, _, cmd = command(tmp_path, playbook="reset.yml", become=True, tags=("etcd", "download"),
                        skip_tags=("system-packages",))
    assert cmd.argv[-6:] == ("--become", "--tags", "etcd,download", "--skip-tags", "system-packages", "reset.yml")


def test_environment_pins_config_host_keys_fact_cache_and_venv(tmp_path):
    root, run, cmd = command(tmp_path)
    assert cmd.env["ANSIBLE_CONFIG"] == f"{root}/ansible.cfg"
    assert cmd.env["ANSIBLE_HOST_KEY_CHECKING"] == "True"
    assert cmd.env["ANSIBLE_SSH_ARGS"].startswith(f"-o UserKnownHostsFile={run}/known_hosts -o StrictHostKeyChecking=yes")
    assert cmd.env["ANSIBLE_CACHE_PLUGIN_CONNECTION"] == f"{run}/facts"
    assert cmd.env["ANSIBLE_SSH_CONTROL_PATH_DIR"] == f"{run}/cp"
    assert cmd.env["VIRTUAL_ENV"] == "/cache/kubespray-venv/abc"
    full = cmd.environment({"PATH": "/usr/bin", "HOME": "/root"})
    assert full["PATH"] == "/cache/kubespray-venv/abc/bin:/usr/bin" and full["HOME"] == "/root"


def test_shown_is_the_command_a_shell_would_run(tmp_path):
    root, run, cmd = command(tmp_path)
    shown = cmd.shown()
    assert shown.startswith(f"cd {root} && ANSIBLE_CACHE_PLUGIN_CONNECTION={run}/facts ")
    # then the play's SSH master connections are closed (kubespray's ControlPersist=30m would keep them)
    closing = "; " + shlex.join(cmd.after)
    assert shown.endswith(closing) and cmd.after[-1] == f"{run}/cp"
    playbook = shown[:-len(closing)]
    assert playbook.endswith(" PATH=/cache/kubespray-venv/abc/bin:\"$PATH\" " + shlex.join(cmd.argv))
    words = shlex.split(shown.split(" && ", 1)[1])
    assert "ANSIBLE_HOST_KEY_CHECKING=True" in words
    assert f"ANSIBLE_SSH_ARGS={cmd.env['ANSIBLE_SSH_ARGS']}" in words  # quoted as one word


def test_the_ssh_sockets_live_in_a_short_folder_of_the_lab_the_play_removes(tmp_path, monkeypatch):
    from harness.errors import UsageError
    from harness.kubespray.command import SOCKET_PATH_MAX, close_masters, control_dir

    monkeypatch.setenv("KUBELAB_RUN", str(tmp_path / "run"))
    assert control_dir("kubespray-laye-b6fb") == tmp_path / "run" / "ssh" / "kubespray-laye-b6fb"
    # a real socket where ssh would put one, closed and removed by the step's `after`
    folder = control_dir("lab")
    folder.mkdir(parents=True)
    (folder / "stale").write_text("")
    subprocess.run(close_masters(folder), check=True, timeout=30)
    assert not folder.exists()
    monkeypatch.setenv("KUBELAB_RUN", "/" + "r" * (SOCKET_PATH_MAX - 20))
    with pytest.raises(UsageError, match="set KUBELAB_RUN to a shorter folder"):
        control_dir("kubespray-laye-b6fb")
