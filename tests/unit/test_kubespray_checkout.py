"""Finding and checking a kubespray checkout, on small trees written by the test."""

import subprocess

import pytest

from harness.errors import UsageError
from harness.kubespray import checkout

from . import kubespray_tree


def test_locate_prefers_the_option_then_the_environment_then_the_scenario(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    env = {checkout.ENV: str(b)}
    assert checkout.locate(str(a), str(c), env) == (a, "--kubespray")
    assert checkout.locate(None, str(c), env) == (b, "KUBELAB_KUBESPRAY")
    assert checkout.locate(None, str(c), {}) == (c, "install.kubespray")


def test_locate_without_any_source_says_the_three_ways():
    with pytest.raises(UsageError) as info:
        checkout.locate(None, None, {})
    assert "--kubespray PATH" in str(info.value) and "KUBELAB_KUBESPRAY" in str(info.value)
    assert "install.kubespray" in str(info.value)


def test_a_folder_that_is_not_a_checkout_names_what_is_missing(tmp_path):
    kubespray_tree.write(tmp_path, omit=("cluster.yml", "roles/kubespray_defaults"))
    with pytest.raises(UsageError) as info:
        checkout.load(tmp_path, "KUBELAB_KUBESPRAY")
    text = str(info.value)
    assert f"{tmp_path} (from KUBELAB_KUBESPRAY) is not a kubespray checkout" in text
    assert "cluster.yml, roles/kubespray_defaults, roles/kubespray_defaults/defaults/main/download.yml" in text
    assert "requirements.txt" not in text  # present, so not named


def test_a_missing_folder_is_refused(tmp_path):
    with pytest.raises(UsageError, match="no such directory"):
        checkout.load(tmp_path / "nowhere")


def test_a_plain_tree_is_versioned_by_galaxy_yml_and_gated_by_ansible_version_yml(tmp_path):
    ks = checkout.load(kubespray_tree.write(tmp_path / "ks"))
    assert (ks.describe, ks.commit, ks.galaxy_version, ks.version) == (None, None, "9.8.7", "9.8.7")
    assert (ks.ansible_min, ks.ansible_max) == ("2.20.0", "2.21.0")
    assert ks.record()["ansible_core"] == ">=2.20.0,<2.21.0"


def test_a_git_checkout_is_versioned_by_git_describe_and_commit(tmp_path):
    root = kubespray_tree.write(tmp_path / "ks")

    def git(*args):
        return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.invalid",
                               *args], check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "one")
    git("tag", "v9.8.0")
    (root / "README.md").write_text("more\n")
    git("add", ".")
    git("commit", "-qm", "two")
    ks = checkout.load(root)
    head = git("rev-parse", "HEAD")
    assert ks.commit == head
    assert ks.describe == f"v9.8.0-1-g{head[:len(ks.describe.rsplit('-g', 1)[1])]}"
    assert ks.version == ks.describe


def test_a_tree_inside_another_repository_is_not_taken_for_a_git_checkout(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    ks = checkout.load(kubespray_tree.write(tmp_path / "ks"))
    assert ks.describe is None and ks.version == "9.8.7"


def test_the_gate_must_name_both_bounds(tmp_path):
    with pytest.raises(UsageError, match="no play with vars minimal_ansible_version and maximal_ansible_version"):
        checkout.ansible_gate("- hosts: all\n  vars:\n    minimal_ansible_version: 2.1\n", "f.yml")
    with pytest.raises(UsageError, match="f.yml: not valid YAML"):
        checkout.ansible_gate("- [", "f.yml")


@pytest.mark.parametrize("installed, ok", [
    ("2.20.0", True), ("2.20.14", True), ("2.19.9", False), ("2.21.0", False), ("2.21.0rc1", False),
    ("2.20", True), ("3.0.0", False),
])
def test_installed_ansible_core_is_checked_against_the_range(tmp_path, installed, ok):
    ks = checkout.load(kubespray_tree.write(tmp_path))
    if ok:
        checkout.check_ansible(ks, installed)
    else:
        with pytest.raises(UsageError) as info:
            checkout.check_ansible(ks, installed)
        assert f"ansible-core {installed} is outside what kubespray 9.8.7 accepts (2.20.0 <= ansible-core < 2.21.0" in str(info.value)


def test_ansible_core_version_is_read_from_ansible_playbook_version():
    out = "ansible-playbook [core 2.20.3]\n  config file = None\n  python version = 3.11.2\n"
    assert checkout.ansible_core_version(out) == "2.20.3"
    with pytest.raises(UsageError, match="could not read ansible-core's version"):
        checkout.ansible_core_version("ansible-playbook 2.9.27\n")
