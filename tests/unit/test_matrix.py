"""The matrix: cells and support, admission, pivots with their borders, compare, merge,
the runner's statuses (with a stand-in scenario command), and the CI export."""

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from harness.errors import UsageError
from harness.matrix import cells as cellmod
from harness.matrix import export, report, run, schedule
from harness.matrix.cells import HOST, Cell, make_cells, support
from harness.scenario.files import find
from harness.scenario.load import load
from tests.conftest import unavailable


@pytest.fixture(scope="module")
def scenarios():
    return {n: load(find(n)) for n in ("containerd-dropin-merge", "kubeadm-baseline", "single-node-taint")}


# -- cells and support ------------------------------------------------------------------
def test_host_scenarios_get_one_cell_per_suite_and_kubeadm_ones_one_per_pair(scenarios):
    cells = make_cells(scenarios, ("1.35.4", "1.36.3"), ("trixie", "sid"))
    assert [c.id for c in cells] == ["host_trixie", "host_sid", "k1-35-4_trixie", "k1-35-4_sid",
                                     "k1-36-3_trixie", "k1-36-3_sid"]
    assert cells[0].scenarios == ("containerd-dropin-merge",)
    assert cells[2].scenarios == ("kubeadm-baseline", "single-node-taint")


def test_containerd_1x_is_unsupported_from_kubernetes_1_36_and_kept_with_its_reason(scenarios):
    by_id = {c.id: c for c in make_cells(scenarios, ("1.35.4", "1.36.3"), ("bookworm", "sid"))}
    assert by_id["k1-35-4_bookworm"].supported
    assert not by_id["k1-36-3_bookworm"].supported
    assert "supported up to 1.35" in by_id["k1-36-3_bookworm"].unsupported_why
    assert by_id["k1-36-3_sid"].supported and by_id["host_bookworm"].supported
    assert support("1.37.0", "2.1") == (True, "")


@pytest.mark.parametrize("kubernetes,suites,message", [
    (("1.36.3",), ("jessie",), "--suite jessie"),
    (("1.36",), ("sid",), "give a release like"),
])
def test_bad_axes_are_refused_before_anything_runs(scenarios, kubernetes, suites, message):
    with pytest.raises(UsageError, match=message):
        make_cells(scenarios, kubernetes, suites)


def test_a_list_axis_needs_a_value():
    assert cellmod.parse_list("sid, trixie,sid", "suite") == ("sid", "trixie")
    with pytest.raises(UsageError, match="--suite: give at least one"):
        cellmod.parse_list(" , ", "suite")


def test_a_built_containerd_is_a_column_of_its_own_on_sid(scenarios):
    cells = make_cells(scenarios, ("1.35.4",), ("trixie",), built=("2.2.9", "v2.4.2", "2.2.9"))
    assert [c.id for c in cells] == ["host_trixie", "host_containerd-2-2-9", "host_containerd-2-4-2",
                                     "k1-35-4_trixie", "k1-35-4_containerd-2-2-9", "k1-35-4_containerd-2-4-2"]
    built = cells[1]
    assert (built.suite, built.built, built.containerd) == ("sid", "2.2.9", "2.2.9")
    assert built.column == "containerd 2.2.9 (built, sid)"
    assert all(c.supported for c in cells)
    assert run.in_cell(scenarios["containerd-dropin-merge"], built).lab.containerd == "2.2.9"
    assert run._scenario_cmd("containerd-dropin-merge", built)[-2:] == ["--containerd", "2.2.9"]


@pytest.mark.parametrize("built,message", [
    (("2.1.9",), "builds containerd 2.2, 2.3, 2.4 from source"),
    (("1.7.24",), "give a release like 2.2.9"),
    (("latest",), "give a release like 2.2.9"),
])
def test_a_containerd_that_is_not_built_here_is_refused(scenarios, built, message):
    with pytest.raises(UsageError, match=message):
        make_cells(scenarios, ("1.36.3",), ("sid",), built=built)


