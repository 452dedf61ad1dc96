"""Reports rendered from a real run's record (tests/fixtures/runs/br-netfilter-missing: a run
of that scenario on a bookworm guest here, met), and from that record with one check turned
not met where a test needs a failure."""

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from harness.evidence.render import html, junit, markdown, proof, write_reports

FIXTURE = Path(__file__).parent.parent / "fixtures/runs/br-netfilter-missing/run.json"
KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END OPENSSH PRIVATE KEY-----"


def load() -> dict:
    return json.loads(FIXTURE.read_text())


def not_met() -> dict:
    """The real run as if its sysctl had read 0 after the fix: one verify check not met."""
    run = load()
    for o in run["observations"]:
        if o["check"] == "bridge-nf-call-iptables-is-1":
            o.update(met=False, value="0", matched="")
    run["verdict"] = {"result": "not-met", "exit_code": 1,
                      "reason": "1 check not met: verify bridge-nf-call-iptables-is-1 on node1"}
    return run


def _phase_seconds(run: dict, name: str) -> float:
    phase = next(p for p in run["phases"] if p["name"] == name)
    return phase["finished_at"] - phase["started_at"]


def incomplete() -> dict:
    run = load()
    run["status"] = "incomplete"
    run["finished_at"] = None
    run["verdict"] = {"result": "interrupted", "exit_code": 130, "reason": "interrupted"}
    run["phases"] = run["phases"][:5]
    run["phases"][-1].update(status="running", finished_at=None)
    reached = {p["name"] for p in run["phases"]}
    run["observations"] = [o for o in run["observations"] if o["phase"] in reached]
    return run


class WellFormed(HTMLParser):
    """Checks every opened tag is closed in order; collects the SVG's tags."""

    VOID = {"meta", "br", "hr", "img", "link", "input"}

    def __init__(self):
        super().__init__()
        self.stack, self.svg = [], []

    def handle_starttag(self, tag, attrs):
        if "svg" in self.stack or tag == "svg":
            self.svg.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if "svg" in self.stack:
            self.svg.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        assert self.stack and self.stack.pop() == tag, f"unbalanced </{tag}>"


def parse(page: str) -> WellFormed:
    p = WellFormed()
    p.feed(page)
    p.close()
    assert p.stack == []
    return p


def test_markdown_tells_what_was_done_and_seen():
    run = load()
    md = markdown(run)
    assert md.startswith("# br-netfilter-missing: met")
    for step in run["steps"]:
        assert f"\n{step['command']}\n" in md
    assert "\nsysctl: cannot stat /proc/sys/net/bridge/bridge-nf-call-iptables: No such file or directory\n" in md
    assert f"| prepare | ok | {_phase_seconds(run, 'prepare'):.1f} |  |" in md
    assert "| install | skipped | 0.0 | install track `none` |" in md
    assert "procps-ng src/sysctl.c ReadSetting() (4.0.2 in bookworm" in md
    assert f"| recovery (recover phase) | {_phase_seconds(run, 'recover'):.1f} |" in md
    assert f"| total (run) | {run['finished_at'] - run['started_at']:.1f} |" in md
    assert "[serial console (serial, node1)](evidence/node1.serial.log)" in md
    ip = run["machines"]["node1"]["ip"]
    assert f"| node1 | {ip} | Debian GNU/Linux 12 (bookworm) | 6.1.0-50-cloud-amd64 |" in md
    assert "INCOMPLETE" not in md


def test_incomplete_run_warns_and_names_the_phases_not_reached():
    md = markdown(incomplete())
    warning = md.split("## Summary")[0]
    assert "INCOMPLETE RUN" in warning
    assert "Phases not reached: recover, verify, collect, teardown." in warning
    assert "Still running when it stopped: expect." in warning
    assert "| total (run) | — |" in md
    assert "INCOMPLETE RUN" in html(incomplete())


def test_html_is_well_formed_with_a_timeline():
    run = load()
    page = html(run)
    svg = parse(page).svg
    assert [t for t, _ in svg].count("rect") == len(run["phases"])
    marks = [a for t, a in svg if a.get("class") == "mark"]
    assert len(marks) == sum(o["met"] is True for o in run["observations"])
    assert "<script" not in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_html_escapes_injected_markup():
    run = load()
    run["scenario"]["summary"] = "<script>alert(1)</script> & co"
    page = html(run)
    parse(page)
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in page


