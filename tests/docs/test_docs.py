"""The documentation holds to the code (SPEC §26): the site builds with `mkdocs build --strict`
(no broken link or anchor, every reference page generated from the code), every `colibri ...`
command in a shell example parses with the CLI's own parser, and every example marked runnable
runs, in order, page by page, against a temporary store."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from colibri.cli import build_parser
from colibri.cli.anywhere import subcommands_first
from tests.docs.examples import ROOT, Block, blocks, colibri_commands, pages
from tests.helpers import missing_part

BIN = Path(sys.executable).parent
# server-everything as `make npm` installs it (tests/switchboard/npm): an example's `npx -y` finds it
# there, in the folder's node_modules, and needs no download.
NODE_MODULES = ROOT / "tests" / "switchboard" / "npm" / "node_modules"
RUNNABLE = {page: found for page in pages() if (found := [block for block in blocks(page) if block.runnable])}


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [BIN / "mkdocs", "build", "--strict", "--site-dir", tmp_path / "site"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    problems = [line for line in result.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert result.returncode == 0, "mkdocs build --strict failed:\n" + "\n".join(problems or [result.stderr])
    for page in ("index.html", "reference/cli/index.html", "reference/tools/index.html"):
        assert (tmp_path / "site" / page).is_file(), page


def refused(words: list[str]) -> str | None:
    """Why the CLI's own parser refuses `colibri WORDS...`, or None when it takes them."""
    parser = build_parser()
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(subcommands_first(parser, words))
    except SystemExit as exc:
        if exc.code not in (0, None):
            return " ".join(said.getvalue().strip().splitlines()[-1:]) or f"exit {exc.code}"
    return None


def test_every_colibri_command_in_the_docs_parses() -> None:
    wrong: list[str] = []
    for page in pages():
        for block in blocks(page):
            for line, words in colibri_commands(block):
                why = refused(words)
                if why is not None:
                    wrong.append(f"{_name(page)}:{line}: colibri {' '.join(words)}: {why}")
    assert not wrong, "commands the CLI does not take:\n" + "\n".join(wrong)


def test_the_docs_have_runnable_examples() -> None:
    assert len(RUNNABLE) >= 3, f"pages with examples marked runnable: {sorted(map(_name, RUNNABLE))}"


@pytest.mark.parametrize("page", sorted(RUNNABLE), ids=_name)
def test_the_runnable_examples_run(page: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith("COLIBRI_")}
    # `colibri` as the install tutorial puts it on PATH: the venv's bin
    env.update(HOME=str(home), PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}")
    work = tmp_path / "work"
    work.mkdir()
    if any("npx " in block.text for block in RUNNABLE[page]):
        if not (NODE_MODULES / ".bin" / "mcp-server-everything").exists():
            missing_part(f"{NODE_MODULES} has no server-everything; run `make npm`")
        (work / "node_modules").symlink_to(NODE_MODULES)
        env.update(npm_config_offline="true", npm_config_update_notifier="false")
    for block in RUNNABLE[page]:
        _run(block, work, env)


def _run(block: Block, work: Path, env: dict[str, str]) -> None:
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.text],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, (
        f"the example at {block.where} failed (exit {result.returncode}):\n{block.text}\n"
        f"--- stdout\n{result.stdout}--- stderr\n{result.stderr}"
    )


def test_the_readme_is_a_front_page() -> None:
    readme = ROOT / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move what is not a front page to docs/"
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", "\n".join(lines))
    missing = [target for target in targets if "://" not in target and not (ROOT / target).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"
    assert ROOT / "README.md" in RUNNABLE, "README.md's first look is marked runnable"