def test_built_columns_sort_after_the_suites_in_the_pivot():
    m = report.new({})
    for cell, value in ((Cell(HOST, "sid", ("x",), built="2.2.9"), "merged"),
                        (Cell(HOST, "bookworm", ("x",), containerd_series="1.6"), "replaced")):
        entry = report.cell_entry(cell)
        entry["scenarios"]["x"] = {"status": report.MET, "facts": {"cri_table": value}}
        m["cells"].append(entry)
    (pivot,) = [p for p in report.pivots(m) if p["fact"] == "cri_table"]
    assert pivot["columns"] == ["containerd 1.6 (bookworm)", "containerd 2.2.9 (built, sid)"]


def test_a_tracks_own_containerd_of_unknown_series_sorts_after_the_known_ones_in_the_pivot():
    m = report.new({})
    for cell in (Cell("1.36.3", "sid", ("x",), runtime="kubespray"), Cell("1.36.3", "sid", ("x",))):
        entry = report.cell_entry(cell)
        entry["scenarios"]["x"] = {"status": report.MET, "facts": {}}
        m["cells"].append(entry)
    (pivot,) = report.pivots(m)
    assert pivot["columns"] == ["containerd 2.1 (sid)", "containerd installed by kubespray (sid)"]
    assert "containerd installed by kubespray (sid)" in report.render_md(m)


def test_cell_ids_have_no_dots_for_ci_artifact_names():
    assert Cell("1.36.3", "sid", ("x",)).id == "k1-36-3_sid"
    assert "." not in Cell(HOST, "bookworm", ("x",)).id


# -- admission ---------------------------------------------------------------------------
def test_cell_need_is_its_largest_scenario_with_qemu_overhead(scenarios):
    cell = make_cells(scenarios, ("1.36.3",), ("sid",))[1]
    need = schedule.cell_need(cell, scenarios)
    base = schedule.scenario_need(scenarios["kubeadm-baseline"])
    assert need == base  # two machines beat the one-node scenario
    declared = sum(m.memory for m in scenarios["kubeadm-baseline"].lab.machines)
    assert need.memory_mib > declared and need.vcpus == sum(m.cpus for m in scenarios["kubeadm-baseline"].lab.machines)


def test_admission_caps_memory_and_vcpus_and_always_admits_a_lone_cell():
    a, b = schedule.Need(6000, 2), schedule.Need(6000, 2)
    assert schedule.admit([a], b, memory_budget_mib=12000, max_vcpus=4)
    assert not schedule.admit([a], b, memory_budget_mib=11999, max_vcpus=4)
    assert not schedule.admit([a], b, memory_budget_mib=20000, max_vcpus=3)
    assert schedule.admit([], schedule.Need(99999, 64), memory_budget_mib=1000, max_vcpus=1)


def test_waves_follow_admission_in_order():
    needs = [schedule.Need(4000, 1), schedule.Need(4000, 1), schedule.Need(10000, 3), schedule.Need(1000, 1)]
    assert schedule.waves(needs, memory_budget_mib=12000, max_vcpus=4) == [[0, 1], [2, 3]]
    assert schedule.waves(needs, memory_budget_mib=12000, max_vcpus=1) == [[0], [1], [2], [3]]


def test_budget_is_declared_capacity_less_a_reserve():
    assert schedule.budget(24000) == 24000 - schedule.HOST_RESERVE_MIB
    assert schedule.budget(100) == 0


def test_plan_shows_unsupported_cells_estimates_and_the_deadline(scenarios):
    cells = make_cells(scenarios, ("1.36.3",), ("trixie", "sid"))
    opts = run.Options(out=Path("/nonexistent"), deadline_min=90, max_vcpus=4, memory_budget_mib=20000)
    text = "\n".join(run.plan_lines(cells, scenarios, opts))
    assert "k1-36-3_trixie" in text and "UNSUPPORTED, not run" in text
    assert "k1-36-3_sid" in text and "kubeadm-baseline, single-node-taint" in text
    assert "deadline: 90 min" in text and "estimate: ~" in text
    on_demand = "\n".join(run.plan_lines(cells, scenarios, run.Options(out=Path("/x"), memory_budget_mib=20000,
                                                                      run_unsupported=True)))
    assert "unsupported pair, run on demand" in on_demand


