"""`colibri call` shows what matters to one call on stderr: the server's warnings (a first boot's
new signing key), not `colibri serve`'s banner, unless COLIBRI_LOG_LEVEL asks for more."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import clean_env, colibri

BANNER = "serving MCP on stdio"


def test_call_prints_no_banner_but_keeps_the_servers_warnings(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    assert "COLIBRI_LOG_LEVEL" not in env
    first = colibri("call", "server_ping", env=env, timeout=60)
    assert first.returncode == 0, first.stderr
    assert BANNER not in first.stderr
    assert "WARNING colibri.log: created checkpoint signing key" in first.stderr, first.stderr
    again = colibri("call", "server_ping", env=env, timeout=60)
    assert again.returncode == 0 and again.stderr == "", again.stderr
    asked = colibri("call", "server_ping", env={**env, "COLIBRI_LOG_LEVEL": "info"}, timeout=60)
    assert asked.returncode == 0 and BANNER in asked.stderr, asked.stderr
