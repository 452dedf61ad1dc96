"""A component from a git clone at a pinned tag (harness/artifacts/git_source.py), on real git
repositories made here: the right clone at the tag resolves to its commit and exports exactly the
tagged tree; every wrong one is refused before a build, naming the component, the version and how
to provide it."""

import pytest

from harness.artifacts import git_source
from harness.errors import UsageError
from tests.git_repos import git as _git
from tests.git_repos import tagged

DNS = git_source.NODE_CACHE


@pytest.fixture
def clone(tmp_path, monkeypatch):
    """kubernetes/dns's shape at 1.25.0, one commit after the tag; named by its variable."""
    repo = tagged(tmp_path / "dns", "k8s.io/dns", "1.25.0", {"main.go": "package main\n"})
    (repo / "main.go").write_text("package main // changed after the tag\n")
    _git(repo, "commit", "-q", "-am", "later")
    monkeypatch.setenv("KUBELAB_SRC_DNS", str(repo))
    return repo


def test_the_clone_at_its_tag_resolves_and_exports_the_tagged_tree(clone, tmp_path, monkeypatch):
    monkeypatch.setenv("KUBELAB_CACHE", str(tmp_path / "cache"))
    found = git_source.resolve(DNS, "1.25.0")
    assert found.commit == _git(clone, "rev-parse", "1.25.0^{commit}")
    assert found.record() == {"repository": str(clone), "upstream": "https://github.com/kubernetes/dns",
                              "tag": "1.25.0", "commit": found.commit}
    (clone / "main.go").write_text("package main // the user's own edit, not committed\n")
    tree = git_source.tree(found)
    assert (tree / "main.go").read_text() == "package main\n"  # the tag's, not the work tree's
    assert git_source.tree(found) == tree  # exported once


def test_the_environment_variable_names_the_clone(clone):
    assert git_source.resolve(DNS, "1.25.0").path == clone


@pytest.mark.parametrize("case,said", [
    ("unset", "node-cache 1.25.0: no source: the Go module proxy does not serve k8s.io/dns; provide a clone: "
              "`git clone --branch 1.25.0 https://github.com/kubernetes/dns PATH` (or a clone of your mirror of it), "
              "then `--source node-cache=PATH` or KUBELAB_SRC_DNS=PATH"),
    ("not a folder", "is not a folder"),
    ("not git", "is not a git repository"),
    ("no tag", "has no tag 1.26.0 (its newest: 1.25.0); `git -C "),
    ("another project", "is not a clone of https://github.com/kubernetes/dns (its go.mod at 1.25.0 says module "
                        "example.com/other, not k8s.io/dns)"),
])
def test_a_wrong_source_is_refused_naming_what_and_how(clone, tmp_path, monkeypatch, case, said):
    tag = "1.25.0"
    if case == "unset":
        monkeypatch.delenv("KUBELAB_SRC_DNS")
    elif case == "not a folder":
        monkeypatch.setenv("KUBELAB_SRC_DNS", str(tmp_path / "nowhere"))
    elif case == "not git":
        (tmp_path / "plain").mkdir()
        monkeypatch.setenv("KUBELAB_SRC_DNS", str(tmp_path / "plain"))
    elif case == "no tag":
        tag = "1.26.0"
    else:
        monkeypatch.setenv("KUBELAB_SRC_DNS", str(tagged(tmp_path / "other", "example.com/other", "1.25.0")))
    with pytest.raises(UsageError) as err:
        git_source.resolve(DNS, tag)
    assert said in str(err.value)
    assert str(err.value).startswith(f"node-cache {tag}: ")


def test_a_release_is_named_by_the_tag_its_project_uses():
    assert git_source.NODE_CACHE.tag("1.25.0") == "1.25.0"  # kubernetes/dns tags without a v
    assert git_source.AUTOSCALER.tag("1.8.8") == "v1.8.8"
    assert git_source.CALICO.tag("v3.31.7") == "v3.31.7"


def test_source_options_become_the_variables_what_the_command_starts_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBELAB_SRC_CALICO", "")  # put back as it was after the test
    given = git_source.parse(["calico=" + str(tmp_path)])
    assert given == {"calico": str(tmp_path)}
    git_source.point(given)
    import os
    assert os.environ["KUBELAB_SRC_CALICO"] == str(tmp_path)
    for bad in ("calico", "calico=", "flannel=/x"):
        with pytest.raises(UsageError, match=r"give NAME=PATH, NAME one of calico, cluster-proportional-autoscaler, "
                                             r"nerdctl, node-cache"):
            git_source.parse([bad])


def test_a_half_export_left_by_a_killed_build_is_never_taken_for_the_tree(clone, tmp_path, monkeypatch):
    monkeypatch.setenv("KUBELAB_CACHE", str(tmp_path / "cache"))
    found = git_source.resolve(DNS, "1.25.0")
    half = tmp_path / "cache" / "src" / "node-cache" / found.commit
    half.mkdir(parents=True)
    (half / "go.mod").write_text("truncated")  # no completion mark
    tree = git_source.tree(found)
    assert tree == half and (tree / "go.mod").read_text() == "module k8s.io/dns\n\ngo 1.24\n"
    prepared = git_source.prepared(DNS, "1.25.0")
    assert (prepared.path, prepared.tag, prepared.commit, prepared.vendored) == (str(tree), "1.25.0", found.commit, False)