# -- pivots, borders, compare, merge -------------------------------------------------------
def matrix_of(values, concurrent=1, scenario="containerd-dropin-merge", fact="cri_table"):
    """values: {(kubernetes, suite): fact value or a status}."""
    m = report.new({"kubernetes": [], "suites": [], "scenarios": [scenario]}, concurrent)
    for (k, suite), v in values.items():
        entry = report.cell_entry(Cell(k, suite, (scenario,)))
        result = entry["scenarios"][scenario]
        if v in report.STATUSES:
            result["status"] = v
        else:
            result.update(status=report.MET, facts={fact: v}, run_dir=f"cells/{entry['id']}/{scenario}/r/report.md")
        m["cells"].append(entry)
    return m


def test_pivot_rows_are_kubernetes_columns_containerd_and_a_border_marks_the_change():
    m = matrix_of({(HOST, "bookworm"): "replaced", (HOST, "trixie"): "replaced", (HOST, "sid"): "merged"})
    [p] = report.pivots(m)
    assert p["rows"] == [HOST]
    assert p["columns"] == ["containerd 1.6 (bookworm)", "containerd 1.7 (trixie)", "containerd 2.1 (sid)"]
    assert report.changes(p) == ["Kubernetes host: containerd 1.7 (trixie) -> containerd 2.1 (sid): replaced -> merged"]
    md = report.render_md(m)
    assert "| host | [replaced](cells/host_bookworm/" in md
    assert "- changes: Kubernetes host: containerd 1.7 (trixie) -> containerd 2.1 (sid)" in md
    html = report.render_html(m)
    assert html.count("class='cl'") == 1  # exactly one border, before `merged`


def test_statuses_stand_in_the_pivot_and_draw_no_border():
    m = matrix_of({("1.35.4", "sid"): "cri", ("1.36.3", "sid"): report.FAIL, ("1.37.0", "sid"): "cri",
                   ("1.36.3", "trixie"): report.UNSUPPORTED}, fact="cgroup_driver_source",
                  scenario="cgroup-driver-mismatch")
    [p] = report.pivots(m)
    assert p["rows"] == ["1.35.4", "1.36.3", "1.37.0"]
    assert p["values"][("1.36.3", "containerd 2.1 (sid)")]["text"] == "FAIL"
    assert p["values"][("1.36.3", "containerd 1.7 (trixie)")]["text"] == "UNSUPPORTED"
    assert report.changes(p) == []
    assert "| 1.35.4 | - | [cri](" in report.render_md(m)  # no cell there: shown as -


def test_vertical_change_between_kubernetes_rows():
    m = matrix_of({("1.35.4", "sid"): "kubelet-config", ("1.36.3", "sid"): "cri"}, fact="cgroup_driver_source",
                  scenario="cgroup-driver-mismatch")
    assert report.changes(report.pivots(m)[0]) == [
        "containerd 2.1 (sid): Kubernetes 1.35.4 -> 1.36.3: kubelet-config -> cri"]
    assert "class='ct'" in report.render_html(m)


def test_timings_carry_a_note_only_when_cells_ran_side_by_side():
    one = matrix_of({("1.36.3", "sid"): 41.5}, fact="ready_s", scenario="kubeadm-baseline")
    assert "side by side" not in report.render_md(one)
    two = matrix_of({("1.36.3", "sid"): 41.5}, concurrent=2, fact="ready_s", scenario="kubeadm-baseline")
    assert "up to 2 cells ran side by side" in report.render_md(two)


def test_compare_marks_what_changed_as_was_then_now():
    before = matrix_of({(HOST, "trixie"): "replaced", (HOST, "sid"): "replaced"})
    now = matrix_of({(HOST, "trixie"): "replaced", (HOST, "sid"): "merged"})
    report.compare(now, before, "old/matrix.json")
    [p] = report.pivots(now)
    assert p["values"][(HOST, "containerd 2.1 (sid)")]["was"] == "replaced"
    assert p["values"][(HOST, "containerd 1.7 (trixie)")]["was"] is None
    md = report.render_md(now)
    assert "replaced → merged" in md and "Compared with `old/matrix.json`" in md
    assert md.count("→") == 2  # the legend and the one changed cell


