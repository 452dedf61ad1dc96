"""kubespray's venv: keyed by requirements.txt, made once, reused only when complete. No pip here:
the runner is scripted and makes the files a real `python3 -m venv` and pip would."""

import hashlib
import json

import pytest

from harness.errors import HostError
from harness.kubespray import venv


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBELAB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def requirements(tmp_path):
    f = tmp_path / "requirements.txt"
    f.write_text("ansible-core==2.20.3\nnetaddr==9.9\n")
    return f


class Runner:
    """Records each command; `python -m venv DIR` makes DIR/bin/python, pip makes ansible-playbook."""

    def __init__(self, fail_on: str | None = None):
        self.calls, self.fail_on = [], fail_on

    def __call__(self, argv, timeout):
        self.calls.append(argv)
        if self.fail_on and self.fail_on in argv:
            return 1, "Collecting ansible-core==2.20.3\nERROR: No matching distribution found for ansible-core==2.20.3\n"
        if argv[1:3] == ["-m", "venv"]:
            from pathlib import Path
            (Path(argv[3]) / "bin").mkdir(parents=True)
            (Path(argv[3]) / "bin" / "python").write_text("")
        elif "pip" in argv:
            from pathlib import Path
            (Path(argv[0]).parent / "ansible-playbook").write_text("")
        return 0, "Successfully installed ansible-core-2.20.3\n"


def test_the_key_is_the_first_12_hex_of_requirements_sha256(cache, requirements):
    v = venv.for_requirements(requirements)
    sha = hashlib.sha256(requirements.read_bytes()).hexdigest()
    assert v.key == sha[:12] and v.path == cache / "kubespray-venv" / sha[:12]
    requirements.write_text("ansible-core==2.20.4\n")
    assert venv.for_requirements(requirements).key != sha[:12]


def test_made_once_with_venv_then_pip_and_then_reused(cache, requirements):
    run = Runner()
    v, made = venv.ensure(requirements, run=run, python="/usr/bin/python3")
    assert made and v.complete()
    assert run.calls == [
        ["/usr/bin/python3", "-m", "venv", str(v.path)],
        [str(v.bin("python")), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
         "-r", str(requirements)],
    ]
    marker = json.loads((v.path / venv.MARKER).read_text())
    assert marker["requirements_sha256"] == v.requirements_sha256
    again = Runner()
    assert venv.ensure(requirements, run=again) == (v, False) and again.calls == []


def test_an_incomplete_venv_is_removed_and_made_again(cache, requirements):
    v = venv.for_requirements(requirements)
    (v.path / "bin").mkdir(parents=True)
    (v.path / "bin" / "leftover").write_text("")  # an install that was interrupted: no marker
    run = Runner()
    _, made = venv.ensure(requirements, run=run, python="python3")
    assert made and len(run.calls) == 2 and not (v.path / "bin" / "leftover").exists()


def test_a_marker_for_other_requirements_does_not_count(cache, requirements):
    v, _ = venv.ensure(requirements, run=Runner(), python="python3")
    (v.path / venv.MARKER).write_text(json.dumps({"requirements_sha256": "0" * 64}))
    assert not v.complete()
    (v.path / venv.MARKER).write_text("{not json")
    assert not v.complete()


def test_a_failed_pip_install_leaves_nothing_and_says_why(cache, requirements):
    with pytest.raises(HostError) as info:
        venv.ensure(requirements, run=Runner(fail_on="pip"), python="python3")
    text = str(info.value)
    assert "pip install --disable-pip-version-check --no-input -r" in text and "exited 1" in text
    assert "No matching distribution found for ansible-core==2.20.3" in text
    assert not venv.for_requirements(requirements).path.exists()


def test_the_real_runner_reports_exit_code_and_output(tmp_path):
    assert venv.run_command(["sh", "-c", "echo out; echo err >&2; exit 3"], 10) == (3, "out\nerr\n")
    code, out = venv.run_command(["sleep", "5"], 0.2)
    assert code == -1 and "timed out after 0.2s" in out
