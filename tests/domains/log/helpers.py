"""Helpers for the log's end-to-end tests: a signing key made by the `colibri` command."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import colibri


def generate_key(tmp_path: Path, env: dict[str, str], name: str = "example.com/colibri") -> tuple[Path, str]:
    """A signer key file made by `colibri key generate`, and the verifier key it printed."""
    path = tmp_path / f"{name.replace('/', '_')}.key"
    done = colibri("key", "generate", "--name", name, "--out", str(path), env=env)
    assert done.returncode == 0, done.stderr
    return path, done.stdout.strip()
