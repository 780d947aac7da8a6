"""The release check of SPEC §26: a wheel that `python -m build` makes passes `twine check`, installs
with pipx into an environment of its own, and its `colibri --version` and `colibri serve` answer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from colibri import __version__
from tests.helpers import INITIALIZE, clean_env

ROOT = Path(__file__).resolve().parents[2]
PING = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "server_ping", "arguments": {}}}


def _source_tree(folder: Path) -> Path:
    """The checkout's files as git sees them (tracked, and new ones not ignored), so the build
    writes its egg-info and build/ in the copy and leaves the checkout as it was."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / name.decode()
        if source.is_file():  # a file deleted in the work tree is still listed by --cached
            target = folder / name.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return folder


def _run(*command: str | Path, env: dict[str, str], timeout: float = 600) -> str:
    result = subprocess.run(
        [str(part) for part in command], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert result.returncode == 0, f"{' '.join(map(str, command))} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.mark.slow
def test_the_wheel_passes_twine_installs_with_pipx_and_serves(tmp_path: Path) -> None:
    tree = _source_tree(tmp_path / "tree")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("COLIBRI_", "PIPX_"))}
    env.update(
        PIPX_HOME=str(tmp_path / "pipx"),
        PIPX_BIN_DIR=str(tmp_path / "bin"),
        PIPX_MAN_DIR=str(tmp_path / "man"),
    )
    _run(sys.executable, "-m", "build", "--outdir", tmp_path / "dist", tree, env=env)
    wheels = sorted((tmp_path / "dist").glob("*.whl"))
    assert [wheel.name for wheel in wheels] == [f"colibri_mcp-{__version__}-py3-none-any.whl"]
    made = sorted((tmp_path / "dist").iterdir())
    checked = _run(sys.executable, "-m", "twine", "check", "--strict", *made, env=env)
    assert "PASSED" in checked and "FAILED" not in checked, checked

    _run(sys.executable, "-m", "pipx", "install", "--python", sys.executable, wheels[0], env=env)
    colibri = tmp_path / "bin" / "colibri"
    assert _run(colibri, "--version", env=env).strip() == f"colibri {__version__}"

    served = subprocess.run(
        [colibri, "serve"],
        input="".join(json.dumps(message) + "\n" for message in (INITIALIZE, PING)),
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert served.returncode == 0, served.stderr
    answers = [json.loads(line) for line in served.stdout.splitlines()]
    assert [answer["id"] for answer in answers] == [1, 2]
    assert answers[0]["result"]["serverInfo"]["name"] == "colibri"
    assert answers[1]["result"]["structuredContent"]["data"]["version"] == __version__
    installed = Path(env["PIPX_HOME"]) / "venvs" / "colibri-mcp"
    assert installed.is_dir(), "pipx installed colibri into an environment of its own"
