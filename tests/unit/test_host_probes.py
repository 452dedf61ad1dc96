"""`ansible-failure`: a kubespray failure as an expectation. It reads the plays the run's host
steps recorded (run.json's steps[].ansible, from harness/kubespray/play_log.py); the loader
allows it only where the track records plays, and the plan places it on `host`."""

import textwrap

import pytest

from harness.kubespray.play_log import PlayLog
from harness.probes import make
from harness.scenario.load import load
from harness.scenario.plan import plan

from .test_kubespray_play_log import NOT_FOUND, OUTPUT


def plays():
    play = PlayLog(lambda: 0.0)
    for line in OUTPUT.splitlines():
        play.feed(line)
    play.finish()
    return [play.summary()]


def test_failed_tasks_are_read_with_their_line_ignored_ones_apart():
    reading, code = make("ansible-failure", {}).observe(plays(), "")
    assert code is None and reading.value == 2  # the ignored runc failure is not one
    assert reading.text.splitlines()[:2] == ["TASK [download : Download_file | Download item] on node1: Request failed",
                                             NOT_FOUND]
    only = make("ansible-failure", {"task": r"^download :", "host": "node2"}).observe(plays(), "")[0]
    assert only.value == 1 and only.text.startswith("TASK [download : Download_file | Download item] on node2: "
                                                     "Failed to connect to the host via ssh")
    assert make("ansible-failure", {"task": "no such task"}).observe(plays(), "")[0].value == 0
    assert make("ansible-failure", {}).observe([], "")[0].value == 0  # no play recorded (yet)


def scenario(tmp_path, track, checkout=""):
    f = tmp_path / "s.yaml"
    f.write_text(textwrap.dedent(f"""\
        apiVersion: kubelab/v1
        kind: Scenario
        name: s
        summary: a kubespray failure expected
        lab:
          suite: sid
          machines: [{{name: cp1, role: control-plane}}]
        install: {{track: {track}{checkout}}}
        expect:
          - name: download-404
            probe: {{ansible-failure: {{task: Download_file}}}}
            pattern: 'HTTP Error 404'
        """))
    return f


def test_the_plan_places_it_on_the_host_after_the_install(tmp_path):
    s = load(scenario(tmp_path, "kubespray", ", play_fails: true"))
    assert s.expect[0].target == "host" and s.install.play_fails and s.install.expected_to_stop
    from harness.tracks import track_of
    from harness.tuning import decide

    ctx = track_of(s.install).dry_context(s, None, decide("qemu"))
    steps = plan(s, {"cp1": "control-plane"}, {"cp1": {}}, install=ctx)
    run, fetch = [st for st in steps if st.action in ("host-run", "fetch")]
    assert run.may_fail and fetch.may_fail  # the play the fault stops is judged by the expectations
    [check] = [st for st in steps if st.action == "check"]
    assert (check.phase, check.machine) == ("expect", "host")
    assert check.line() == ("[expect] host: the failed tasks of the install's ansible-playbook, from its recorded "
                            "output; task ~ 'Download_file'    # download-404: pattern 'HTTP Error 404'")


def test_only_a_track_that_records_plays_may_expect_a_failed_task(tmp_path):
    from harness.errors import ScenarioError

    with pytest.raises(ScenarioError) as err:
        load(scenario(tmp_path, "kubeadm"))
    assert "s.yaml:11: expect[0].probe: probe `ansible-failure` reads the plays of the kubespray track; " \
           "this scenario installs with `kubeadm`" in str(err.value)


# kubespray's own output, captured here from the checkout at v2.31.0-96-g46dbdd399 (cluster.yml with
# `-e kube_version=...`, validate_inventory stopping it before any guest work), and the 404 of
# kubespray-offline.md's run G with the lab's machine name
REFUSED_BELOW_MINIMUM = """
TASK [validate_inventory : Stop if unsupported version of Kubernetes] **********
fatal: [cp1]: FAILED! => {
    "assertion": "kube_version is version(kube_version_min_required, '>=')",
    "changed": false,
    "evaluated_to": false,
    "msg": "The current release of Kubespray only support newer version of Kubernetes than 1.34.0 - You are trying to apply 1.33.0"
}

PLAY RECAP *********************************************************************
cp1                        : ok=6    changed=0    unreachable=0    failed=1    skipped=1    rescued=0    ignored=0
"""
REFUSED_OUTSIDE_THE_TABLES = """
TASK [validate_inventory : Download_file | Check if requested Kubernetes are supported] ***
fatal: [cp1]: FAILED! => {
    "assertion": "kube_version in kubeadm_checksums[image_arch]",
    "changed": false,
    "evaluated_to": false,
    "msg": "Kubernetes v1.99.0 is not supported for amd64. Please check roles/kubespray_defaults/vars/main/checksums.yml for supported versions."
}
"""


