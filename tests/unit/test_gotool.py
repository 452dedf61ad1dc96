"""The `go` command as kubelab runs it: a failing build names the component, the exact
command and Go's last lines. Uses the real go toolchain; nothing is downloaded."""

import pytest

from harness.artifacts import gotool
from harness.errors import ArtifactError, BuildFailed
from tests.conftest import unavailable


@pytest.fixture
def broken_module(tmp_path):
    try:
        gotool.go_binary()
    except ArtifactError as exc:
        unavailable(str(exc))
    d = tmp_path / "mod"
    d.mkdir()
    (d / "go.mod").write_text("module kubelab.invalid/broken\n\ngo 1.24\n")
    (d / "main.go").write_text("package main\n\nfunc main() {\n\tundefinedThing()\n}\n")
    return d


def test_a_failing_build_names_component_command_and_output(broken_module):
    with pytest.raises(BuildFailed) as info:
        gotool.run(["build", "-o", "out", "."], "kube-apiserver", cwd=broken_module, env={"CGO_ENABLED": "0"})
    exc = info.value
    text = str(exc)
    assert text.startswith("building kube-apiserver: `CGO_ENABLED=0 ")
    assert "go build -o out ." in text and "exited 1" in text
    assert f"in {broken_module}" in text
    assert any("undefined: undefinedThing" in line for line in exc.lines)
    assert "undefined: undefinedThing" in text  # the last lines are in the message
    assert (exc.status, exc.exit_code) == (1, 2)  # go's status is in the message; kubelab exits 2, not "not met"


def test_a_build_that_runs_too_long_is_stopped(broken_module):
    with pytest.raises(BuildFailed, match="timed out"):
        gotool.run(["build", "-o", "out", "."], "etcd", cwd=broken_module, timeout=0.001)


def test_go_line_of_a_module(broken_module):
    assert gotool.module_go_line((broken_module / "go.mod").read_text()) == "1.24"
    assert gotool.module_go_line("module x\n") == "1.16"
