"""containerd built from source: the version check, the build flags, and the image layer
written into an ext4 file system with the real debugfs (no boot)."""

import subprocess
import textwrap

import pytest

from harness.artifacts import components
from harness.artifacts import containerd as built
from harness.errors import UsageError
from harness.images import containerd_image
from harness.scenario.labs import lab_spec, shape
from harness.scenario.load import load
from tests.conftest import require_tool

E2FSPROGS = "scripts/setup installs it: apt-get install -y e2fsprogs"


@pytest.mark.parametrize("text,tag", [("2.2.9", "v2.2.9"), ("v2.4.2", "v2.4.2"), (" 2.3.7 ", "v2.3.7")])
def test_a_release_of_2_2_to_2_4_is_taken(text, tag):
    assert built.parse(text) == tag


@pytest.mark.parametrize("text,message", [
    ("2.1.9", "kubelab builds containerd 2.2, 2.3, 2.4 from source .*Debian's"),
    ("2.2", "give a release like 2.2.9"),
    ("1.7.24", "give a release like 2.2.9"),
    ("", "give a release like 2.2.9"),
])
def test_anything_else_is_refused_with_what_is_built(text, message):
    with pytest.raises(UsageError, match=message):
        built.parse(text)


def test_containerd_is_built_as_upstreams_makefile_does_without_cgo():
    daemon, shim = components.containerd("v2.2.9", "1.25.0")
    assert daemon.wrapper == shim.wrapper == "containerd-v2.2.9"
    assert [p.output for p in daemon.programs] == ["containerd", "ctr"]
    assert [p.output for p in shim.programs] == ["containerd-shim-runc-v2"]
    for c in (daemon, shim):
        assert dict(c.env)["CGO_ENABLED"] == "0"
        flags = " ".join(c.flags())
        assert "-X github.com/containerd/containerd/v2/version.Version=v2.2.9" in flags
    assert daemon.tags == ("urfave_cli_no_docs", "no_btrfs")
    assert shim.tags == ("urfave_cli_no_docs", "no_grpc")
    assert "github.com/containerd/containerd/v2 v2.2.9" in daemon.gomod_text
    assert daemon.key("go1.26.8") != components.containerd("v2.2.10", "1.25.0")[0].key("go1.26.8")


def test_every_program_has_a_place_in_the_guest():
    names = {p.output for c in components.containerd("v2.3.7", "1.25.0") for p in c.programs}
    assert names == set(built.INSTALL_PATHS)


def test_the_layer_replaces_files_in_an_ext4_image_offline(tmp_path):
    for tool in ("debugfs", "mkfs.ext4"):
        require_tool(tool, E2FSPROGS)
    root = tmp_path / "root"
    (root / "usr/bin").mkdir(parents=True)
    (root / "usr/bin/containerd").write_text("debian's\n")
    (root / "usr/bin/runc").write_text("runc stays\n")
    raw = tmp_path / "root.raw"
    subprocess.run(["truncate", "-s", "16M", str(raw)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-d", str(root), str(raw)], check=True)
    new = tmp_path / "containerd"
    new.write_bytes(b"\x7fELF built\n" * 1000)
    ctr = tmp_path / "ctr"
    ctr.write_bytes(b"ctr\n")
    containerd_image.write_files(raw, {"/usr/bin/containerd": new, "/usr/bin/ctr": ctr})

    def read(path):
        out = subprocess.run(["debugfs", "-R", f"cat {path}", str(raw)], capture_output=True, check=True)
        return out.stdout

    def stat(path):
        return subprocess.run(["debugfs", "-R", f"stat {path}", str(raw)], capture_output=True, text=True).stdout

    assert read("/usr/bin/containerd") == new.read_bytes()
    assert read("/usr/bin/ctr") == b"ctr\n"  # a new file too
    assert read("/usr/bin/runc") == b"runc stays\n"
    assert "Mode:  0755" in stat("/usr/bin/containerd") and "User:     0" in stat("/usr/bin/containerd")
    assert not list(tmp_path.glob("root.raw.*"))  # no script or read-back left


def test_a_write_debugfs_could_not_do_is_an_error(tmp_path):
    for tool in ("debugfs", "mkfs.ext4"):
        require_tool(tool, E2FSPROGS)
    raw = tmp_path / "root.raw"
    subprocess.run(["truncate", "-s", "8M", str(raw)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(raw)], check=True)
    src = tmp_path / "containerd"
    src.write_bytes(b"x")
    with pytest.raises(Exception, match="did not write /no/such/dir/containerd"):
        containerd_image.write_files(raw, {"/no/such/dir/containerd": src})


def test_a_layer_goes_into_sid_only():
    with pytest.raises(Exception, match="goes into the sid image"):
        containerd_image.ensure("trixie", "2.2.9")


def test_a_scenario_may_ask_for_a_built_containerd(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent("""\
        apiVersion: kubelab/v1
        kind: Scenario
        name: t
        summary: A built containerd.
        lab: {suite: sid, containerd: "2.3.7", machines: [{name: node1}]}
        """))
    s = load(path)
    assert s.lab.containerd == "2.3.7"
    assert s.with_containerd("2.4.2").lab.containerd == "2.4.2"
    assert lab_spec(s, "sid", "x").containerd == "2.3.7"
    assert shape(lab_spec(s, "sid", "x")) != shape(lab_spec(s.with_containerd("2.4.2"), "sid", "x"))
