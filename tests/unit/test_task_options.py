"""Every option of every invoke task, given values it must refuse: exit 2, one line that
names the option and what is allowed, no traceback, and nothing made.

Tasks and options are discovered from tasks.py's collection, so a new task is walked as
soon as it exists (and fails here until each of its options declares a kind). Each case
is a real `invoke` process in a harmless environment: kubelab's folders in a scratch
folder, an empty PATH (no mmdebstrap, qemu-img, virsh, vagrant, ssh or systemctl), Go's
module proxy off, the Debian mirror at a closed loopback port, and `--dry-run` wherever a
task has it. So even a value that slipped through could not boot a machine or start a
build, and every case has a timeout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness.cli_options import Flag, flag, option_kinds
from harness.paths import project_root

ROOT = project_root()
TIMEOUT_S = 60


def collection():
    sys.path.insert(0, str(ROOT))
    try:
        import tasks
    finally:
        sys.path.remove(str(ROOT))
    return tasks.ns


def every_task():
    ns = collection()
    return [(name, ns[name]) for name in sorted(ns.task_names)]


def harmless_env(tmp: Path) -> dict[str, str]:
    (tmp / "bin").mkdir(exist_ok=True)
    return {
        "PATH": str(tmp / "bin"), "HOME": str(tmp / "home"), "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8",
        "KUBELAB_HOME": str(tmp / "kubelab-home"), "KUBELAB_CACHE": str(tmp / "kubelab-cache"),
        "KUBELAB_RUNS": str(tmp / "kubelab-runs"), "KUBELAB_RUN": str(tmp / "kubelab-run"),
        "KUBELAB_MIRROR": "http://127.0.0.1:9/debian", "GOPROXY": "off", "GOTOOLCHAIN": "local",
        "LIBVIRT_DEFAULT_URI": "test:///default",
    }


def names(line: str, option: str) -> bool:
    """The line starts with the option's flag: `--deadline 'abc': ...` or `--ssh: ...`."""
    return line.startswith((f"{flag(option)} ", f"{flag(option)}:"))


def cases(values_per_option: int | None = 1):
    """(task, option, refused value, argv after `invoke`) for every option of every task, with
    the first refused values of its kind (all of them: None). One process costs about a
    second; every refused value of every option is tried in-process below."""
    out = []
    for name, task in every_task():
        kinds = option_kinds(task.body) or {}
        args = task.get_arguments()
        for arg in args:
            kind = kinds.get(arg.name)
            if kind is None:
                continue  # test_every_option_declares_a_kind says which
            for value in kind.refused[:values_per_option]:
                argv = [name]
                for other in args:  # every other required option, with a value its kind takes
                    if other.positional and other.name != arg.name:
                        argv.append(f"{flag(other.name)}={kinds[other.name].sample}")
                if "dry_run" in kinds and arg.name != "dry_run":
                    argv.append("--dry-run")
                argv.append(f"{flag(arg.name)}={value}")
                out.append((name, arg.name, value, argv))
    return out


def test_every_option_declares_a_kind():
    missing = []
    for name, task in every_task():
        kinds = option_kinds(task.body) or {}
        missing += [f"{name} {flag(a.name)}" for a in task.get_arguments() if a.name not in kinds]
    assert not missing, f"options no kind checks (harness/cli_options.py `checked`): {missing}"


def test_every_option_that_takes_a_value_has_values_to_refuse():
    """Only flags (invoke parses them; they take no value) have nothing to refuse."""
    empty = []
    for name, task in every_task():
        for option, kind in (option_kinds(task.body) or {}).items():
            if not kind.refused and not isinstance(kind, Flag):
                empty.append(f"{name} {flag(option)}")
    assert not empty
    assert len(cases(None)) > 50  # the walk is not silently empty


