"""The evidence book of the host claims (H1-H5) on real guests: built twice with nothing changed
(every snippet the same bytes, nothing reported changed), then written again from a copy of the
first book's runs with one matched line edited: that claim, and only it, changed.

On bookworm only (`--suite bookworm`): one matrix cell, its five scenarios on one pooled lab, so
each build is one boot and about five snapshot restores; the first build is also the run of the
host scenarios that test_scenarios.py asserts on; H4 across the suites is the matrix test's
(test_scenarios.py), and the pivot of a claim across versions is a unit test's."""

import json
import shutil

import pytest

from .conftest import evidence, matrix_of
from .helpers import assert_matrix_left_nothing

HOST_CLAIMS = ["H1", "H2", "H3", "H4", "H5"]
EDITED_CHECK = "sysctl-reports-missing-key"  # an H1 check: its matched line is edited in the copy


def snippets(folder):
    return {p.name: p.read_bytes() for p in sorted((folder / "snippets").iterdir())}


@pytest.fixture(scope="module")
def books(host_book):
    """The first book is the session's (conftest.py: the host scenarios' run as well); the second
    is built again, in turn, with nothing changed and compared with the first (`--compare`)."""
    first, code, out, seconds = host_book
    root = first.parent
    second = evidence("--out", str(root / "second"), "--compare", str(first), "--deadline", "30")
    print(f"\nevidence book of the host claims: built in {seconds:.0f} s, again in {second[2]:.0f} s")
    return root, (code, out, seconds), second


def test_the_host_claims_hold_on_real_guests_and_their_runs_left_nothing(books):
    root, (code, out, _), _ = books
    assert code == 0, out[-3000:]
    record = json.loads((root / "first" / "book.json").read_text())
    claims = {c["id"]: c for c in record["claims"]}
    assert sorted(claims) == HOST_CLAIMS
    assert {i: c["verdict"] for i, c in claims.items()} == {i: "holds" for i in HOST_CLAIMS}
    # containerd 1.6 replaces the CRI table; the 2.x checks are gated out, and the snippet says so
    [fact] = claims["H4"]["facts"]
    assert {c["cell"]: c["values"] for c in fact["cells"]} == {"host_bookworm": ["replaced"]}
    h4 = (root / "first" / "snippets" / "H4.md").read_text()
    assert "cri_table" in h4 and "replaced" in h4 and "not evaluated here: expect `v2-config-toml-table-kept`" in h4
    h1 = (root / "first" / "snippets" / "H1.md").read_text()
    assert "cannot stat /proc/sys/net/bridge/bridge-nf-call-iptables: No such file or directory" in h1
    assert "command: `sysctl net.bridge.bridge-nf-call-iptables`" in h1
    assert_matrix_left_nothing(matrix_of(root / "first")[0])


def test_built_again_with_nothing_changed_every_snippet_is_the_same(books):
    root, _, (code, out, _) = books
    assert code == 0, out[-3000:]
    assert snippets(root / "second") == snippets(root / "first")
    record = json.loads((root / "second" / "book.json").read_text())
    assert {c["id"]: c["changes"] for c in record["claims"]} == {i: [] for i in HOST_CLAIMS}
    assert "no claim changed" in (root / "second" / "index.md").read_text()

    def runs(book):
        return {(r["run_id"], r["started_at"], r["status"]) for c in book["claims"] for cell in c["cells"]
                for s in cell["scenarios"] for r in s["runs"]}

    first_runs, second_runs = runs(json.loads((root / "first" / "book.json").read_text())), runs(record)
    assert len(second_runs) == 5 and {status for _, _, status in second_runs} == {"met"}
    assert first_runs.isdisjoint(second_runs)  # runs of its own, not the first book's
    assert_matrix_left_nothing(matrix_of(root / "second")[0])


def test_a_book_from_runs_with_one_matched_line_edited_reports_that_claim_changed(books):
    root, _, _ = books
    edited = root / "edited"
    shutil.copytree(root / "first", edited)
    [run_json] = [p for p in (edited / "runs" / "1" / "cells" / "host_bookworm").glob("br-netfilter-missing/*/run.json")]
    run = json.loads(run_json.read_text())
    [obs] = [o for o in run["observations"] if o["check"] == EDITED_CHECK]
    was = obs["matched"]
    obs["matched"] = '"net.bridge.bridge-nf-call-iptables" is an unknown key'
    run_json.write_text(json.dumps(run, indent=2))
    code, out, seconds = evidence("--out", str(edited), "--resume", "--compare", str(root / "first"), timeout=600)
    assert code == 0, out[-3000:]
    assert out.count("kept from the previous run (met)") == 5, out  # nothing ran again
    record = json.loads((edited / "book.json").read_text())
    changed = {c["id"]: c["changes"] for c in record["claims"] if c["changes"]}
    assert list(changed) == ["H1"], changed
    [change] = changed["H1"]
    assert f"matched line of expect {EDITED_CHECK}: `{was}` -> `\"net.bridge" in change
    assert (edited / "snippets" / "H1.md").read_bytes() != (root / "first" / "snippets" / "H1.md").read_bytes()
    assert {n: b for n, b in snippets(edited).items() if n != "H1.md"} == \
        {n: b for n, b in snippets(root / "first").items() if n != "H1.md"}
    md = (edited / "index.md").read_text()
    assert md.index("Changes since") < md.index("## Claims")
    print(f"\nbook written again from the edited runs in {seconds:.0f} s")
