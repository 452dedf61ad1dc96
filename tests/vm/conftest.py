import json
import time

import pytest

from harness.paths import project_root

from .helpers import invoke

CLAIMS = str(project_root() / "claims" / "course.yaml")


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/vm/" in str(item.fspath):
            item.add_marker(pytest.mark.vm)


def evidence(*args: str, timeout: int = 3600):
    """`invoke evidence` of the host chapter on bookworm: (exit code, output, seconds)."""
    started = time.monotonic()
    proc = invoke("evidence", "--claims", CLAIMS, "--chapter", "host", "--suite", "bookworm", *args)
    out, _ = proc.communicate(timeout=timeout)
    return proc.returncode, out, time.monotonic() - started


@pytest.fixture(scope="session")
def host_book(tmp_path_factory, libvirt_backend, bookworm_image):
    """The evidence book of the host claims, built once on real guests: one `invoke matrix` cell
    on bookworm whose scenarios share a pooled lab, restored from its snapshot per scenario.
    It is both the first of the two books test_evidence_book.py compares and the run of every
    host scenario test_scenarios.py asserts on (one set of guests for both, CI's budget).
    Returns (book folder, exit code, output, seconds)."""
    folder = tmp_path_factory.mktemp("books") / "first"
    code, out, seconds = evidence("--out", str(folder), "--deadline", "30")
    print(f"\nevidence book of the host claims (every host scenario on one pooled lab): {seconds:.0f} s")
    return folder, code, out, seconds


def matrix_of(book) -> tuple:
    """The matrix folder of a book's first repeat and its matrix.json."""
    out = book / "runs" / "1"
    return out, json.loads((out / "matrix.json").read_text())