def test_junit_counts_asserted_checks_and_skipped_phases():
    run = not_met()
    suite = ET.fromstring(junit(run))
    assert suite.tag == "testsuite" and suite.get("name") == "kubelab.br-netfilter-missing"
    asserted = sum(1 for o in run["observations"] if o["met"] is not None)  # observe checks assert nothing
    assert {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")} == \
        {"tests": str(asserted + 1), "failures": "1", "errors": "0", "skipped": "1"}
    failed = suite.find("testcase[failure]")
    assert failed.get("classname") == "br-netfilter-missing.verify"
    assert failed.get("name") == "bridge-nf-call-iptables-is-1 [node1]"
    assert "equals '1'" in failed.find("failure").get("message")
    assert suite.find("testcase[skipped]").find("skipped").get("message") == "install track `none`"


def test_junit_reports_an_incomplete_run_as_an_error():
    run = incomplete()
    suite = ET.fromstring(junit(run))
    asserted = sum(1 for o in run["observations"] if o["met"] is not None)
    assert (suite.get("tests"), suite.get("errors")) == (str(asserted + 2), "1")  # + install skipped, + the run
    error = suite.find("testcase[@name='run completed']/error")
    assert "recover, verify, collect, teardown" in error.get("message")


def test_a_private_key_in_step_output_is_never_emitted(tmp_path):
    run = not_met()
    run["steps"][0]["command"] = f"cat /root/.ssh/id_ed25519\n{KEY}"
    failed = next(o for o in run["observations"] if o["met"] is False)
    failed["value"] = KEY  # the failed check, so junit shows it too
    for path in write_reports(tmp_path, run):
        text = path.read_text()
        assert "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU" not in text and "BEGIN OPENSSH" not in text
        assert "[REDACTED PRIVATE KEY]" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junit.xml", "report.html", "report.md"]


# Every kind of value a record can hold where a probe's reading goes: a command probe
# gives its exit code (int), a sysctl a string, a module probe a bool, the containerd
# dump lists and mappings, a missing reading None.
OBSERVED_VALUES = [0, 1, 3.5, True, False, None, "", "text\nwith lines", ["a", 1], {"k": {"nested": [1, 2]}}]


def test_every_kind_of_observation_value_renders(tmp_path):
    run = load()
    template = run["observations"][0]
    run["observations"] = [{**template, "check": f"value {i}", "value": v, "matched": None, "expected": v}
                           for i, v in enumerate(OBSERVED_VALUES)]
    run["steps"][0]["exit_code"] = 2
    written = write_reports(tmp_path, run)
    assert sorted(p.name for p in written) == ["junit.xml", "report.html", "report.md"]
    md = (tmp_path / "report.md").read_text()
    assert "```\n0\n```" in md and "```\ntrue\n```" in md
    assert '"nested": [' in md
    parse((tmp_path / "report.html").read_text())
    ET.fromstring((tmp_path / "junit.xml").read_text())


def test_a_failed_command_probe_with_an_int_exit_code_renders():
    run = load()
    run["observations"][0].update(probe="command: false", value=1, met=False, expected={"equals": 0})
    assert "```\n1\n```" in markdown(run)
    parse(html(run))


def test_facts_get_their_own_table_unknown_included():
    run = load()
    run["facts"] = {"cri_table": "merged", "ready_s": "unknown"}
    md = markdown(run)
    assert "## Facts" in md and "| cri_table | merged |" in md and "| ready_s | unknown |" in md
    assert md.index("## Facts") < md.index("## Versions")


def test_the_report_leads_with_what_was_proved_before_what_was_done():
    md = markdown(not_met())
    order = [md.index(h) for h in ("## What was proved", "## Summary", "## Versions", "## What was done",
                                   "## What was seen")]
    assert order == sorted(order)
    proved = md.split("## What was proved")[1].split("\n## ")[0]
    assert "Verdict: not-met (exit code 1): 1 check not met: verify bridge-nf-call-iptables-is-1 on node1." in proved
    assert "### The fault took: 2 of 2 met" in proved and "### After the fix: 3 of 4 met" in proved
    assert ("| sysctl-reports-missing-key | node1 | ✔ met | "
            "sysctl: cannot stat /proc/sys/net/bridge/bridge-nf-call-iptables: No such file or directory |") in proved
    assert "| bridge-nf-call-iptables-is-1 | node1 | ✘ not met | read 0; expected equals '1' |" in proved
    assert "Verdict: met (exit code 0): every expectation and check was met." in markdown(load())


INIT_LOG = "[init] Using Kubernetes version: v1.36.3\n" + "".join(f"[preflight] line {i}\n" for i in range(57))


@pytest.mark.parametrize("obs,line", [
    ({"met": True, "matched": "", "value": INIT_LOG, "expected": "absent 'br_netfilter'"},
     "no line matches 'br_netfilter' (58 lines read)"),
    ({"met": False, "matched": "[preflight] line 3", "value": INIT_LOG, "expected": "absent 'line 3'"},
     "this line matches 'line 3': [preflight] line 3"),
    ({"met": False, "matched": "", "value": 1, "expected": "pattern 'Ready'"},
     "no line matches 'Ready' (the output is in the check's log)"),
    ({"met": True, "matched": "a\nb\nc", "value": "", "expected": "pattern 'a'"}, "a (+2 lines in the record)"),
    ({"met": True, "matched": "2", "value": 2, "expected": "equals 2"}, "read 2 (equals 2)"),
    ({"met": None, "matched": "not applicable: versions containerd <2.0 (machine has containerd 2.1.9~ds1-1)",
      "value": None, "expected": "equals 'x'"},
     "not applicable: versions containerd <2.0 (machine has containerd 2.1.9~ds1-1)"),
])
def test_the_line_that_proves_a_check(obs, line):
    assert proof(obs) == line


def test_containerd_shows_its_real_version_and_a_binary_that_is_not_debians():
    run = load()
    run["machines"]["node1"]["versions"].update(containerd="2.1.9~ds1-1", containerd_reported="2.1.9+unknown",
                                                 containerd_package="2.1.9~ds1-1")
    run["machines"]["node2"] = {"ip": "192.168.100.11", "versions": {
        **run["machines"]["node1"]["versions"], "containerd": "2.2.9", "containerd_reported": "2.2.9"}}
    md = markdown(run)
    assert "| 2.1.9~ds1-1 |" in md and "+unknown" not in md
    assert "| 2.2.9 (replaces Debian's 2.1.9~ds1-1) |" in md


def test_verify_layer_findings_are_a_group_of_their_own_in_their_own_words(tmp_path):
    from harness.evidence.record import RunRecord
    from harness.verify.finding import Finding

    run = load()
    record = RunRecord(tmp_path, {"observations": []})  # what the engine records for a finding
    for f in (Finding("etcd", "members healthy", "holds", "1 member: cp1 (https://192.168.100.10:2379)", "API"),
              Finding("dns", "autoscaler", "not applicable", "no dns-autoscaler Deployment", "API"),
              Finding("certificates", "apiserver lifetime", "does not hold", "apiserver: 30 days left", "cp1: openssl")):
        record.finding("verify", f, run["phases"][-1]["started_at"])
    run["observations"] += record.data["observations"]
    md = markdown(run)
    layers = md.split("### The cluster, layer by layer: 1 of 2 met, 1 not asserted")[1].split("\n## ")[0]
    assert "| etcd: members healthy | cluster | ✔ holds | 1 member: cp1 (https://192.168.100.10:2379) |" in layers
    assert "| dns: autoscaler | cluster | — not applicable | not applicable: no dns-autoscaler Deployment |" in layers
    assert "| certificates: apiserver lifetime | cluster | ✘ does not hold | apiserver: 30 days left |" in layers
    assert "### After the fix: 4 of 4 met\n" in md  # the scenario's own verify checks stay apart


def test_an_install_that_replaced_the_runtime_shows_what_it_left_beside_what_the_image_had():
    run = load()
    before = run["machines"]["node1"]["versions"]
    run["machines"]["node1"]["versions_after_install"] = {**before, "containerd": "2.3.4", "runc": before["runc"]}
    md = markdown(run)
    assert "### After the install" in md
    assert f"| node1 | 2.3.4 (was {before['containerd']}) | {before['runc']} |" in md
    assert "After the install" not in markdown(load())  # an install that kept it: nothing added
