"""Recipe hashing, package lists, mirror discovery."""

import os
import shutil

import pytest

from harness.errors import UsageError
from harness.images.recipe import Recipe, check_suite, host_mirror
from harness.paths import project_root


@pytest.fixture
def recipe_dir(tmp_path):
    d = tmp_path / "debian"
    shutil.copytree(project_root() / "images" / "debian", d)
    return d


def test_digest_is_stable(recipe_dir):
    assert Recipe(recipe_dir, "bookworm").digest() == Recipe(recipe_dir, "bookworm").digest()


def test_digest_changes_with_suite(recipe_dir):
    assert Recipe(recipe_dir, "bookworm").digest() != Recipe(recipe_dir, "trixie").digest()


def test_digest_changes_with_any_file_content(recipe_dir):
    before = Recipe(recipe_dir, "bookworm").digest()
    seed = recipe_dir / "files/usr/local/sbin/kubelab-seed"
    seed.write_text(seed.read_text() + "\n# changed\n")
    assert Recipe(recipe_dir, "bookworm").digest() != before


def test_digest_changes_with_exec_bit(recipe_dir):
    before = Recipe(recipe_dir, "bookworm").digest()
    os.chmod(recipe_dir / "customize.sh", 0o644)
    assert Recipe(recipe_dir, "bookworm").digest() != before


def test_digest_changes_when_a_file_is_added_or_renamed(recipe_dir):
    before = Recipe(recipe_dir, "bookworm").digest()
    (recipe_dir / "files/etc/extra").write_text("x")
    added = Recipe(recipe_dir, "bookworm").digest()
    (recipe_dir / "files/etc/extra").rename(recipe_dir / "files/etc/extra2")
    assert len({before, added, Recipe(recipe_dir, "bookworm").digest()}) == 3


def test_image_id_names_recipe_suite_and_hash(recipe_dir):
    r = Recipe(recipe_dir, "sid")
    assert r.image_id == f"debian-sid-{r.digest()[:12]}"


def test_packages_skip_comments_and_blanks(recipe_dir):
    (recipe_dir / "packages.txt").write_text("# head\nsystemd\n\n  kmod  # inline\n")
    assert Recipe(recipe_dir, "bookworm").packages() == ["systemd", "kmod"]


def test_packages_limited_to_suites(recipe_dir):
    (recipe_dir / "packages.txt").write_text("systemd\ninitramfs-tools @bookworm,trixie\ndracut @sid\n")
    assert Recipe(recipe_dir, "trixie").packages() == ["systemd", "initramfs-tools"]
    assert Recipe(recipe_dir, "sid").packages() == ["systemd", "dracut"]


def test_real_recipe_has_what_a_node_needs():
    pkgs = set(Recipe.debian("bookworm").packages())
    assert {"systemd", "openssh-server", "containerd", "runc", "containernetworking-plugins", "kmod",
            "iproute2", "iptables", "conntrack", "socat", "ethtool", "ca-certificates", "curl",
            "linux-image-cloud-amd64"} <= pkgs


def test_unknown_suite_lists_choices():
    with pytest.raises(UsageError) as info:
        check_suite("buster")
    assert str(info.value).startswith("unknown suite `buster`: choose one of `bookworm`")


def test_mirror_from_deb822_sources(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBELAB_MIRROR", raising=False)
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d/debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm\n")
    assert host_mirror(tmp_path) == "http://mirror.example/debian"


def test_mirror_from_one_line_sources_and_env(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBELAB_MIRROR", raising=False)
    (tmp_path / "sources.list").write_text("deb [arch=amd64 signed-by=/k.gpg] http://m.example/debian bookworm main\n")
    assert host_mirror(tmp_path) == "http://m.example/debian"
    monkeypatch.setenv("KUBELAB_MIRROR", "http://local/debian")
    assert host_mirror(tmp_path) == "http://local/debian"


def test_no_mirror_found(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBELAB_MIRROR", raising=False)
    assert host_mirror(tmp_path) is None


# -- layered recipes (images/kubespray over images/debian) ---------------------------------
@pytest.fixture
def layered(tmp_path):
    images = tmp_path / "images"
    shutil.copytree(project_root() / "images" / "debian", images / "debian")
    shutil.copytree(project_root() / "images" / "kubespray", images / "kubespray")
    return tmp_path


def test_a_layer_adds_its_packages_after_the_base_once_each(layered):
    base = Recipe.named("debian", "bookworm", layered).packages()
    over = Recipe.named("kubespray", "bookworm", layered).packages()
    assert over[:len(base)] == base
    added = over[len(base):]
    assert "python3" in added and "curl" not in added  # curl is debian's already: listed once
    assert len(over) == len(set(over))


def test_a_layers_suite_limits_hold(layered):
    assert "mergerfs" in Recipe.named("kubespray", "bookworm", layered).packages()
    trixie = Recipe.named("kubespray", "trixie", layered).packages()
    assert "mergerfs" not in trixie and "software-properties-common" not in trixie


def test_a_layered_image_id_changes_with_either_layer(layered):
    before = Recipe.named("kubespray", "sid", layered).image_id
    assert before.startswith("kubespray-sid-")
    (layered / "images/debian/packages.txt").write_text(
        (layered / "images/debian/packages.txt").read_text() + "less\n")
    after_base = Recipe.named("kubespray", "sid", layered).image_id
    (layered / "images/kubespray/customize.sh").write_text("#!/bin/sh\n")
    after_top = Recipe.named("kubespray", "sid", layered).image_id
    assert len({before, after_base, after_top}) == 3


def test_unknown_recipe_lists_choices():
    with pytest.raises(UsageError) as info:
        Recipe.named("ubuntu", "sid")
    assert str(info.value) == "unknown guest recipe `ubuntu`: choose one of debian, kubespray"


def test_kubespray_recipe_has_what_its_ansible_needs_on_every_suite():
    for suite in ("bookworm", "trixie", "sid"):
        pkgs = set(Recipe.named("kubespray", suite).packages())
        assert {"python3", "python3-apt", "iputils-ping", "ipvsadm"} <= pkgs, suite
