"""Helpers for the log's end-to-end tests: the `colibri` command as a subprocess, a signing key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def colibri(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "colibri", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def generate_key(tmp_path: Path, env: dict[str, str], name: str = "example.com/colibri") -> tuple[Path, str]:
    """A signer key file made by `colibri key generate`, and the verifier key it printed."""
    path = tmp_path / f"{name.replace('/', '_')}.key"
    done = colibri("key", "generate", "--name", name, "--out", str(path), env=env)
    assert done.returncode == 0, done.stderr
    return path, done.stdout.strip()
