"""The evidence book: claims files (every problem at once, with file and line), the runs a book
plans, verdicts and lines read from run folders made from the fixture run, snippets that stay
byte for byte the same when the evidence does, and what --compare reports."""

import copy
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.errors import ClaimsError
from harness.evidence import book, book_compare, book_plan, book_render, claims
from harness.matrix import report
from harness.paths import project_root
from harness.scenario.load import load_into

FIXTURE = Path(__file__).parent.parent / "fixtures/runs/br-netfilter-missing/run.json"

# The scenario the fixture run was made from, as far as the book reads it: its check names.
SCENARIO = """\
    apiVersion: kubelab/v1
    kind: Scenario
    name: br-netfilter-missing
    summary: Without br_netfilter the bridge sysctls do not exist.
    lab: {suite: bookworm, machines: [{name: node1}]}
    faults:
      - {kind: module-missing, params: {module: br_netfilter}}
    expect:
      - name: sysctl-reports-missing-key
        claims: [T1]
        probe: {sysctl: {key: net.bridge.bridge-nf-call-iptables}}
        pattern: 'cannot stat'
    observe:
      - name: bridge-module-loaded
        claims: [T2]
        probe: {module-loaded: {module: bridge}}
    recover:
      - {name: fix, recover_faults: true}
    verify:
      - name: bridge-nf-call-iptables-is-1
        claims: [T2]
        probe: {sysctl: {key: net.bridge.bridge-nf-call-iptables}}
        equals: "1"
    facts:
      - {name: fix_s, seconds: bridge-nf-call-iptables-is-1}
      - {name: restarts, value: bridge-module-loaded}
    """

CLAIMS = """\
    apiVersion: kubelab/v1
    kind: Claims
    course: A test course
    chapters: {host: Host preparation}
    claims:
      - id: T1
        chapter: host
        says: Without `br_netfilter` the bridge sysctl does not exist.
        proven_by:
          - scenario: br-netfilter-missing
      - id: T2
        chapter: host
        says: "`modprobe br_netfilter` creates it: the sysctl reads 1."
        proven_by:
          - scenario: br-netfilter-missing
        facts:
          - {scenario: br-netfilter-missing, fact: fix_s, notes_say: "a second", state: [restarts]}
      - id: T3
        chapter: host
        says: kubespray leaves the taint off.
        proven_by: []
        unproven: no kubespray here
    """


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A scenarios folder with the fixture's scenario and a claims file proving T1 and T2 with it."""
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "br-netfilter-missing.yaml").write_text(textwrap.dedent(SCENARIO))
    (tmp_path / "claims.yaml").write_text(textwrap.dedent(CLAIMS))
    monkeypatch.setenv("KUBELAB_SCENARIOS", str(tmp_path / "scenarios"))
    return tmp_path


def _plan(course_dir):
    claimset = claims.load([course_dir / "claims.yaml"])
    return book_plan.make(claimset, series=lambda suite: {"bookworm": "1.6"}[suite])


def _record(verify_met=True, value="1", fix_s=2.5, started=1796072400.0, restarts=2):
    """The captured run (met), or, with verify_met=False, the same run with its sysctl check not met."""
    run = json.loads(FIXTURE.read_text())
    run["started_at"] = started
    run["host"] = {"cores": 2}
    for o in run["observations"]:
        if o["check"] == "bridge-nf-call-iptables-is-1":
            o.update(met=verify_met, value=value, matched=value)
    run["verdict"] = {"result": "met", "exit_code": 0, "reason": "every expectation and check was met"} \
        if verify_met else {"result": "not-met", "exit_code": 1,
                            "reason": "1 check not met: verify bridge-nf-call-iptables-is-1 on node1"}
    run["facts"] = {"fix_s": fix_s, "restarts": restarts}
    return run


