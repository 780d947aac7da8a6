"""The docs' checks fail, naming what is wrong: a broken link or anchor, an environment page that
no longer lists the variables Colibri reads, a switchboard code the error reference cannot explain,
a command the CLI does not take, an example that fails."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs import test_docs
from tests.docs.examples import ROOT, Block, colibri_commands

BIN = Path(sys.executable).parent


def _build_copy(tmp_path: Path, edit: dict[str, tuple[str, str]]) -> str:
    """`mkdocs build --strict` of a copy of the docs with `edit` (page: (old, new)) applied; its
    output, once it failed."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy2(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    for page, (old, new) in edit.items():
        path = tmp_path / "docs" / page
        text = path.read_text(encoding="utf-8")
        assert old in text, f"{page} no longer holds {old!r}: choose another edit"
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    result = subprocess.run(
        [BIN / "mkdocs", "build", "--strict", "--site-dir", tmp_path / "site"],
        cwd=tmp_path,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode != 0, "the build passed"
    return result.stderr


@pytest.mark.slow
def test_a_broken_link_or_anchor_fails_the_build_naming_it(tmp_path: Path) -> None:
    said = _build_copy(
        tmp_path,
        {
            "tutorials/install.md": ("Next: [a first agent", "[gone](no-such-page.md) [a first agent"),
            "tutorials/first-agent.md": ("reference/tools.md)", "reference/cli.md#colibri-no-such-command)"),
        },
    )
    assert "tutorials/install.md" in said and "no-such-page.md" in said, said
    assert "tutorials/first-agent.md" in said and "#colibri-no-such-command" in said, said


@pytest.mark.slow
def test_an_environment_page_missing_a_variable_fails_the_build_naming_it(tmp_path: Path) -> None:
    said = _build_copy(tmp_path, {"reference/environment.md": ("| `COLIBRI_PRINCIPAL` |", "| `PRINCIPAL` |")})
    assert "reference/environment.md" in said and "COLIBRI_PRINCIPAL" in said, said


def test_a_switchboard_code_without_a_meaning_fails_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "docs" / "hooks"))
    ref_errors = importlib.import_module("ref_errors")
    meanings = dict(ref_errors.SWITCHBOARD_MEANING)
    del meanings["RATE_LIMITED"]
    monkeypatch.setattr(ref_errors, "SWITCHBOARD_MEANING", meanings)
    with pytest.raises(ref_errors.Unexplained, match="RATE_LIMITED"):
        ref_errors.page()


def test_a_command_the_cli_does_not_take_is_named() -> None:
    block = Block(ROOT / "docs" / "example.md", 10, "colibri token create ana --scope admin\n", False)
    [(line, words)] = colibri_commands(block)
    assert line == 11
    why = test_docs.refused(words)
    assert why is not None and "--scope" in why and "'admin'" in why, why
    assert test_docs.refused(["token", "create", "ana", "--scope", "read"]) is None


def test_a_failing_example_is_named_with_its_page_and_line(tmp_path: Path) -> None:
    block = Block(ROOT / "docs" / "example.md", 7, "colibri call no_such_tool\n", True)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(tmp_path)}
    with pytest.raises(AssertionError, match=r"docs/example\.md:7 failed \(exit 1\)"):
        test_docs._run(block, tmp_path, env)
