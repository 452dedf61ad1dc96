"""The retry loop a plan step sends (remote/retried.py), run by a real shell: it stops at the
first success, and exits non-zero once every try failed."""

import subprocess


def _run(command: str) -> int:
    return subprocess.run(["sh", "-c", command], timeout=30).returncode


def test_a_retried_command_stops_at_its_first_success(tmp_path):
    from harness.remote.retried import retried

    count = tmp_path / "tries"
    # fails twice, then succeeds: three tries in all
    attempt = f'echo x >> {count}; [ "$(wc -l < {count})" -ge 3 ]'
    assert _run(retried(attempt, tries=5, pause_s=0)) == 0
    assert count.read_text().count("x") == 3


def test_a_retried_command_that_never_succeeds_fails_after_its_tries(tmp_path):
    from harness.remote.retried import retried

    count = tmp_path / "tries"
    assert _run(retried(f"echo x >> {count}; false", tries=4, pause_s=0)) != 0
    assert count.read_text().count("x") == 4