def test_merge_unions_cells_and_axes_and_the_result_renders(tmp_path):
    a = matrix_of({(HOST, "trixie"): "replaced"})
    a["axes"] = {"kubernetes": [], "suites": ["trixie"], "scenarios": ["containerd-dropin-merge"]}
    b = matrix_of({(HOST, "sid"): "merged"}, concurrent=1)
    b["axes"] = {"kubernetes": [], "suites": ["sid"], "scenarios": ["containerd-dropin-merge"]}
    merged = report.merge([a, b])
    assert [c["id"] for c in merged["cells"]] == ["host_sid", "host_trixie"]
    assert merged["axes"]["suites"] == ["trixie", "sid"]
    path = report.save(merged, tmp_path)
    assert report.load(path)["cells"] == merged["cells"]
    assert "replaced -> merged" in (tmp_path / "matrix.md").read_text()
    with pytest.raises(UsageError, match="no matrix.json"):
        report.merge([])


def test_the_matrix_pages_lead_with_when_which_kubelab_and_the_failures_first():
    m = matrix_of({(HOST, "bookworm"): "replaced", (HOST, "trixie"): report.INFRA, (HOST, "sid"): report.FAIL})
    m.update(kubelab_commit="8891156a1b2c", started_at=1796072400.0, finished_at=1796073000.0, wall_s=600.0)
    infra = next(c for c in m["cells"] if c["id"] == "host_trixie")["scenarios"]["containerd-dropin-merge"]
    infra.update(reason="armed-check failed: fault not in effect", attempts=2, seconds=41.0)
    rows = report.outcomes(m)
    assert [(r["status"], r["cell"]) for r in rows] == [
        ("FAIL", "host_sid"), ("INFRA", "host_trixie"), ("met", "host_bookworm")]
    assert rows[1]["reason"] == "armed-check failed: fault not in effect (2 attempts)"
    md = report.render_md(m)
    assert "- **When:** 2026-11-30 21:00:00 UTC to 2026-11-30 21:10:00 UTC" in md
    assert "- **kubelab:** commit 8891156a1b2c" in md and "- **Wall time:** 600 s" in md
    assert md.index("| FAIL | host_sid |") < md.index("| INFRA | host_trixie |") < md.index("| host_bookworm |")
    page = report.render_html(m)
    assert page.startswith("<!DOCTYPE html>") and "font-family:system-ui" in page
    assert "<h1>kubelab matrix: 1 met, 1 FAIL, 1 INFRA</h1>" in page


def test_a_merged_matrix_keeps_when_and_which_kubelab_of_its_parts():
    a = matrix_of({(HOST, "trixie"): "replaced"})
    a.update(kubelab_commit="aaa", started_at=100.0, finished_at=200.0)
    b = matrix_of({(HOST, "sid"): "merged"})
    b.update(kubelab_commit="bbb", started_at=50.0, finished_at=150.0)
    merged = report.merge([a, b])
    assert (merged["kubelab_commit"], merged["started_at"], merged["finished_at"]) == ("aaa and bbb", 50.0, 200.0)


@pytest.mark.parametrize("content,message", [
    ("{", "not JSON"),
    ('{"schema": "other"}', "not a kubelab matrix record"),
    ('{"schema": "kubelab/matrix", "schema_version": 99}', "schema_version 99"),
])
def test_a_bad_matrix_record_is_refused_with_its_path(tmp_path, content, message):
    path = tmp_path / "m.json"
    path.write_text(content)
    with pytest.raises(UsageError, match=message):
        report.load(path)


# -- the runner, with a stand-in for `invoke scenario` ----------------------------------------
FAKE = textwrap.dedent("""
    import json, os, pathlib, sys, time
    name, plan = sys.argv[1], json.loads(sys.argv[2])
    root = pathlib.Path(os.environ["KUBELAB_RUNS"])
    count = root / f".{name}.attempts"
    n = int(count.read_text()) + 1 if count.exists() else 1
    count.write_text(str(n))
    codes = plan[name]
    if codes == "sleep":
        time.sleep(60)
        sys.exit(0)
    if codes == "nap":
        time.sleep(3)
        codes = [0]
    code = codes[min(n, len(codes)) - 1]
    run = root / name / f"2026-{n}"
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"facts": {"cri_table": "merged"}, "verdict": {"result": "x"},
                                              "machines": {"node1": {"versions": {"containerd": "2.1.5"}}}}))
    (run / "report.md").write_text("report")
    sys.exit(code)
""")