def make_runs(folder: Path, plan, records: list[dict], stamp="20261203T000000Z", seconds=71.5,
              beside=None) -> list[Path]:
    """OUT/runs/<n>/ as the matrix runner leaves it: matrix.json, and the run folder of each repeat;
    `beside`: the cells each run recorded running meanwhile (None: a matrix that did not record it)."""
    folders = []
    for n, record in enumerate(records, 1):
        repeat = folder / "runs" / str(n)
        matrix = report.new(plan.axes)
        for cell in plan.cells:
            entry = report.cell_entry(cell)
            for name in entry["scenarios"]:
                run_dir = repeat / "cells" / cell.id / name / f"{stamp}-{n}"
                run_dir.mkdir(parents=True)
                (run_dir / "run.json").write_text(json.dumps(record, indent=2))
                status = report.MET if record["verdict"]["exit_code"] == 0 else report.FAIL
                entry["scenarios"][name] = {"status": status, "seconds": seconds, "facts": record["facts"],
                                            "run_dir": str((run_dir / "report.md").relative_to(repeat))}
                if beside is not None:
                    entry["scenarios"][name]["cells_side_by_side"] = beside
            matrix["cells"].append(entry)
        report.save(matrix, repeat)
        folders.append(repeat)
    return folders


def build(out: Path, plan, records, **kw) -> dict:
    folders = make_runs(out, plan, records, **kw)
    record = book.build(plan, folders, out)
    return record


def by_id(record) -> dict:
    return {c["id"]: c for c in record["claims"]}


# -- claims files ----------------------------------------------------------------------------
def problems_of(course_dir: Path, text: str, name="bad.yaml", all_scenarios=False) -> list[str]:
    path = course_dir / name
    path.write_text(textwrap.dedent(text))
    with pytest.raises(ClaimsError) as info:
        claims.load([path], all_scenarios=all_scenarios)
    return [p.replace(f"{course_dir}/", "") for p in info.value.problems]


def test_a_bad_claims_file_gets_every_problem_at_once_with_file_and_line(course):
    found = problems_of(course, """\
        apiVersion: kubelab/v1
        kind: Claims
        chapters: {host: Host}
        audience: learners
        claims:
          - id: T1
            chapter: host
            says: One.
            proven_by:
              - {scenario: br-netfilter-missing, checks: [sysctl-reports-missing-key, no-such-check]}
          - id: T1
            chapter: host
            says: Again.
            proven_by: [{scenario: br-netfilter-missing}]
          - id: T4
            chapter: nowhere
            says: Four.
            colour: red
            proven_by: [{scenario: no-such-scenario}]
          - id: T5
            chapter: host
            says: Five.
            proven_by: []
        """)
    assert found[0] == "bad.yaml:4: audience: unknown key `audience`; allowed: apiVersion, kind, chapters, claims, course"
    assert "bad.yaml:10: claims[0].proven_by[0].checks[1]: found 'no-such-check'; scenario br-netfilter-missing " \
           "has no such check; its checks: sysctl-reports-missing-key, bridge-nf-call-iptables-is-1, " \
           "bridge-module-loaded" in found
    assert "bad.yaml:16: claims[2].chapter: found 'nowhere'; allowed: a chapter of `chapters:` (host)" in found
    assert "bad.yaml:18: claims[2].colour: unknown key `colour`; allowed: id, chapter, says, proven_by, facts, " \
           "unproven" in found
    assert any(p.startswith("bad.yaml:19: claims[2].proven_by[0].scenario: found 'no-such-scenario'; no scenario "
                            "by that name; scenarios: br-netfilter-missing") for p in found)
    assert "bad.yaml:23: claims[3].proven_by: empty: a claim no check proves needs `unproven: <why>` (say what is " \
           "missing)" in found
    assert "bad.yaml:11: claims: duplicate claim id `T1` (first defined at bad.yaml:6)" in found
    assert len(found) == 7, found


def test_a_proof_needs_a_tagged_check_a_real_fact_and_asserting_checks(course):
    found = problems_of(course, """\
        apiVersion: kubelab/v1
        kind: Claims
        chapters: {host: Host}
        claims:
          - id: T9
            chapter: host
            says: Nine.
            proven_by: [{scenario: br-netfilter-missing}]
          - id: T1
            chapter: host
            says: One.
            proven_by: [{scenario: br-netfilter-missing, checks: [bridge-module-loaded], suites: [buster]}]
            facts: [{scenario: br-netfilter-missing, fact: nope}]
            unproven: because
        """)
    assert found == [
        "bad.yaml:8: claims[0].proven_by[0].scenario: no check of scenario br-netfilter-missing is tagged "
        "`claims: [T9]`; tag the checks that prove it, or name them here with `checks: [...]`",
        "bad.yaml:12: claims[1].proven_by[0].suites[0]: found 'buster'; allowed: bookworm, trixie, sid",
        "bad.yaml:14: claims[1].unproven: allowed only with `proven_by: []` (this claim cites scenarios)",
        "bad.yaml:12: claims[1].proven_by: only observe checks: they record and assert nothing; cite at least one "
        "expect or verify check",
        "bad.yaml:13: claims[1].facts[0].fact: found 'nope'; scenario br-netfilter-missing has facts: fix_s, restarts",
    ]