def test_the_airgap_scenarios_expectations_match_kubesprays_own_lines():
    from pathlib import Path

    from harness.model import HOST
    from harness.scenario.checks import match

    from .test_kubespray_play_log import NOT_FOUND

    scenario = load(Path(__file__).resolve().parents[2] / "scenarios" / "kubespray-airgap-version.yaml")
    recorded = []
    for output in (REFUSED_BELOW_MINIMUM, REFUSED_OUTSIDE_THE_TABLES,
                   "TASK [download : Download_file | Download item] ***\n" + NOT_FOUND.replace("node1", "cp1")):
        play = PlayLog(lambda: 0.0)
        for line in output.splitlines():
            play.feed(line)
        play.finish()
        recorded.append(play.summary())
    checks = [c for c in scenario.expect if c.target == HOST]
    assert [c.name for c in checks] == ["below-the-minimum-refused", "outside-the-tables-refused", "first-download-404"]
    for c in checks:
        reading, _ = make(c.probe.kind, c.probe.args).observe(recorded, "")
        met, line = match(c, reading)
        assert met, (c.name, reading.text)
    # and none of them matches another play's failure
    for c, own in zip(checks, recorded):
        others = [p for p in recorded if p is not own]
        assert not match(c, make(c.probe.kind, c.probe.args).observe(others, "")[0])[0], c.name


def test_a_tasks_outcome_per_host_is_read_from_the_recorded_play():
    recorded = plays()
    kernel = make("ansible-task", {"task": r"^kubernetes/preinstall : Set kernel parameters$"}).observe(recorded, "")[0]
    # a loop's items: the host's strongest outcome (changed over ok)
    assert kernel.text.splitlines() == ["TASK [kubernetes/preinstall : Set kernel parameters] on node1: changed",
                                        "TASK [kubernetes/preinstall : Set kernel parameters] on node2: ok"]
    assert make("ansible-task", {"task": "Set kernel", "host": "node1"}).observe(recorded, "")[0].value == "changed"
    ignored = make("ansible-task", {"task": "^container-engine/runc :", "host": "node1"}).observe(recorded, "")[0]
    assert ignored.value == "ignored"
    never = make("ansible-task", {"task": "Enable br_netfilter"}).observe(recorded, "")[0]
    assert (never.value, never.text) == ("", "")


# tests/fixtures/plays/localhost-own-play.log: ansible-playbook's output (ansible-core 2.18 from
# kubespray v2.31.0-96-g46dbdd399's requirements.txt, under its ansible.cfg and kubelab's host
# command) of a four-task play on localhost: ok, changed, an ignored failure, a fatal one.
def test_a_real_plays_failures_are_read_with_the_ignored_one_apart():
    from .captured import play

    reading = play("ansible-failure", {}, "localhost-own-play")
    assert reading.value == 1  # "Fail on purpose" was ignored: not a failure of the play
    assert reading.text == "TASK [Stop here] on localhost: the expected failure\n" \
        'fatal: [localhost]: FAILED! => {"changed": false, "msg": "the expected failure"}'
    assert play("ansible-failure", {"task": "^Fail on purpose$"}, "localhost-own-play").value == 0


def test_a_real_plays_tasks_are_read_with_their_outcome_per_host():
    from .captured import play

    assert play("ansible-task", {"task": "^Set a value$"}, "localhost-own-play").value == "ok"
    assert play("ansible-task", {"task": "^Wait a little$"}, "localhost-own-play").value == "changed"
    assert play("ansible-task", {"task": "^Fail on purpose$", "host": "localhost"}, "localhost-own-play").value \
        == "ignored"
    stopped = play("ansible-task", {"task": "^Stop here$"}, "localhost-own-play")
    assert (stopped.value, stopped.text) == ("failed", "TASK [Stop here] on localhost: failed")