def run_with_fake(tmp_path, plan, suites=("sid",), **kw):
    script = tmp_path / "fake_scenario.py"
    tmp_path.mkdir(parents=True, exist_ok=True)
    script.write_text(FAKE)
    names = tuple(plan)
    cells = [Cell(HOST, suite, names) for suite in suites]
    scenarios = {n: load(find("containerd-dropin-merge")) for n in names}
    opts = run.Options(out=tmp_path / "m", memory_budget_mib=20000, max_vcpus=4,
                       command=lambda name, cell: [sys.executable, str(script), name, json.dumps(plan)], **kw)
    return run.run(cells, scenarios, opts, {"kubernetes": [], "suites": ["sid"], "scenarios": list(names)})


def test_runner_statuses_retry_infra_once_and_read_facts(tmp_path):
    m = run_with_fake(tmp_path, {"ok": [0], "bad": [1], "flaky": [2, 0], "broken": [2, 2]})
    results = m["cells"][0]["scenarios"]
    assert {n: (r["status"], r["attempts"]) for n, r in results.items()} == {
        "ok": ("met", 1), "bad": ("FAIL", 1), "flaky": ("met", 2), "broken": ("INFRA", 2)}
    assert results["ok"]["facts"] == {"cri_table": "merged"} and results["bad"]["facts"] == {}
    assert results["ok"]["containerd_observed"] == "2.1.5"
    assert (tmp_path / "m" / results["ok"]["log"]).read_text().startswith("$ ")
    assert report.load(tmp_path / "m" / "matrix.json")["cells"][0]["scenarios"]["broken"]["status"] == "INFRA"
    assert (tmp_path / "m" / "matrix.md").exists() and (tmp_path / "m" / "matrix.html").exists()


def test_each_run_records_how_many_cells_ran_meanwhile(tmp_path):
    alone = run_with_fake(tmp_path / "alone", {"nap": "nap"})
    assert alone["cells"][0]["scenarios"]["nap"]["cells_side_by_side"] == 1
    # two cells admitted together: each nap overlaps the other's
    both = run_with_fake(tmp_path / "both", {"nap": "nap"}, suites=("sid", "trixie"))
    assert [c["scenarios"]["nap"]["cells_side_by_side"] for c in both["cells"]] == [2, 2]
    assert both["concurrent_cells"] == 2


def test_resume_keeps_complete_runs_and_reruns_the_rest(tmp_path):
    run_with_fake(tmp_path, {"ok": [0], "broken": [2, 2]})
    m = run_with_fake(tmp_path, {"ok": [1], "broken": [2, 2, 0]}, resume=True)
    results = m["cells"][0]["scenarios"]
    assert results["ok"]["status"] == "met"  # kept: the stand-in would now fail it
    assert results["broken"]["status"] == "met"  # rerun: its third attempt passes


def test_the_deadline_stops_what_runs_and_leaves_the_rest_not_run(tmp_path):
    m = run_with_fake(tmp_path, {"slow": "sleep", "later": [0]}, deadline_min=2 / 60)
    results = m["cells"][0]["scenarios"]
    assert results["slow"]["status"] == "INFRA" and results["slow"]["reason"] == "stopped: matrix deadline"
    assert results["later"]["status"] == "NOT RUN" and results["later"]["reason"] == "matrix deadline"


PEEK = textwrap.dedent("""
    import json, pathlib, sys
    matrix = json.loads(pathlib.Path(sys.argv[1]).read_text())
    pathlib.Path(sys.argv[2]).write_text(matrix["cells"][0]["scenarios"]["x"]["status"])
""")


@pytest.mark.parametrize("on_demand", [True, False], ids=["--unsupported", "default"])
def test_an_unsupported_pair_shows_running_while_it_runs_on_demand(tmp_path, on_demand):
    script, seen = tmp_path / "peek.py", tmp_path / "seen"
    script.write_text(PEEK)
    cells = [Cell("1.36.3", "trixie", ("x",), supported=False, unsupported_why="containerd 1.7 under 1.36")]
    opts = run.Options(out=tmp_path / "m", memory_budget_mib=20000, max_vcpus=4, run_unsupported=on_demand,
                       command=lambda name, cell: [sys.executable, str(script), str(tmp_path / "m" / "matrix.json"),
                                                   str(seen)])
    m = run.run(cells, {"x": load(find("cgroup-driver-mismatch"))}, opts,
                {"kubernetes": ["1.36.3"], "suites": ["trixie"], "scenarios": ["x"]})
    status = m["cells"][0]["scenarios"]["x"]["status"]
    if on_demand:
        assert (seen.read_text(), status) == (report.RUNNING, report.MET)
    else:
        assert not seen.exists() and status == report.UNSUPPORTED
    assert report.load(tmp_path / "m" / "matrix.json")["cells"][0]["scenarios"]["x"]["status"] == status


