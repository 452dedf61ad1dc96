"""The documentation site (`invoke docs`): its generated pages are what the code and scenarios give
now, MkDocs builds it strictly (a broken link fails), and the built site works in a real browser:
every page in the nav loads without a console error, search finds what a reader looks for, and a
scenario page shows the committed evidence book's verbatim lines."""

from __future__ import annotations

import functools
import re
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from harness.docs import books_page, reference, schema, site
from harness.errors import UsageError
from harness.paths import project_root
from harness.scenario.files import all_files
from tests.unit.test_pages_in_browser import chromium

ROOT = project_root()


def test_the_generated_pages_are_up_to_date():
    assert site.stale() == [], "run `invoke docs` and commit what it wrote"


def test_every_field_the_loader_takes_is_read_and_described():
    fields = schema.read(all_files())
    assert fields.crashes == []  # no value makes the loader raise instead of naming the problem
    assert reference.undocumented(fields) == []
    # read from the loader itself: the check keys are schema_checks' own, in its order
    assert fields.sections["expect[]"][:3] == ["name", "probe", "target"] and "source" in fields.sections["expect[]"]
    assert fields.sections["lab.machines[]"] == ["name", "role", "cpus", "memory"]
    assert fields.fields["expect[].within"].defaults == {"0"}
    assert "bookworm, trixie, sid" in fields.fields["lab.suite"].allowed


def _pages(nav) -> list[str]:
    out = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += _pages(value) if isinstance(value, list) else [value]
    return out


NAV = _pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"])


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    site.build(out)
    return out


def test_the_site_builds_strictly_and_a_broken_link_fails_it(built, tmp_path):
    assert (built / "index.html").is_file() and (built / "scenarios" / "br-netfilter-missing" / "index.html").is_file()
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "docs", copy / "docs")
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    (copy / "docs" / "index.md").write_text((copy / "docs" / "index.md").read_text() + "\n[gone](no-such-page.md)\n")
    with pytest.raises(UsageError, match="no-such-page.md"):
        site.build(tmp_path / "out", config=copy / "mkdocs.yml")


