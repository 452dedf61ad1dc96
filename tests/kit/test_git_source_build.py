"""A component built from a git tag (harness/artifacts/git_source.py, build.py): the build reads
the tagged tree, never the clone's work tree; the upstream version flags carry the tag and the
commit; the files an image needs are copied from the tree; the store entry records the
repository, tag and commit; the same commit is found built, another commit is built anew."""

import shutil
import subprocess

import pytest

from harness import paths
from harness.artifacts import build, components, git_source, gotool
from harness.progress import Progress
from tests.git_repos import git as _git
from tests.git_repos import tagged

pytestmark = pytest.mark.artifacts

MAIN = """package main

import "fmt"

var Version, Revision string

func main() { fmt.Println("hello", Version, Revision) }
"""


def test_a_tagged_tree_builds_with_the_tag_and_commit_stamped_and_its_files_copied(tmp_path, monkeypatch):
    repo = tagged(tmp_path / "hello", "example.com/hello", "v1.0.0", {"cmd/hello/main.go": MAIN, "conf.txt": "tagged\n"})
    (repo / "conf.txt").write_text("edited, not committed\n")
    source = git_source.GitSource("hello", "https://example.invalid/hello", "example.com/hello", "KUBELAB_SRC_HELLO")
    monkeypatch.setenv("KUBELAB_SRC_HELLO", str(repo))
    tree = git_source.prepared(source, "1.0.0")
    mod = tree.module
    component = components._from_tree(
        "hello", tree, (components.Program(f"{mod}/cmd/hello", "hello"),),
        ldflags=(f"-X main.Version={tree.tag}", f"-X main.Revision={tree.commit}"), copies=(("conf.txt", "etc/conf"),))
    entry = build.ensure(component, gotool.go_version(), Progress(quiet=True), rebuild=True)
    out = subprocess.run([str(entry.path("hello"))], capture_output=True, text=True, timeout=30).stdout
    assert out == f"hello v1.0.0 {_git(repo, 'rev-parse', 'v1.0.0')}\n"
    assert entry.path("etc/conf").read_text() == "tagged\n"  # the tag's file, not the work tree's
    assert entry.data["source"] == {"repository": str(repo), "upstream": "https://example.invalid/hello",
                                    "tag": "v1.0.0", "commit": tree.commit}
    assert build.ensure(component, gotool.go_version(), Progress(quiet=True)).key == entry.key  # found, not rebuilt
    (repo / "conf.txt").write_text("next\n")
    _git(repo, "commit", "-q", "-am", "next")
    _git(repo, "tag", "v1.0.1")
    later = git_source.prepared(source, "1.0.1")
    assert components._from_tree("hello", later, component.programs).key("go") != \
        components._from_tree("hello", tree, component.programs).key("go")
    # the test's own project leaves nothing in the store or the exported trees
    shutil.rmtree(entry.directory)
    shutil.rmtree(paths.cache_dir() / "src" / "hello")