def test_every_refused_value_of_every_option_is_one_line_naming_the_option():
    """In-process, through each option's own kind: every value the walk below could try."""
    from harness.errors import UsageError

    kept = []
    for name, task in every_task():
        kinds = option_kinds(task.body) or {}
        for option, kind in kinds.items():
            for value in kind.refused:
                raw = [value] if task.get_arguments() and any(
                    a.name == option and a.kind is list for a in task.get_arguments()) else value
                try:
                    kind.check(option, raw)
                except UsageError as exc:
                    text = str(exc)
                    assert "\n" not in text and names(text, option) and "allowed: " in text, text
                else:
                    kept.append(f"{name} {flag(option)}={value!r}")
    assert not kept, f"values a kind names as refused but takes: {kept}"


def test_bad_option_values_exit_2_with_one_line_naming_the_option(tmp_path):
    env = harmless_env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    (work / "part.json").write_text("{}")  # something for a glob sample to match

    def run(case):
        task, option, value, argv = case
        try:
            done = subprocess.run([sys.executable, "-m", "invoke", "-r", str(ROOT), *argv], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return f"{' '.join(argv)}: still running after {TIMEOUT_S}s (a value reached the work)"
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        problems = []
        if done.returncode != 2:
            problems.append(f"exit {done.returncode}")
        if "Traceback" in done.stderr:
            problems.append("a traceback")
        if len(lines) != 1:
            problems.append(f"{len(lines)} lines on stderr")
        elif not (lines[0].startswith("kubelab: ") and names(lines[0][9:], option) and "allowed: " in lines[0]):
            problems.append("a line that does not name the option and what is allowed")
        if done.stdout.strip():
            problems.append("output on stdout (work started)")
        return f"{' '.join(argv)}: {', '.join(problems)}\n    {done.stderr.strip()[-600:]}" if problems else ""

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1)) as pool:
        failures = [f for f in pool.map(run, cases()) if f]
    assert not failures, "\n".join(failures)
    made = [p for var in ("KUBELAB_HOME", "KUBELAB_CACHE", "KUBELAB_RUNS") for p in Path(env[var]).rglob("*")]
    assert not made, f"a refused value still made {made[:5]}"


@pytest.mark.parametrize("content,problem", [("[1, 2]", "a JSON object expected, found list"),
                                             ('"a string"', "a JSON object expected, found str"),
                                             ("null", "a JSON object expected, found NoneType"),
                                             ('{"schema": "other/v9"}', "schema 'other/v9'"),
                                             ("not json", "cannot read a run record")])
def test_a_run_json_that_is_not_a_run_record_is_refused(tmp_path, content, problem):
    from harness.errors import UsageError
    from harness.evidence.rerender import read_run

    (tmp_path / "run.json").write_text(content)
    with pytest.raises(UsageError, match=problem):
        read_run(tmp_path)


def test_report_of_a_run_json_that_is_not_an_object_exits_2(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.json").write_text("[1, 2]")
    done = subprocess.run([sys.executable, "-m", "invoke", "-r", str(ROOT), "report", str(run_dir)],
                          env=harmless_env(tmp_path), capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("kubelab: --run-dir ") and "a JSON object expected, found list" in done.stderr
    assert not (run_dir / "report.md").exists()


def test_an_unwritable_runs_folder_is_refused_before_the_run(tmp_path):
    env = dict(harmless_env(tmp_path), KUBELAB_RUNS="/proc/kubelab-runs")
    done = subprocess.run([sys.executable, "-m", "invoke", "-r", str(ROOT), "scenario", "br-netfilter-missing"],
                          env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert done.stderr.startswith("kubelab: KUBELAB_RUNS /proc/kubelab-runs: ")


@pytest.mark.parametrize("argv,said", [
    (["report"], "'report' did not receive required positional arguments: 'run_dir'"),
    (["matrix.run", "--scenario", "br-netfilter-missing", "--dry-run", "--deadline"], "needed value"),
    (["lab.up", "--no-such-option", "1"], "No idea what '--no-such-option' is!"),
    (["no-such-task"], "No idea what 'no-such-task' is!"),
])
def test_invokes_own_parse_errors_exit_2_not_1(tmp_path, argv, said):
    done = subprocess.run([sys.executable, "-m", "invoke", "-r", str(ROOT), *argv], env=harmless_env(tmp_path),
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("kubelab: ") and said in done.stderr and done.stderr.count("\n") == 1
