"""Input checks of `lab.up`: refused before anything is created, all problems at once."""

import pytest

from harness.errors import UsageError
from harness.lifecycle import plan_lab


def refuse(**kw):
    args = dict(machines=2, suite="bookworm", cpus=1, memory=1024, name="t", available_mib=20000)
    args.update(kw)
    with pytest.raises(UsageError) as info:
        plan_lab(**args)
    return str(info.value)


def test_good_input_plans_named_machines():
    spec = plan_lab(3, "trixie", 1, 768, name="web", available_mib=20000)
    assert spec.name == "web" and spec.suite == "trixie"
    assert [(m.name, m.cpus, m.memory_mib) for m in spec.machines] == [("node1", 1, 768), ("node2", 1, 768), ("node3", 1, 768)]


def test_default_name_is_generated():
    assert plan_lab(1, "bookworm", 1, 512, available_mib=20000).name.startswith("lab-")


def test_zero_machines():
    assert "--machines 0: must be 1..16" in refuse(machines=0)


def test_unknown_suite():
    assert "unknown suite `jessie`" in refuse(suite="jessie")


def test_more_memory_than_the_host_has():
    msg = refuse(machines=2, memory=8000, available_mib=10000)
    assert "--memory 8000 x 2 machine(s) needs about 17200 MiB" in msg
    assert "host has 10000 MiB available" in msg


def test_too_many_cpus():
    import os

    assert f"--cpus 999: must be 1..{os.cpu_count()}" in refuse(cpus=999)


def test_bad_name():
    assert "lab name `Bad_Name`" in refuse(name="Bad_Name")
    assert "at most 20 characters" in refuse(name="a" * 21)


def test_every_problem_reported_at_once():
    msg = refuse(machines=0, suite="nope", cpus=0, name="X")
    assert msg.startswith("refusing to create the lab:")
    assert msg.count("\n  ") == 4


def test_a_built_containerd_runs_on_sid_only():
    assert plan_lab(1, "sid", 1, 512, name="t", available_mib=20000, containerd="v2.4.2").containerd == "2.4.2"
    assert plan_lab(1, "sid", 1, 512, name="t", available_mib=20000).containerd is None
    assert "runs on --suite sid" in refuse(suite="trixie", containerd="2.4.2")
    assert "give a release like 2.2.9" in refuse(suite="sid", containerd="2.4")
