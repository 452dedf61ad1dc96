"""report.html and matrix.html opened in a real browser: Debian's chromium, driven by
Playwright for Python with the system browser (never a downloaded one), a fresh profile
and no network. Each page renders without a console error, every relative link in it
resolves to a file of the run, and a report's timeline has one bar per phase. The run
folders are made by the code itself on scripted machines (tests/unit/fake_scenario.py),
no VM. A screenshot of each page is kept beside it (and copied to $KUBELAB_SCREENSHOTS
when that names a folder), to look at."""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
import shutil
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from harness.evidence.render import write_reports
from harness.matrix import run
from harness.matrix.cells import HOST, Cell
from harness.scenario.files import find
from harness.scenario.load import load
from tests.conftest import unavailable
from tests.unit.fake_scenario import host_run

CHROMIUM = "/usr/bin/chromium"  # Debian's package `chromium`
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
FIXTURE = Path(__file__).parent.parent / "fixtures/runs/br-netfilter-missing/run.json"


def _missing() -> str:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (the `test` extras: pip install -e '.[test]')"
    if not os.access(CHROMIUM, os.X_OK):
        return f"Debian's chromium is not installed ({CHROMIUM}; apt-get install chromium, as scripts/setup does)"
    return ""


@contextmanager
def chromium(profile: Path, allowed: str):
    """Debian's chromium under Playwright, a fresh profile, every request outside `allowed` (a URL
    prefix) aborted and kept in the context's `.requests`: a finding, never fetched."""
    missing = _missing()
    if missing:
        unavailable(missing)  # skipped with what is missing; a failure under CI=true
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, headless=True,
                                                       args=FLAGS)
        requests: list[str] = []

        def only_allowed(route):
            if route.request.url.startswith(allowed):
                route.continue_()
            else:
                requests.append(route.request.url)
                route.abort()

        context.route("**/*", only_allowed)
        context.requests = requests
        yield context
        context.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chromium-profile"), "file:") as context:  # pages read from disk
        yield context


class Opened:
    def __init__(self, page, errors: list[str], path: Path):
        self.page, self.errors, self.path = page, errors, path

    def hrefs(self) -> list[str]:
        return self.page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")


def open_page(browser, path: Path) -> Opened:
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path.as_uri(), wait_until="load")
    shot = path.with_suffix(".png")
    page.screenshot(path=str(shot), full_page=True)
    keep = os.environ.get("KUBELAB_SCREENSHOTS")  # a folder to copy every screenshot to, to look at them
    if keep:
        shutil.copy(shot, Path(keep) / f"{path.parent.parent.name}-{path.parent.name}-{shot.name}")
    return Opened(page, errors, path)


def assert_links_resolve(opened: Opened, folder: Path) -> int:
    """Every link is relative and names a file inside `folder`; returns how many there were."""
    hrefs = opened.hrefs()
    for href in hrefs:
        url = urlparse(href)
        assert not url.scheme and not url.netloc and not href.startswith("/"), f"{opened.path}: absolute link {href}"
        target = (opened.path.parent / unquote(url.path)).resolve()
        assert target.is_relative_to(folder.resolve()), f"{opened.path}: {href} leaves the run folder"
        assert target.is_file(), f"{opened.path}: {href} resolves to no file"
    return len(hrefs)


def assert_one_bar_per_phase(opened: Opened, record: dict) -> None:
    bars = opened.page.locator("svg rect")
    assert bars.count() == len(record["phases"])
    svg = opened.page.locator("svg").bounding_box()
    for i, phase in enumerate(record["phases"]):
        assert bars.nth(i).locator("title").text_content().startswith(f"{phase['name']}: {phase['status']}")
        box = bars.nth(i).bounding_box()  # drawn, inside the picture
        assert box and box["width"] >= 1 and svg["x"] <= box["x"] <= svg["x"] + svg["width"]


@pytest.mark.parametrize("name", ["demo", "demo-fail", "demo-infra"])
def test_a_host_run_report_renders_and_every_link_is_a_file_of_the_run(browser, tmp_path, name):
    result = host_run(tmp_path / "runs", name)
    record = json.loads((result.directory / "run.json").read_text())
    opened = open_page(browser, result.directory / "report.html")
    assert opened.errors == [] and browser.requests == []
    assert assert_links_resolve(opened, result.directory) >= len(record["steps"]) + len(record["evidence"])
    assert_one_bar_per_phase(opened, record)
    # what was proved comes before what was done
    headings = opened.page.locator("h2").all_text_contents()
    assert headings.index("What was proved") < headings.index("What was done")


def test_a_kubeadm_run_report_shows_the_cluster_versions(browser, tmp_path):
    from tests.unit.test_kubeadm_track import run as kubeadm_run

    result, _ = kubeadm_run(False, tmp_path)
    record = json.loads((result.directory / "run.json").read_text())
    opened = open_page(browser, result.directory / "report.html")
    assert opened.errors == [] and browser.requests == []
    assert_links_resolve(opened, result.directory)
    assert_one_bar_per_phase(opened, record)
    assert opened.page.get_by_role("cell", name="API server", exact=True).count() == 1


def test_the_example_record_renders_with_its_timeline(browser, tmp_path):
    record = json.loads(FIXTURE.read_text())
    write_reports(tmp_path, record)
    opened = open_page(browser, tmp_path / "report.html")
    assert opened.errors == [] and browser.requests == []
    assert_one_bar_per_phase(opened, record)


def test_the_matrix_page_leads_with_its_context_and_failures_and_links_to_its_runs(browser, tmp_path):
    names = ("demo", "demo-fail", "demo-infra")
    cells = [Cell(HOST, "bookworm", ("demo-fail",)), Cell(HOST, "sid", ("demo", "demo-infra"))]
    scenarios = {n: load(find("containerd-dropin-merge")) for n in names}
    out = tmp_path / "m"
    opts = run.Options(out=out, memory_budget_mib=20000, max_vcpus=4,
                       command=lambda name, cell: [sys.executable, "-m", "tests.unit.fake_scenario", name])
    matrix = run.run(cells, scenarios, opts, {"kubernetes": [], "suites": ["bookworm", "sid"],
                                              "scenarios": list(names)})
    opened = open_page(browser, out / "matrix.html")
    assert opened.errors == [] and browser.requests == []
    assert assert_links_resolve(opened, out) >= 2 * 3  # a report and a log per scenario run
    statuses = opened.page.locator("table").first.locator("tbody tr td:first-child").all_text_contents()
    assert statuses == ["FAIL", "INFRA", "met"]
    body = opened.page.locator("body").inner_text()
    assert f"commit {matrix['kubelab_commit']}" in body and "When:" in body
    font = opened.page.evaluate("getComputedStyle(document.body).fontFamily")
    assert "serif" not in font.replace("sans-serif", "")  # the report's style, not the default serif
    # each linked report opens too
    for href in opened.hrefs():
        if href.endswith("report.md"):
            html_page = (out / href).parent / "report.html"
            assert open_page(browser, html_page).errors == []