def test_lint_refuses_a_check_tagged_with_a_claim_whose_proof_does_not_cite_its_scenario(course):
    found = problems_of(course, """\
        apiVersion: kubelab/v1
        kind: Claims
        chapters: {host: Host}
        claims:
          - id: T2
            chapter: host
            says: Two.
            proven_by: []
            unproven: not here
        """, all_scenarios=True)
    assert found == ["bad.yaml:5: claims: T2: scenario br-netfilter-missing tags check(s) bridge-nf-call-iptables-is-1, "
                     "bridge-module-loaded with `claims: [T2]`, but T2's proven_by does not cite "
                     "br-netfilter-missing; add `- scenario: br-netfilter-missing`, or remove the tag"]


def test_lint_refuses_a_check_claim_no_claims_file_defines_at_its_line(course):
    problems: list[str] = []
    load_into(course / "scenarios" / "br-netfilter-missing.yaml", problems, {"T1"}, "claims.yaml")
    assert [p.replace(f"{course}/", "") for p in problems] == [
        "scenarios/br-netfilter-missing.yaml:21: verify[0].claims[0]: found 'T2'; no claims file defines it "
        "(claims files: claims.yaml); define it there, or fix the id",
        "scenarios/br-netfilter-missing.yaml:15: observe[0].claims[0]: found 'T2'; no claims file defines it "
        "(claims files: claims.yaml); define it there, or fix the id"]


def test_scenario_level_claims_are_refused_with_where_they_go_now(course):
    path = course / "scenarios" / "br-netfilter-missing.yaml"
    path.write_text(path.read_text().replace("summary:", "claims: [T1]\nsummary:"))
    problems: list[str] = []
    load_into(path, problems)
    assert [p.replace(f"{course}/", "") for p in problems] == [
        "scenarios/br-netfilter-missing.yaml:4: claims: unknown key `claims`; allowed: apiVersion, kind, name, "
        "summary, lab, install, faults, expect, recover, verify, observe, evidence, facts, ci (a claim id goes on the "
        "checks that prove it (`claims: [K8]` on an expect, verify or observe check); the scenario's list is "
        "derived from them)"]


def test_the_scenario_claims_list_is_derived_from_its_checks(course):
    assert claims.load([course / "claims.yaml"]).scenarios["br-netfilter-missing"].claims == ("T1", "T2")


def test_the_shipped_course_and_scenarios_lint_clean_and_every_claim_is_proven_or_says_why():
    claimset = claims.load(claims.all_files(), all_scenarios=True)
    ids = {c.id for c in claimset.claims}
    assert ids == {f"K{i}" for i in range(1, 16)} | {f"S{i}" for i in range(1, 10)} | {f"H{i}" for i in range(1, 6)}
    for claim in claimset.claims:
        assert claim.proofs or claim.unproven, claim.id
    assert {c.id for c in claimset.claims if not c.proofs} == set()  # every claim has a scenario here
    s3 = next(c for c in claimset.claims if c.id == "S3")  # a layer's findings, as the run names them
    assert s3.proofs[0].checks == ("etcd: host unit on cp1", "etcd: static pod", "etcd: API server's etcd endpoints")


