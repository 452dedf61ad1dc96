"""The tiers' own rule (tests/conftest.py): a test needing a tool this host lacks is skipped
naming the tool and how to get it; under CI=true the same is a failure."""

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
