"""A tokens file others may write is refused, naming the file, who may write it and the fix."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from colibri.serving.errors import UnsafeFile
from colibri.serving.exits import EXIT_USAGE
from colibri.serving.secret_files import refuse_if_others_may_write
from tests.helpers import clean_env


@pytest.mark.parametrize(
    ("mode", "who"), [(0o666, "every user"), (0o602, "every user"), (0o664, "its group")]
)
def test_a_file_others_may_write_is_refused(tmp_path: Path, mode: int, who: str) -> None:
    tokens = tmp_path / "tokens.jsonl"
    tokens.write_text("")
    tokens.chmod(mode)
    with pytest.raises(UnsafeFile) as refused:
        refuse_if_others_may_write(tokens)
    assert refused.value.exit_code == EXIT_USAGE
    message = str(refused.value)
    assert str(tokens) in message and who in message and f"{mode:04o}" in message
    assert f"chmod 600 {tokens}" in message and "\n" not in message


@pytest.mark.parametrize("mode", [0o600, 0o644, 0o400])
def test_a_file_only_its_owner_may_write_passes(tmp_path: Path, mode: int) -> None:
    tokens = tmp_path / "tokens.jsonl"
    tokens.write_text("")
    tokens.chmod(mode)
    refuse_if_others_may_write(tokens)


def test_a_missing_file_passes_its_creator_makes_it_0600(tmp_path: Path) -> None:
    tokens = tmp_path / "not-yet.jsonl"
    refuse_if_others_may_write(tokens)
    # The creator is `colibri token create --file`; a umask that takes nothing away shows the
    # mode is its own choice, not the umask's.
    done = subprocess.run(
        [sys.executable, "-m", "colibri", "token", "create", "ci", "--file", str(tokens)],
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        umask=0,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    refuse_if_others_may_write(tokens)
