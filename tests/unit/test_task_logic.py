"""What the tasks do, below the command line: which images and boxes a prune keeps, the
pinned known_hosts of an interactive ssh, which lab a command means, the objects no lab
claims, a scenario as the command line overrides it, linting many files, the matrix's
axes and its exit code."""

from pathlib import Path

import pytest

from harness import lab_status
from harness.errors import ScenarioError, UsageError
from harness.images import prune
from harness.images.store import Image
from harness.lab import Lab
from harness.matrix import axes
from harness.matrix.report import FAIL, INFRA, MET, NOT_RUN, UNSUPPORTED
from harness.matrix.verdict import verdict
from harness.remote.interactive import ssh_argv, write_known_hosts
from harness.remote.ssh import SshTarget
from harness.scenario import overrides
from harness.scenario.lint_files import lint
from harness.scenario.files import find
from harness.scenario.load import load


# -- images.prune ---------------------------------------------------------------
def test_prune_keeps_todays_suite_images_and_current_derived_ones(monkeypatch):
    from harness.images import containerd_image, node

    monkeypatch.setattr(node, "is_current", lambda image: image.id == "node-current")
    monkeypatch.setattr(containerd_image, "is_current", lambda image: image.id == "ctrd-current")
    current = {"sid-today"}
    kept = {i: prune.keeps_image(Image(Path(i), manifest), current) for i, manifest in {
        "sid-today": {}, "sid-old": {}, "ctrd-current": {}, "ctrd-old": {},
        "node-current": {"kubernetes": {"kubeadm": "v1.36.3"}}, "node-old": {"kubernetes": {"kubeadm": "v1.36.3"}},
        "sid-today-as-node": {"kubernetes": {"kubeadm": "v1.36.3"}},  # a node image is judged as one, whatever its id
    }.items()}
    assert kept == {"sid-today": True, "sid-old": False, "ctrd-current": True, "ctrd-old": False,
                    "node-current": True, "node-old": False, "sid-today-as-node": False}


def test_prune_keeps_the_boxes_of_todays_images_and_of_every_lab():
    assert prune.boxes_to_keep({"a1", "b2"}, {"kubelab-old9", None, ""}) == {"kubelab-a1", "kubelab-b2",
                                                                              "kubelab-old9"}


def test_the_suite_images_of_today_are_one_per_recipe_and_suite():
    from harness.images.recipe import LAYERS, SUITES

    today = prune.current_suite_images()
    assert len(today) == len(SUITES) * len(LAYERS)
    assert {name.rsplit("-", 2)[0] for name in today} == set(LAYERS)


# -- lab.ssh, lab.status, --lab ----------------------------------------------------
def target(port=22):
    return SshTarget("node1", "192.0.2.10", port, "root", Path("/labs/x/keys/client"), "ssh-ed25519 AAAAC3Nz")


def test_an_interactive_ssh_pins_exactly_the_machines_key(tmp_path):
    known = write_known_hosts(tmp_path / "keys" / "known_hosts", target())
    assert known.read_text() == "192.0.2.10 ssh-ed25519 AAAAC3Nz\n"
    write_known_hosts(known, target(2222))  # written again each time: one machine, one key
    assert known.read_text() == "[192.0.2.10]:2222 ssh-ed25519 AAAAC3Nz\n"
    assert ssh_argv(target(), known) == [
        "ssh", "-i", "/labs/x/keys/client", "-o", f"UserKnownHostsFile={known}", "-o", "StrictHostKeyChecking=yes",
        "-o", "IdentitiesOnly=yes", "root@192.0.2.10"]


def test_objects_no_lab_claims(monkeypatch):
    leftovers = ["domain kubelab-demo.node1", "network kubelab-gone", "volume kubelab-gone.node1.qcow2"]
    assert lab_status.unclaimed(leftovers, ["demo"]) == ["network kubelab-gone", "volume kubelab-gone.node1.qcow2"]
    assert lab_status.unclaimed(leftovers, ["demo", "gone"]) == []


def test_the_lab_a_command_means(monkeypatch):
    loaded = []
    monkeypatch.setattr(Lab, "load", classmethod(lambda cls, name: loaded.append(name) or name))
    monkeypatch.setattr(Lab, "names", classmethod(lambda cls: ["only"]))
    assert Lab.chosen(None) == "only" and Lab.chosen("named") == "named"
    monkeypatch.setattr(Lab, "names", classmethod(lambda cls: ["a", "b"]))
    with pytest.raises(UsageError, match="give --lab NAME: labs are a, b"):
        Lab.chosen(None)
    monkeypatch.setattr(Lab, "names", classmethod(lambda cls: []))
    with pytest.raises(UsageError, match="there is no lab; `invoke lab.up`"):
        Lab.chosen(None)


# -- scenario.run and scenario.lint -------------------------------------------------
def test_the_command_line_overrides_a_scenario():
    kubeadm = load(find("kubeadm-baseline"))
    asked = overrides.apply(kubeadm, kubernetes="1.35.4", containerd="v2.2.9")
    assert asked.suite == "sid" and asked.scenario.install.kubernetes == "1.35.4"
    assert asked.scenario.lab.containerd == "2.2.9"
    assert overrides.apply(kubeadm).suite is None  # the scenario's own
    host = load(find("br-netfilter-missing"))
    with pytest.raises(UsageError, match="host-only"):
        overrides.apply(host, kubernetes="1.36.3")
    with pytest.raises(UsageError, match="runs on sid, not --suite bookworm"):
        overrides.apply(kubeadm, suite="bookworm", containerd="2.2.9")
    with pytest.raises(UsageError, match="--control: "):
        overrides.apply(load(find("cidr-overlap-10-244")), control=True)


def test_lint_reports_every_file_at_once(tmp_path):
    good = find("br-netfilter-missing")
    assert lint([good]).files == 1
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubelab/v1\nkind: Scenario\nname: bad\n")
    other = tmp_path / "other.yaml"
    other.write_text("kind: Nope\n")
    with pytest.raises(ScenarioError) as info:
        lint([bad, good, other])
    assert {p.split(":")[0] for p in info.value.problems} == {str(bad), str(other)}


# -- matrix --------------------------------------------------------------------------
def test_the_matrix_axes_from_the_command_line():
    found = axes.from_options(("br-netfilter-missing", "kubeadm-baseline"), ("1.35.4", "host"), ("sid",), ("2.2.9",))
    assert found.axes == {"kubernetes": ["1.35.4"], "suites": ["sid"], "containerd_built": ["2.2.9"],
                          "scenarios": ["br-netfilter-missing", "kubeadm-baseline"]}
    assert {(c.kubernetes, c.column, c.scenarios) for c in found.cells} >= {
        ("host", "containerd 2.1 (sid)", ("br-netfilter-missing",))}
    with pytest.raises(UsageError, match="--suite: give at least one suite, or --containerd releases"):
        axes.from_options(("br-netfilter-missing",), (), (), ())


def matrix(*statuses):
    return {"cells": [{"scenarios": {f"s{i}": {"status": s} for i, s in enumerate(statuses)}}]}


@pytest.mark.parametrize("statuses,code", [
    ((MET, MET), 0), ((MET, UNSUPPORTED), 0), ((MET, FAIL), 1), ((FAIL, INFRA), 2),
    ((MET, NOT_RUN), 2),  # a deadline or a stop came first: not every scenario was judged
])
def test_the_matrix_exit_code(statuses, code):
    assert verdict(matrix(*statuses)).exit_code == code