@pytest.fixture(scope="module")
def served(built):
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(built))
    handler.log_message = lambda *a: None
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(served, tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chromium-profile"), served) as context:  # the site on loopback only
        yield context


def _open(browser, url):
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    response = page.goto(url)
    assert response is not None and response.status == 200, url
    return page, errors


def _url(base: str, md: str) -> str:
    path = md.removesuffix(".md")
    return f"{base}/" if path == "index" else f"{base}/{path.removesuffix('/index')}/"


def test_every_page_in_the_nav_loads_without_a_console_error(browser, served):
    assert "index.md" in NAV and "scenarios/flannel-no-brnetfilter.md" in NAV
    for md in NAV:
        page, errors = _open(browser, _url(served, md))
        assert page.locator("h1").count() >= 1, md
        assert errors == [], (md, errors)
        page.close()
    assert browser.requests == []


@pytest.mark.parametrize("words,page_wanted", [("br_netfilter", "scenarios/br-netfilter-missing/"),
                                               ("cgroup driver", "scenarios/cgroup-driver-mismatch/")])
def test_search_finds_what_a_reader_looks_for(browser, served, words, page_wanted):
    page, errors = _open(browser, f"{served}/")
    page.fill("input.md-search__input", words)
    page.wait_for_selector(".md-search-result__item", timeout=20000)
    found = page.eval_on_selector_all(".md-search-result__item a", "els => els.map(e => e.getAttribute('href'))")
    assert any(page_wanted in href for href in found), found
    assert errors == []


def _book_lines() -> dict[str, list[str]]:
    """{scenario: the verbatim lines its claims' committed snippets quote} for every committed book."""
    out: dict[str, list[str]] = {}
    for snippet in sorted((ROOT / "docs" / "books").glob("*/snippets/*.md")):
        if snippet.name.endswith(".timings.md"):
            continue
        scenario, in_code = None, False
        for line in snippet.read_text().splitlines():
            if line.startswith("Scenario `"):
                scenario = line.split("`")[1]
            elif line.startswith("```"):
                in_code = not in_code
            elif in_code and scenario and len(line) > 20:
                out.setdefault(scenario, []).append(line)
    return out


def test_a_scenario_page_shows_the_committed_books_verbatim_lines(browser, served):
    lines = _book_lines()
    assert "br-netfilter-missing" in lines  # the host chapter's book is committed
    assert "sysctl: cannot stat /proc/sys/net/bridge/bridge-nf-call-iptables: No such file or directory" \
        in lines["br-netfilter-missing"]
    # the kubeadm chapter's book: flanneld's own line (flannel main.go v0.28.4) on flannel-no-brnetfilter's page
    assert any("Failed to check br_netfilter: stat /proc/sys/net/bridge/bridge-nf-call-iptables: no such file or "
               "directory" in line for line in lines["flannel-no-brnetfilter"])
    for scenario, quoted in lines.items():
        page, _ = _open(browser, f"{served}/scenarios/{scenario}/")
        evidence = " ".join(page.inner_text("article").split())  # as displayed: tabs and runs of blanks one space
        for line in quoted:
            assert " ".join(line.split()) in evidence, (scenario, line)
        page.close()


def test_readmes_book_lines_link_sections_the_built_books_page_has(built):
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\(docs/evidence-books\.md#([\w-]+)\)", readme)
    chapters = yaml.safe_load(site.course_claims().read_text())["chapters"]
    assert len(links) == len(chapters) >= len(list((ROOT / "docs" / "books").glob("*/book.json"))) >= 1
    page = (built / "evidence-books" / "index.html").read_text()
    for anchor in links:
        assert f'id="{anchor}"' in page, anchor


def test_a_claim_id_in_readme_or_on_the_books_page_opens_its_evidence(built):
    """One click from a claim id to its verbatim evidence: the link's anchor is the claim's heading,
    and the snippet included under it is that claim's."""
    readme = (ROOT / "README.md").read_text()
    readme_links = re.findall(r"\[(\w+)\]\(docs/scenarios/([\w-]+)\.md#(\w+)\)", readme)
    page = (built / "evidence-books" / "index.html").read_text()
    page_links = re.findall(r'<a href="\.\./scenarios/([\w-]+)/#(\w+)">(\w+)</a>', page)
    assert {c for c, _, _ in readme_links} >= {"H1", "K8", "K14"} and {c for _, _, c in page_links} >= {"H1", "K8"}
    for claim, scenario, anchor in readme_links + [(c, s, a) for s, a, c in page_links]:
        assert anchor == claim.lower()
        html = (built / "scenarios" / scenario / "index.html").read_text()
        heading = re.search(rf'<h3 id="{anchor}">.*?</h3>(.*?)(?:<h3 |</article>)', html, re.S)
        assert heading, (scenario, claim)
        assert f"{claim}: " in heading.group(1), (scenario, claim)  # the snippet's first line: "K8: holds"


def test_a_chapter_with_no_committed_book_is_said_to_have_none():
    books = [("host", {"chapters": {"host": "Host preparation"}, "built_at": 0, "wall_s": 60.0, "repeat": 1,
                       "concurrent_cells": 1,
                       "claims": [{"id": "H1", "verdict": "holds", "says": "x"}]})]
    missing = books_page.unbuilt({"host": "Host preparation", "kubespray": "The kubespray track"},
                                 [("H1", "host"), ("S1", "kubespray"), ("S2", "kubespray")], books)
    assert missing == [("kubespray", "The kubespray track", ["S1", "S2"])]
    assert books_page.readme_table(books, missing).splitlines()[-1] == \
        "| [The kubespray track](docs/evidence-books.md#the-kubespray-track) | S1-S2: no book yet | - | - | - |"
    assert "No book of this chapter is committed yet: claims S1-S2 have no evidence here." in \
        books_page.page(books, {}, missing)


def test_a_books_line_says_its_claims_verdicts_wall_time_and_kubespray_checkout():
    book = {"chapters": {"kubespray": "The kubespray track"}, "built_at": 1796616000.0, "wall_s": 5400.0,
            "provenance": {"kubelab": ["abc"], "kubespray": ["v2.31.0-96-g46dbdd399 (46dbdd3994b3)"]},
            "claims": [{"id": f"S{n}", "verdict": "holds" if n != 4 else "does not hold"} for n in range(1, 10)]}
    (line,) = books_page.readme_table([("kubespray", book)]).splitlines()[2:]
    assert line == ("| [The kubespray track](docs/evidence-books.md#the-kubespray-track) | S1-S9: 8 of 9 hold | "
                    "2026-12-07 | 90.0 min | `v2.31.0-96-g46dbdd399 (46dbdd3994b3)` |")


@pytest.mark.parametrize("ids, text", [(["S1", "S2", "S3"], "S1-S3"), (["K1", "K3", "K4", "H2"], "K1, K3-K4, H2"),
                                       (["K10", "K11", "S9"], "K10-K11, S9"), ([], "")])
def test_claim_ids_are_said_as_ranges(ids, text):
    assert books_page.id_ranges(ids) == text


def test_a_resumed_books_line_gives_its_runs_span_not_the_resumed_invocations_wall():
    book = {"chapters": {"kubespray": "The kubespray track"}, "built_at": 1796616000.0, "wall_s": 600.0,
            "kept_runs": 3, "runs_span_s": 6000.0, "repeat": 1, "concurrent_cells": 1,
            "claims": [{"id": "S1", "verdict": "holds", "says": "x", "scenarios": ["a"]}]}
    assert "| 100.0 min of runs (resumed) |" in books_page.readme_table([("kubespray", book)])
    assert "- built 2026-12-07 in 600 s (resumed: 3 run(s) kept from an earlier build; the runs span 6000 s)" \
        in books_page.page([("kubespray", book)])
