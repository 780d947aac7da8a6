"""SPEC §14's HTTP limits as DEFAULTS: nothing in these tests sets a `COLIBRI_HTTP_*` variable.

The 4 MiB body cap and the 256 sessions in all are shown on a running `colibri serve --http`:
a body of exactly 4 MiB passes the cap and one byte more is 413; 256 sessions open and the next
is refused. (32 per token is shown with its default in test_http_limits.py.) The times, 30 s for
a body and 600 s for an idle session, are too long to wait for in a test: their defaults are read
where the command reads them, from an environment without the variables.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx2
import pytest

from colibri.cli.http_address import http_limits
from colibri.serving.http_limits import HttpLimits
from tests.helpers import INITIALIZE, MCP_HEADERS
from tests.http.helpers import http_env, make_token, running

MIB = 1024 * 1024


def test_the_documented_defaults_are_what_the_command_reads_from_an_empty_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [name for name in os.environ if name.startswith("COLIBRI_")]:
        monkeypatch.delenv(name)
    limits = http_limits("serve")
    assert limits == HttpLimits()
    assert limits is not None
    assert (limits.max_body_bytes, limits.max_form_bytes) == (4 * MIB, 16 * 1024)
    assert (limits.body_timeout_s, limits.session_idle_s) == (30.0, 600.0)
    assert (limits.max_sessions, limits.max_sessions_per_principal) == (256, 32)
    assert (limits.header_timeout_s, limits.max_connections) == (10.0, 512)


def _padded_initialize(size: int) -> bytes:
    """An initialize request of exactly `size` bytes: JSON followed by blanks, which JSON allows."""
    body = json.dumps(INITIALIZE).encode()
    return body + b" " * (size - len(body))


def test_a_body_of_4_mib_passes_the_default_cap_and_one_byte_more_is_413(tmp_path: Path) -> None:
    with running(http_env(tmp_path), tmp_path, "--no-auth") as server, httpx2.Client(timeout=60) as http:
        at_the_cap = http.post(server.url, content=_padded_initialize(4 * MIB), headers=MCP_HEADERS)
        over_it = http.post(server.url, content=_padded_initialize(4 * MIB + 1), headers=MCP_HEADERS)
    assert at_the_cap.status_code == 200, at_the_cap.text
    assert at_the_cap.json()["result"]["serverInfo"]["name"] == "colibri"
    assert over_it.status_code == 413, over_it.text


def test_256_sessions_in_all_by_default_then_503(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    # 32 a token by default: eight tokens fill the 256 places, a ninth finds none left.
    tokens = [make_token(env, f"agent-{n}", "read") for n in range(9)]
    with running(env, tmp_path) as server, httpx2.Client(timeout=30) as http:

        def open_session(token: str) -> httpx2.Response:
            headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
            return http.post(server.url, json=INITIALIZE, headers=headers)

        statuses = [open_session(token).status_code for token in tokens[:8] for _ in range(32)]
        refused = open_session(tokens[8])
    assert statuses == [200] * 256
    assert refused.status_code == 503 and "Too many open sessions" in refused.text, refused.text