def test_evidence_refuses_a_bad_claims_file_with_exit_2_before_anything_starts(course, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubelab/v1\nkind: Claims\nchapters: {h: H}\nclaims:\n  - {id: T1, chapter: h, says: x, "
                   "proven_by: [{scenario: br-netfilter-missing, checks: [gone]}]}\n")
    out = tmp_path / "book"
    proc = subprocess.run([str(Path(sys.executable).with_name("invoke")), "evidence", "--claims", str(bad),
                           "--out", str(out)], cwd=project_root(), capture_output=True, text=True,
                          env=dict(os.environ, KUBELAB_SCENARIOS=str(course / "scenarios")))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{bad}:5: claims[0].proven_by[0].checks[0]: found 'gone'; scenario br-netfilter-missing has no such " \
           "check" in proc.stderr
    assert not out.exists()


# -- the plan ----------------------------------------------------------------------------------
def test_a_book_plans_one_cell_per_version_pair_its_proofs_ask_for(course):
    plan = _plan(course)
    assert [(c.id, c.scenarios) for c in plan.cells] == [("host_bookworm", ("br-netfilter-missing",))]
    wide = book_plan.make(claims.load([course / "claims.yaml"]), suites=("bookworm", "sid"),
                          series=lambda s: {"bookworm": "1.6", "sid": "2.1"}[s])
    assert [c.id for c in wide.cells] == ["host_bookworm", "host_sid"]
    with pytest.raises(Exception, match="--chapter kubeadm: the claims file has chapters host"):
        book_plan.make(claims.load([course / "claims.yaml"]), ("kubeadm",))


# -- verdicts and lines ------------------------------------------------------------------------
def test_a_long_value_in_a_why_is_quoted_by_its_last_lines_and_whole_in_the_claims_lines(course, tmp_path):
    """The kubeadm book's K2: a 60-line kubeadm init log as the value a pattern did not match."""
    log = "\n".join(f"[certs] line {i}" for i in range(57)) + \
        "\n[kubelet-start] Starting the kubelet\nerror: error execution phase wait-control-plane: ...\n" \
        "To see the stack trace of this error execute with --v=5 or higher\n"
    record = by_id(build(tmp_path / "long", _plan(course), [_record(verify_met=False, value=log)]))
    assert record["T2"]["why"].endswith(
        "found '[kubelet-start] Starting the kubelet / error: error execution phase wait-control-plane: ... / "
        "To see the stack trace of this error execute with --v=5 or higher' (the last 3 of 60 lines)")
    assert "[certs] line 0" not in record["T2"]["why"]
    text = json.dumps(record["T2"]["cells"])
    assert "[certs] line 0" in text  # the whole value stays with the claim's lines


def test_verdicts_lines_and_why_come_from_the_proving_checks(course, tmp_path):
    plan = _plan(course)
    record = by_id(build(tmp_path / "failing", plan, [_record(verify_met=False, value="0")]))
    assert record["T1"]["verdict"] == book.HOLDS
    assert record["T2"]["verdict"] == book.FAILS
    assert "verify bridge-nf-call-iptables-is-1 on node1: expected equals '1', found '0'" in record["T2"]["why"]
    assert record["T3"]["verdict"] == book.UNSEEN and record["T3"]["why"] == "no kubespray here"
    [line] = record["T1"]["cells"][0]["scenarios"][0]["lines"]
    assert line["line"] == "sysctl: cannot stat /proc/sys/net/bridge/bridge-nf-call-iptables: No such file or directory"
    assert line["command"] == "sysctl net.bridge.bridge-nf-call-iptables"
    assert line["source"] == "procps-ng src/sysctl.c ReadSetting() (4.0.2 in bookworm; \"is an unknown key\" in later procps-ng)"
    assert line["machines"] == ["node1"]


def test_a_run_that_broke_leaves_its_claims_not_observed_with_the_reason(course, tmp_path):
    plan = _plan(course)
    folders = make_runs(tmp_path, plan, [_record()])
    matrix = report.load(folders[0] / "matrix.json")
    matrix["cells"][0]["scenarios"]["br-netfilter-missing"].update(status=report.INFRA, reason="lab.up failed")
    report.save(matrix, folders[0])
    record = book.build(plan, folders, tmp_path)
    assert by_id(record)["T1"]["verdict"] == book.UNSEEN
    assert "br-netfilter-missing broke (harness or infrastructure): lab.up failed" in by_id(record)["T1"]["why"]
    assert book.exit_code(record) == 2


def test_volatile_parts_of_a_line_are_masked_for_snippets():
    assert book.stable('E1203 17:58:34.123456       1 main.go:259] Failed to check br_netfilter') == \
        "E<time> <pid> main.go:259] Failed to check br_netfilter"
    assert book.stable("2026-12-03T17:58:34+0000 cp1 kubelet[1234]: Using cgroup driver") == \
        "<time> cp1 kubelet[<pid>]: Using cgroup driver"
    assert book.stable("[2026-12-03T12:00:01.5] local 10.244.0.1 dev cni0") == "[<time>] local 10.244.0.1 dev cni0"


# -- snippets ----------------------------------------------------------------------------------
def test_snippets_are_byte_for_byte_the_same_when_only_run_ids_times_and_durations_change(course, tmp_path):
    plan = _plan(course)
    first = build(tmp_path / "a", plan, [_record()])
    second = build(tmp_path / "b", plan, [_record(started=1796999999.0)], stamp="20261204T101010Z", seconds=99.0)
    first.update(built_at=1.0, wall_s=10.0)
    second.update(built_at=2.0, wall_s=20.0)
    book_render.write(tmp_path / "a", first)
    book_render.write(tmp_path / "b", second)
    names = sorted(p.name for p in (tmp_path / "a" / "snippets").iterdir())
    assert names == ["T1.md", "T2.md", "T2.timings.md", "T3.md"]
    for name in names:
        assert (tmp_path / "a" / "snippets" / name).read_bytes() == (tmp_path / "b" / "snippets" / name).read_bytes()
    assert (tmp_path / "a" / "index.md").read_text() != (tmp_path / "b" / "index.md").read_text()
    snippet = (tmp_path / "a" / "snippets" / "T1.md").read_text()
    assert "sysctl: cannot stat /proc/sys/net/bridge/bridge-nf-call-iptables" in snippet
    assert "20261203T000000Z" not in snippet and "71" not in snippet
    assert "20261203T000000Z-1/report.md" in (tmp_path / "a" / "index.md").read_text()


def test_the_index_groups_by_chapter_with_the_verdict_as_a_colour(course, tmp_path):
    plan = _plan(course)
    record = build(tmp_path, plan, [_record(verify_met=False, value="0")])
    record.update(built_at=1.0, wall_s=1.0)
    book_render.write(tmp_path, record)
    md = (tmp_path / "index.md").read_text()
    page = (tmp_path / "index.html").read_text()
    assert "## Host preparation" in md and "| [T2](#t2) | Host preparation | does not hold |" in md
    assert '<p class="fails"><strong>T2: does not hold</strong></p>' in page
    assert '<td class="holds">holds</td>' in page
    assert "<code>br_netfilter</code>" in page


def test_the_index_names_the_kubelab_commit_and_the_kubespray_checkout_the_runs_recorded(course, tmp_path):
    plan = _plan(course)
    run = _record()
    run["install"] = {"track": "kubespray", "kubespray": {
        "describe": "v2.31.0-96-g46dbdd399", "commit": "46dbdd3994b32640bcd806b0097f50e8fdf1d514"}}
    folders = make_runs(tmp_path, plan, [run])
    matrix = report.load(folders[0] / "matrix.json")
    matrix["kubelab_commit"] = "f20375b1c2d3"
    report.save(matrix, folders[0])
    record = book.build(plan, folders, tmp_path)
    assert record["provenance"] == {"kubelab": ["f20375b1c2d3"], "kubespray": ["v2.31.0-96-g46dbdd399 (46dbdd3994b3)"]}
    md = book_render.markdown(book_render.index_blocks({**record, "built_at": 1.0, "wall_s": 1.0}))
    assert "- kubelab commit `f20375b1c2d3`" in md
    assert "- kubespray checkout `v2.31.0-96-g46dbdd399 (46dbdd3994b3)`" in md


def test_a_book_of_runs_without_kubespray_names_no_checkout(course, tmp_path):
    record = build(tmp_path, _plan(course), [_record()])
    assert record["provenance"]["kubespray"] == []
    md = book_render.markdown(book_render.index_blocks({**record, "built_at": 1.0, "wall_s": 1.0}))
    assert "kubespray checkout" not in md


def test_a_claim_across_versions_gets_a_pivot(course, tmp_path):
    plan = book_plan.make(claims.load([course / "claims.yaml"]), suites=("bookworm", "sid"),
                          series=lambda s: {"bookworm": "1.6", "sid": "2.1"}[s])
    record = build(tmp_path, plan, [_record()])
    md = book_render.markdown(book_render.index_blocks({**record, "built_at": 1.0, "wall_s": 1.0}))
    assert "| Kubernetes | containerd 1.6 (bookworm) | containerd 2.1 (sid) |" in md
    assert "| host | holds | holds |" in md


@pytest.mark.parametrize("beside, says", [
    (1, None),  # ran alone, in a matrix that peaked at 3 cells
    (2, "up to 2 matrix cells ran side by side while it ran"),
    (None, "up to 3 matrix cells ran side by side (contention"),  # an older matrix: only its peak is known
], ids=["alone", "beside-one", "not-recorded"])
def test_a_timing_names_the_cells_that_ran_beside_its_own_run(course, tmp_path, beside, says):
    record = by_id(build(tmp_path, _plan(course), [_record()], beside=beside))
    text = book_render.timings_snippet(record["T2"], {"concurrent_cells": 3})
    assert "host 2 cores" in text
    assert (says in text) if says else "side by side" not in text


# -- repeats and compare -----------------------------------------------------------------------
def test_repeated_timings_are_median_min_and_max(course, tmp_path):
    plan = _plan(course)
    record = by_id(build(tmp_path, plan, [_record(fix_s=10.9, restarts=2), _record(fix_s=70.7, restarts=4),
                                          _record(fix_s=42.0, restarts=3)]))
    [fact] = record["T2"]["facts"]
    cell = fact["cells"][0]
    assert (cell["median"], cell["min"], cell["max"], cell["measured"]) == (42.0, 10.9, 70.7, 3)
    text = book_render.timings_snippet(record["T2"], {"concurrent_cells": 1})
    assert "median 42.0 s, min 10.9 s, max 70.7 s over 3 of 3 runs (notes say: a second)" in text
    assert "host 2 cores" in text
    # each value with the state that explains it (the restarts at the fix)
    assert "At the fix, run by run: 10.9 s: restarts 2; 70.7 s: restarts 4; 42.0 s: restarts 3." in text


def test_compare_reports_an_edited_matched_line_for_that_claim_only(course, tmp_path):
    plan = _plan(course)
    before = build(tmp_path / "a", plan, [_record()])
    before.update(built_at=1.0, wall_s=1.0)
    book_render.write(tmp_path / "a", before)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    [run_json] = (tmp_path / "b" / "runs").glob("1/cells/*/*/*/run.json")
    run = json.loads(run_json.read_text())
    for o in run["observations"]:
        if o["check"] == "sysctl-reports-missing-key":
            o["matched"] = '"net.bridge.bridge-nf-call-iptables" is an unknown key'
    run_json.write_text(json.dumps(run))
    after = book.build(plan, [tmp_path / "b" / "runs" / "1"], tmp_path / "b")
    book_compare.compare(after, book.load(tmp_path / "a"), str(tmp_path / "a"))
    changed = {c["id"]: c["changes"] for c in after["claims"] if c["changes"]}
    assert list(changed) == ["T1"]
    assert changed["T1"] == ["host x containerd 1.6 (bookworm), br-netfilter-missing: matched line of expect "
                             "sysctl-reports-missing-key: `sysctl: cannot stat "
                             "/proc/sys/net/bridge/bridge-nf-call-iptables: No such file or directory` -> "
                             "`\"net.bridge.bridge-nf-call-iptables\" is an unknown key`"]
    after.update(built_at=2.0, wall_s=1.0)
    book_render.write(tmp_path / "b", after, tmp_path / "a")
    md = (tmp_path / "b" / "index.md").read_text()
    assert md.index("Changes since") < md.index("## Claims") and "**T1** (Host preparation)" in md
    assert (tmp_path / "b" / "snippets" / "T1.md").read_text() != (tmp_path / "a" / "snippets" / "T1.md").read_text()
    assert (tmp_path / "b" / "snippets" / "T2.md").read_text() == (tmp_path / "a" / "snippets" / "T2.md").read_text()


def test_compare_reports_a_verdict_change(course, tmp_path):
    plan = _plan(course)
    before = build(tmp_path / "a", plan, [_record()])
    after = build(tmp_path / "b", plan, [_record(verify_met=False, value="0")])
    book_compare.compare(after, copy.deepcopy(before), "a")
    t2 = by_id(after)["T2"]["changes"]
    assert "verdict holds -> does not hold" in t2
    assert by_id(after)["T1"]["changes"] == []


@pytest.mark.parametrize("now, kept", [([30.0], True), ([80.2], False)])
def test_a_timings_snippet_keeps_its_text_while_the_value_stays_inside_the_previous_spread(course, tmp_path, now,
                                                                                            kept):
    plan = _plan(course)
    before = build(tmp_path / "a", plan, [_record(fix_s=10.9), _record(fix_s=70.7)])
    before.update(built_at=1.0, wall_s=1.0)
    book_render.write(tmp_path / "a", before)
    after = build(tmp_path / "b", plan, [_record(fix_s=v) for v in now])
    book_compare.compare(after, book.load(tmp_path / "a"), "a")
    after.update(built_at=2.0, wall_s=1.0)
    book_render.write(tmp_path / "b", after, tmp_path / "a")
    same = (tmp_path / "b" / "snippets" / "T2.timings.md").read_text() == \
        (tmp_path / "a" / "snippets" / "T2.timings.md").read_text()
    assert same is kept
    changes = by_id(after)["T2"]["changes"]
    if kept:
        assert changes == []
    else:
        assert changes == ["host x containerd 1.6 (bookworm): fact fix_s (br-netfilter-missing): 80.2 s (median of 1) "
                           "is beyond the previous spread 10.9-70.7 s"]
        assert "80.2 s" in (tmp_path / "b" / "snippets" / "T2.timings.md").read_text()


def test_a_previous_book_that_is_not_one_is_refused(tmp_path):
    with pytest.raises(Exception, match="no evidence book there"):
        book.load(tmp_path)


STAND_IN = textwrap.dedent("""
    import os, pathlib, sys
    name, record, code = sys.argv[1], sys.argv[2], int(sys.argv[3])
    runs = pathlib.Path(os.environ["KUBELAB_RUNS"]) / name
    run = runs / f"20261203T00000{len(list(runs.glob('*'))) if runs.exists() else 0}Z"
    run.mkdir(parents=True)
    (run / "run.json").write_text(pathlib.Path(record).read_text())
    (run / "report.md").write_text("report")
    sys.exit(code)
""")


def test_a_book_runs_through_the_matrix_runner_and_resume_writes_it_again_without_running(course, tmp_path):
    plan = _plan(course)
    script, saved = tmp_path / "stand_in.py", tmp_path / "record.json"
    script.write_text(STAND_IN)
    saved.write_text(json.dumps(_record()))

    def command(code):
        return lambda name, cell: [sys.executable, str(script), name, str(saved), str(code)]

    out = tmp_path / "book"
    folders = book_plan.run(plan, out, 1, False, None, 4, 20000, _quiet(), command=command(0))
    first = book.build(plan, folders, out)
    assert by_id(first)["T1"]["verdict"] == book.HOLDS and book.exit_code(first) == 0
    first.update(built_at=1.0, wall_s=1.0)
    book_render.write(out, first)
    snippets = {p.name: p.read_bytes() for p in (out / "snippets").iterdir()}
    # resumed: every run finished, so nothing runs (the stand-in would now fail them all)
    folders = book_plan.run(plan, out, 1, True, None, 4, 20000, _quiet(), command=command(1))
    again = book.build(plan, folders, out)
    again.update(built_at=2.0, wall_s=1.0)
    book_render.write(out, again)
    assert {p.name: p.read_bytes() for p in (out / "snippets").iterdir()} == snippets


def test_a_resumed_book_runs_again_only_what_rerun_names_and_keeps_the_run_it_replaces(course, tmp_path):
    """A check's pattern was too narrow: its claim did not hold. After the scenario file is mended,
    `--resume --rerun` runs that scenario again; the first run stays on disk."""
    plan = _plan(course)
    script, failed, met = tmp_path / "stand_in.py", tmp_path / "failed.json", tmp_path / "met.json"
    script.write_text(STAND_IN)
    failed.write_text(json.dumps(_record(verify_met=False, value="0")))
    met.write_text(json.dumps(_record()))
    out = tmp_path / "book"

    def command(record, code):
        return lambda name, cell: [sys.executable, str(script), name, str(record), str(code)]

    first = book.build(plan, book_plan.run(plan, out, 1, False, None, 4, 20000, _quiet(),
                                           command=command(failed, 1)), out)
    assert by_id(first)["T2"]["verdict"] == book.FAILS
    kept = book.build(plan, book_plan.run(plan, out, 1, True, None, 4, 20000, _quiet(),
                                          command=command(met, 0)), out)
    assert by_id(kept)["T2"]["verdict"] == book.FAILS  # resumed alone: the finished run is kept
    again = book.build(plan, book_plan.run(plan, out, 1, True, None, 4, 20000, _quiet(), command=command(met, 0),
                                           rerun=frozenset({"br-netfilter-missing"})), out)
    assert by_id(again)["T2"]["verdict"] == book.HOLDS
    runs = sorted(p.parent.name for p in (out / "runs" / "1" / "cells").rglob("run.json"))
    assert runs == ["20261203T000000Z", "20261203T000001Z"]  # the failed run is still there
    cell = out / "runs" / "1" / "cells" / "host_bookworm"
    assert sorted(p.name for p in cell.glob("*.log")) == ["br-netfilter-missing.20261203T000000Z.log",
                                                          "br-netfilter-missing.log"]  # and its console


def _quiet():
    import io

    from harness.progress import Progress

    return Progress(io.StringIO(), quiet=True)


# -- claims proven by a verify layer's findings ------------------------------------------------
LAYERED = """\
    apiVersion: kubelab/v1
    kind: Scenario
    name: layered
    summary: A cluster read by the etcd layer.
    lab: {suite: bookworm, machines: [{name: cp1, role: control-plane}]}
    install: {track: kubeadm}
    verify:
      - {layers: [etcd]}
    """

LAYER_CLAIMS = """\
    apiVersion: kubelab/v1
    kind: Claims
    chapters: {kubespray: kubespray}
    claims:
      - id: L1
        chapter: kubespray
        says: etcd is not a pod.
        proven_by:
          - {scenario: layered, checks: ["etcd: host unit on cp1", "etcd: static pod"]}
    """


def _finding(check: str, verdict: str, value: str) -> dict:
    """A verify layer's finding as evidence/record.py writes it into run.json."""
    return {"kind": "verify", "phase": "verify", "check": check, "machine": "cluster", "probe": "verify layer etcd",
            "command": "cp1: systemctl show etcd", "met": {"holds": True, "does not hold": False}.get(verdict),
            "expected": verdict, "verdict": verdict, "layer": "etcd", "value": value, "matched": value,
            "source": "cp1: systemctl show etcd", "log": ""}


def test_a_claim_cites_a_verify_layers_findings_by_the_name_the_run_records(course, tmp_path):
    (course / "scenarios" / "layered.yaml").write_text(textwrap.dedent(LAYERED))
    assert problems_of(course, LAYER_CLAIMS.replace('"etcd: static pod"', '"dns: a tier", "etcd"')) == [
        "bad.yaml:9: claims[0].proven_by[0].checks[1]: found 'dns: a tier'; scenario layered has no such check; "
        "its checks: none; or a finding of its verify layers as `<layer>: <check>` (etcd)",
        "bad.yaml:9: claims[0].proven_by[0].checks[2]: found 'etcd'; scenario layered has no such check; "
        "its checks: none; or a finding of its verify layers as `<layer>: <check>` (etcd)"]
    (course / "layer-claims.yaml").write_text(textwrap.dedent(LAYER_CLAIMS))
    plan = book_plan.make(claims.load([course / "layer-claims.yaml"]), series=lambda suite: "1.6")
    run = _record()
    run["observations"] += [_finding("etcd: host unit on cp1", "holds", "active (etcd.service)"),
                            _finding("etcd: static pod", "recorded", "none")]
    [claim] = build(tmp_path / "held", plan, [run])["claims"]
    assert claim["verdict"] == book.HOLDS
    lines = [(x["check"], x["line"]) for x in claim["cells"][0]["scenarios"][0]["lines"]]
    assert lines == [("etcd: host unit on cp1", "active (etcd.service)"), ("etcd: static pod", "none")]
    run["observations"] = run["observations"][:-1]  # this cluster made no such finding
    [claim] = build(tmp_path / "unrecorded", plan, [run])["claims"]
    assert claim["verdict"] == book.UNSEEN and "the run recorded no 'etcd: static pod'" in claim["why"]
    run["observations"][-1] = _finding("etcd: host unit on cp1", "does not hold", "inactive")
    [claim] = build(tmp_path / "failed", plan, [run])["claims"]
    assert claim["verdict"] == book.FAILS


def test_a_resumed_book_says_how_many_runs_it_kept_and_how_long_they_span(course, tmp_path):
    record = build(tmp_path, _plan(course), [_record(started=1000.0)], seconds=300.0)
    assert book.resumed(record, started_at=500.0) == {"kept_runs": 0, "runs_span_s": 300.0}
    assert book.resumed(record, started_at=5000.0) == {"kept_runs": 1, "runs_span_s": 300.0}
    record.update(built_at=5100.0, wall_s=100.0, **book.resumed(record, started_at=5000.0))
    md = book_render.markdown(book_render.index_blocks(record))
    assert "in 100 s (resumed: 1 run(s) kept from an earlier build; the runs span 300 s)" in md
