"""Facts derived from observations: seconds, values and cases; `unknown` whenever
the observation is missing, gated out or not met, never a default."""

import textwrap

import pytest

from harness.errors import ScenarioError
from harness.facts import NO_FAULT, UNKNOWN, derive
from harness.model import FactDef
from harness.scenario.files import find
from harness.scenario.load import load


def obs(check, met, value=None, after=0.0, probe="sysctl net.ipv4.ip_forward"):
    return {"check": check, "met": met, "value": value, "after": after, "probe": probe}


NOT_APPLICABLE = obs("v1-config-toml-table-replaced", None, probe="")  # what a version gate records

CRI_TABLE = FactDef("cri_table", "cases", cases=(("v1-config-toml-table-replaced", "replaced"),
                                                  ("v2-config-toml-table-kept", "merged")))


def test_cases_take_the_first_met_check():
    merged = [NOT_APPLICABLE, obs("v2-config-toml-table-kept", True, 12345)]
    assert derive((CRI_TABLE,), merged) == {"cri_table": "merged"}
    replaced = [obs("v1-config-toml-table-replaced", True, 16384), obs("v2-config-toml-table-kept", None, probe="")]
    assert derive((CRI_TABLE,), replaced) == {"cri_table": "replaced"}


@pytest.mark.parametrize("observations", [
    [],                                                        # never observed (the run stopped early)
    [NOT_APPLICABLE],                                          # gated out by versions
    [obs("v2-config-toml-table-kept", False, 16384)],          # observed, and neither case held
], ids=["missing", "gated-out", "not-met"])
def test_cases_with_nothing_met_are_unknown(observations):
    assert derive((CRI_TABLE,), observations) == {"cri_table": UNKNOWN}


def test_seconds_are_those_of_the_met_evaluation_only():
    fact = FactDef("ready_s", "seconds", check="both-nodes-ready")
    assert derive((fact,), [obs("both-nodes-ready", True, 2, after=81.64)]) == {"ready_s": 81.6}
    assert derive((fact,), [obs("both-nodes-ready", False, 1, after=900.0)]) == {"ready_s": UNKNOWN}
    assert derive((fact,), []) == {"ready_s": UNKNOWN}


def test_a_control_run_times_nothing_from_a_fix_it_never_made():
    timed = FactDef("dns_after_fix_s", "seconds", check="dns-answers-after-the-fix")
    read = FactDef("forward", "value", check="ip-forward-value")
    seen = [obs("dns-answers-after-the-fix", True, after=12.5), obs("ip-forward-value", None, "1")]
    assert derive((timed, read), seen) == {"dns_after_fix_s": 12.5, "forward": "1"}
    assert derive((timed, read), seen, control=True) == {"dns_after_fix_s": NO_FAULT, "forward": "1"}


def test_a_value_is_the_last_reading_unless_it_failed():
    fact = FactDef("forward", "value", check="ip-forward-value")
    seen = [obs("ip-forward-value", None, "0"), obs("ip-forward-value", None, "1")]
    assert derive((fact,), seen) == {"forward": "1"}
    assert derive((fact,), [obs("ip-forward-value", False, "0")]) == {"forward": UNKNOWN}


def test_matched_keeps_the_regex_group_of_the_met_line_only():
    fact = FactDef("removed_in", "matched", check="kubeadm-warns", regex=r"will be removed in (\d+\.\d+)\.")
    line = "[WARNING ContainerRuntimeVersion]: ... kubelet config will be removed in 1.37. For more information"
    assert derive((fact,), [{**obs("kubeadm-warns", True), "matched": line}]) == {"removed_in": "1.37"}
    # the line changed (no group match), the check failed, or it was gated out: unknown
    assert derive((fact,), [{**obs("kubeadm-warns", True), "matched": "removed later"}]) == {"removed_in": UNKNOWN}
    assert derive((fact,), [{**obs("kubeadm-warns", False), "matched": ""}]) == {"removed_in": UNKNOWN}
    assert derive((fact,), [obs("kubeadm-warns", None, probe="")]) == {"removed_in": UNKNOWN}
    whole = FactDef("line", "matched", check="kubeadm-warns")
    assert derive((whole,), [{**obs("kubeadm-warns", True), "matched": line}]) == {"line": line}


def test_shipped_scenarios_declare_the_facts_the_matrix_pivots():
    assert [f.name for f in load(find("containerd-dropin-merge")).facts] == ["cri_table"]
    assert [f.name for f in load(find("cgroup-driver-mismatch")).facts] == ["cgroup_driver_source",
                                                                          "cgroupfs_fallback_removal_in"]
    assert {"ready_s", "dns_s"} <= {f.name for f in load(find("kubeadm-baseline")).facts}
    assert {"crashloop_wait_s", "dns_after_fix_s"} <= {f.name for f in load(find("flannel-no-brnetfilter")).facts}


def test_a_fact_naming_an_unknown_check_is_refused_with_its_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(textwrap.dedent("""\
        apiVersion: kubelab/v1
        kind: Scenario
        name: bad
        summary: Broken on purpose.
        lab: {suite: bookworm, machines: [{name: node1}]}
        observe:
          - {name: ip-forward-value, probe: {sysctl: {key: net.ipv4.ip_forward}}}
        facts:
          - {name: forward, value: ip-forward}
          - {name: Bad-Name, seconds: ip-forward-value}
          - {name: both, seconds: ip-forward-value, value: ip-forward-value}
          - {name: two_groups, matched: ip-forward-value, regex: '(\\d)(\\d)'}
          - {name: not_matched, value: ip-forward-value, regex: '(\\d)'}
        """))
    with pytest.raises(ScenarioError) as exc:
        load(path)
    assert [p.replace(f"{tmp_path}/", "") for p in exc.value.problems] == [
        "bad.yaml:9: facts[0].value: found 'ip-forward'; allowed: the name of an expect, verify or observe "
        "check (ip-forward-value)",
        "bad.yaml:10: facts[1].name: found 'Bad-Name'; allowed: a snake_case name (lowercase letters, digits, "
        "underscores)",
        "bad.yaml:11: facts[2]: found seconds, value; allowed: exactly one of seconds, value, matched, cases",
        "bad.yaml:12: facts[3].regex: found '(\\\\d)(\\\\d)'; allowed: a regular expression with exactly one group "
        "(the part of the matched text the fact keeps)",
        "bad.yaml:13: facts[4].regex: allowed only with `matched:` (this fact is `value:`)",
    ]
