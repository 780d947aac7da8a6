"""The suites that need node never skip silently under CI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.node import require_node


def test_missing_npm_packages_fail_under_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="the x tests need what is missing"):
        require_node(tmp_path, ["@modelcontextprotocol/sdk"], "x")


def test_missing_npm_packages_skip_with_the_reason_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"not installed|node and npm are needed"):
        require_node(tmp_path, ["@modelcontextprotocol/sdk"], "x")
