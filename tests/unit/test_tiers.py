"""The tiers' own rule (tests/conftest.py): a test needing a tool this host lacks is skipped
naming the tool and how to get it; under CI=true the same is a failure."""

import ast
import re
from pathlib import Path

import pytest

from tests import conftest

MISSING = "kubelab-no-such-tool"


def test_a_missing_tool_is_a_skip_naming_it(monkeypatch):
    monkeypatch.setattr(conftest, "IN_CI", False)
    with pytest.raises(pytest.skip.Exception, match=f"`{MISSING}` is not installed \\(apt-get install it\\)"):
        conftest.require_tool(MISSING, "apt-get install it")


def test_under_ci_a_missing_tool_fails(monkeypatch):
    monkeypatch.setattr(conftest, "IN_CI", True)
    with pytest.raises(pytest.fail.Exception, match=f"CI=true, so this is a failure, not a skip: `{MISSING}`"):
        conftest.require_tool(MISSING, "apt-get install it")


def test_a_present_tool_is_its_path(monkeypatch):
    monkeypatch.setattr(conftest, "IN_CI", True)
    assert conftest.require_tool("sh", "base system").endswith("/sh")


SKIPPING = {"skip", "skipif", "importorskip", "xfail"}


def skips_outside_the_rule(root) -> list[str]:
    """file:line of each pytest.skip / mark.skip / mark.skipif / importorskip / xfail in the tests,
    except inside tests/conftest.py's unavailable(): that one place skips, and fails under CI=true."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        allowed = set()
        if path == root / "conftest.py":
            rule = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "unavailable")
            allowed = {id(n) for n in ast.walk(rule)}
        # pytest.skip.Exception names the outcome (pytest.raises), it skips nothing
        allowed |= {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "Exception"}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in SKIPPING and id(node) not in allowed:
                chain = ast.unparse(node)
                if chain.startswith("pytest."):
                    found.append(f"{path.relative_to(root)}:{node.lineno}: {chain}")
    return found


def test_only_unavailable_skips_a_test():
    assert skips_outside_the_rule(Path(conftest.__file__).parent) == []


def test_the_skip_rule_finds_a_plain_skip_and_a_skip_mark(tmp_path):
    (tmp_path / "conftest.py").write_text("import pytest\n\ndef unavailable(r):\n    pytest.skip(r)\n")
    (tmp_path / "test_a.py").write_text("import pytest\n\n@pytest.mark.skipif(True, reason='x')\n"
                                        "def test_x():\n    pytest.skip('no openssl')\n"
                                        "def test_y():\n    with pytest.raises(pytest.skip.Exception):\n        pass\n")
    assert skips_outside_the_rule(tmp_path) == ["test_a.py:3: pytest.mark.skipif", "test_a.py:5: pytest.skip"]


def test_an_empty_parameter_list_fails_collection_instead_of_skipping(request):
    """A scenario list derived from scenarios/ that came out empty is a loader bug, not a skip."""
    assert request.config.getini("empty_parameter_set_mark") == "fail_at_collect"


BROAD = {None, "Exception", "BaseException"}


def skips_on_any_error(root) -> list[str]:
    """file:line of each unavailable() called in a handler of any error (bare except, Exception):
    a bug would read as a missing prerequisite. Only the error that means "not there" may skip."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for handler in ast.walk(ast.parse(path.read_text())):
            if not isinstance(handler, ast.ExceptHandler):
                continue
            kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            if not any((None if k is None else ast.unparse(k)) in BROAD for k in kinds):
                continue
            for node in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
                if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("unavailable"):
                    found.append(f"{path.relative_to(root)}:{node.lineno}: unavailable() under `except "
                                 f"{ast.unparse(handler.type) if handler.type else ''}`")
    return found


def test_no_test_skips_on_any_error():
    assert skips_on_any_error(Path(conftest.__file__).parent) == []


def test_the_error_rule_finds_a_skip_under_a_broad_handler(tmp_path):
    (tmp_path / "test_a.py").write_text(
        "from tests.conftest import unavailable\n"
        "def test_x():\n    try:\n        load()\n    except Exception as exc:\n        unavailable(str(exc))\n"
        "def test_y():\n    try:\n        load()\n    except (OSError, Exception):\n        unavailable('x')\n"
        "def test_z():\n    try:\n        load()\n    except KitNotBuilt as exc:\n        unavailable(str(exc))\n")
    assert skips_on_any_error(tmp_path) == ["test_a.py:6: unavailable() under `except Exception`",
                                           "test_a.py:11: unavailable() under `except (OSError, Exception)`"]


def test_a_benchmark_that_makes_labs_tears_down_on_a_stop_signal():
    """A benchmark making machines in its own process stops on SIGTERM the way a task does
    (harness/signals.py): without it, a cancelled benchmark left its lab running and orphaned."""
    makes_labs = re.compile(r"\bEngine\(|lifecycle\.up\(|MeteredLabs\(|BackendLabs\(")
    missing = [p.name for p in sorted((Path(__file__).parents[2] / "benchmarks").glob("*.py"))
               if makes_labs.search(p.read_text()) and "signals.run(main)" not in p.read_text()]
    assert missing == []


def test_a_benchmark_that_runs_the_engine_makes_nothing_more_after_a_stop():
    """Engine.run answers a stop by tearing down and returning: a benchmark that went on would
    start the next lab with every further signal ignored (signals.py: cleaning up)."""
    runs = re.compile(r"\bEngine\(")
    missing = [p.name for p in sorted((Path(__file__).parents[2] / "benchmarks").glob("*.py"))
               if runs.search(p.read_text()) and "signals.stop_if_signalled()" not in p.read_text()]
    assert missing == []