# -- CI export -------------------------------------------------------------------------------
def exported(fmt, scenarios, kubernetes=("1.30.0", "1.36.3"), suites=("trixie", "sid"), deadline=120):
    cells = [c for c in make_cells(scenarios, kubernetes, suites, built=("2.2.9",)) if c.supported]
    return cells, export.export(fmt, cells, deadline)


def check_jsonschema(tmp_path, schema, text, name):
    exe = shutil.which("check-jsonschema") or str(Path(sys.executable).with_name("check-jsonschema"))
    if not Path(exe).exists():
        unavailable("`check-jsonschema` is not installed (scripts/setup installs the test extras: pip install -e '.[test]')")
    path = tmp_path / name
    path.write_text(text)
    return subprocess.run([exe, "--builtin-schema", schema, str(path)], capture_output=True, text=True)


def test_github_export_is_a_valid_workflow_with_one_job_per_cell(tmp_path, scenarios):
    cells, text = exported("github", scenarios)
    result = check_jsonschema(tmp_path, "vendor.github-workflows", text, "matrix.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    doc = yaml.safe_load(text)
    include = doc["jobs"]["cell"]["strategy"]["matrix"]["include"]
    assert [e["cell"] for e in include] == [c.id for c in cells]
    assert all(isinstance(v, str) for e in include for v in e.values())  # 1.30 stays "1.30.0", never a number
    assert '"1.30.0"' in text
    assert doc["jobs"]["cell"]["timeout-minutes"] == 120 + export.JOB_MARGIN_MIN
    assert "--deadline 120" in doc["jobs"]["cell"]["steps"][2]["run"]
    upload = doc["jobs"]["cell"]["steps"][3]
    assert upload["if"] == "always()" and upload["with"]["name"] == "kubelab-cell-${{ matrix.cell }}"
    assert doc["jobs"]["merge"]["needs"] == ["cell"] and doc["jobs"]["merge"]["if"] == "always()"
    # a built-containerd cell runs its column alone: no suite, the containerd to build
    built = next(e for e in include if e["cell"] == "k1-36-3_containerd-2-2-9")
    assert built["suite"] == "" and built["containerd"] == "2.2.9"
    assert '--containerd "${{ matrix.containerd }}"' in doc["jobs"]["cell"]["steps"][2]["run"]


def test_gitlab_export_is_a_valid_pipeline(tmp_path, scenarios):
    cells, text = exported("gitlab", scenarios)
    result = check_jsonschema(tmp_path, "vendor.gitlab-ci", text, ".gitlab-ci.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    doc = yaml.safe_load(text)
    entries = doc["cell"]["parallel"]["matrix"]
    assert [e["CELL"] for e in entries] == [c.id for c in cells]
    assert all(isinstance(v, str) for e in entries for v in e.values())
    assert doc["cell"]["timeout"] == f"{120 + export.JOB_MARGIN_MIN} minutes"
    assert doc["cell"]["artifacts"]["when"] == "always" and "$CELL" in doc["cell"]["artifacts"]["name"]
    assert doc["merge"]["when"] == "always" and doc["merge"]["needs"] == [{"job": "cell", "artifacts": True}]


def test_a_broken_workflow_fails_the_schema_check(tmp_path, scenarios):
    """The validation can fail: a job without runs-on is not a workflow."""
    _, text = exported("github", scenarios)
    doc = yaml.safe_load(text)
    del doc["jobs"]["cell"]["runs-on"]
    result = check_jsonschema(tmp_path, "vendor.github-workflows", yaml.safe_dump(doc), "broken.yml")
    assert result.returncode != 0


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_export_refuses_more_jobs_than_one_matrix_may_generate(fmt):
    limit = export.JOB_LIMITS[fmt]
    cells = [Cell(HOST, "sid", (f"s{i}",)) for i in range(limit + 1)]
    with pytest.raises(UsageError, match=f"at most {limit} jobs"):
        export.export(fmt, cells, 60)
    export.export(fmt, cells[:limit], 60)


def test_export_refuses_an_unknown_format_and_an_empty_matrix():
    with pytest.raises(UsageError, match="choose from github, gitlab"):
        export.export("jenkins", [Cell(HOST, "sid", ("x",))], 60)
    with pytest.raises(UsageError, match="no cell to run"):
        export.export("github", [], 60)


# -- fan-out: which scenarios may share a pooled lab ---------------------------------------------
def test_pool_shape_is_shared_by_same_machines_and_split_by_kubernetes_or_machines(scenarios):
    from harness.scenario import labs

    host = [load(find(n)) for n in ("br-netfilter-missing", "ip-forward-off", "containerd-dropin-merge")]
    shapes = {labs.shape(labs.lab_spec(s, "bookworm", "x")) for s in host}
    assert len(shapes) == 1
    two = labs.shape(labs.lab_spec(scenarios["kubeadm-baseline"], "sid", "x"))
    one = labs.shape(labs.lab_spec(scenarios["single-node-taint"], "sid", "x"))
    assert two != one
    other_k = labs.shape(labs.lab_spec(scenarios["kubeadm-baseline"].with_kubernetes("1.35.4"), "sid", "x"))
    assert other_k != two and other_k[3] == "v1.35.4"


def test_a_pool_is_made_only_for_a_lab_two_scenarios_of_the_cell_share(scenarios):
    both = {"kubeadm-baseline": scenarios["kubeadm-baseline"], "flannel": load(find("flannel-no-brnetfilter")),
            "taint": scenarios["single-node-taint"]}
    cell = Cell("1.36.3", "sid", tuple(both))
    assert run._shared(cell, both, both["kubeadm-baseline"])
    assert not run._shared(cell, both, both["taint"])


def test_with_kubernetes_refuses_a_host_scenario(scenarios):
    with pytest.raises(ValueError, match="installs no Kubernetes"):
        scenarios["containerd-dropin-merge"].with_kubernetes("1.36.3")


def _on_kubespray(scenario, checkout: str = ""):
    from dataclasses import replace

    return replace(scenario, install=replace(scenario.install, track="kubespray", kubespray=checkout,
                                             kubespray_source="install.kubespray" if checkout else ""))


def test_a_track_that_installs_its_own_containerd_is_gated_on_that_one_not_the_suites(scenarios, tmp_path):
    from tests.unit import kubespray_tree

    tree = kubespray_tree.write(tmp_path / "kubespray")  # its download list pins containerd 2.3.4
    mixed = {"kubeadm-baseline": scenarios["kubeadm-baseline"],
             "kubespray-one": _on_kubespray(scenarios["kubeadm-baseline"], str(tree))}
    by_id = {c.id: c for c in make_cells(mixed, ("1.36.3",), ("trixie", "sid"))}
    assert list(by_id) == ["k1-36-3_trixie", "k1-36-3_sid", "k1-36-3_trixie_kubespray", "k1-36-3_sid_kubespray"]
    assert not by_id["k1-36-3_trixie"].supported  # trixie's containerd 1.7 under kubeadm
    own = by_id["k1-36-3_trixie_kubespray"]
    assert own.supported and own.scenarios == ("kubespray-one",) and own.containerd == "2.3.4"
    assert own.column == "containerd 2.3.4 (installed by kubespray, trixie)"
    assert "--containerd" not in run._scenario_cmd("kubespray-one", own)  # it brings its own


def test_its_containerd_unknown_without_a_checkout_a_kubespray_cell_is_not_refused_on_the_suites(scenarios):
    cells = make_cells({"kubespray-one": _on_kubespray(scenarios["kubeadm-baseline"])}, ("1.36.3",), ("bookworm",),
                       built=("2.2.9",))
    assert [(c.id, c.supported, c.column) for c in cells] == [
        ("k1-36-3_bookworm_kubespray", True, "containerd installed by kubespray (bookworm)")]
