"""A 401 of `colibri serve --http` is logged at info level, once per reason a minute (the next line
counts the ones kept quiet), naming the token's name when the token is one of ours (revoked or
expired), never the token itself."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx2
import pytest

from colibri.serving.bearer import RefusalLog
from colibri.storage import SQLiteDatabase
from tests.helpers import colibri
from tests.http.helpers import http_env, make_token, running

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def test_refused_tokens_are_logged_by_reason_and_name_never_by_value(tmp_path: Path) -> None:
    env = http_env(tmp_path)
    assert "COLIBRI_LOG_LEVEL" not in env  # info, the default
    revoked = make_token(env, "ci-bot", "read")
    expired = make_token(env, "old-laptop", "read", "--expires-days", "1")
    good = make_token(env, "ana", "read")
    unknown = "col_" + "x" * 43
    assert colibri("token", "revoke", "ci-bot", env=env).returncode == 0
    db = SQLiteDatabase.open(tmp_path / "colibri.db")
    try:
        with db.atomic() as conn:
            conn.execute("UPDATE access_tokens SET expires_at = 1 WHERE name = 'old-laptop'")
    finally:
        db.close()
    with running(env, tmp_path) as server:
        headers = {"Accept": "application/json, text/event-stream"}
        for token in (revoked, revoked, expired, unknown, "not-ours", good):
            answer = httpx2.post(
                server.url,
                json=INITIALIZE,
                headers={**headers, "Authorization": f"Bearer {token}"},
                timeout=30,
            )
            assert answer.status_code == (200 if token == good else 401), (token, answer.text)
    log = server.log.read_text()
    refusals = [line for line in log.splitlines() if " 401: " in line]
    assert all(" INFO colibri.http: 401: " in line for line in refusals), refusals
    assert [line.partition(" 401: ")[2] for line in refusals] == [
        "the token named 'ci-bot' was revoked",  # once: the second is within the minute
        "the token named 'old-laptop' has expired",
        "a bearer token this server never issued",
    ], refusals  # "not-ours" is unknown too, within the minute of the last unknown one
    for token in (revoked, expired, unknown, good):
        assert token not in log


def test_one_line_per_reason_a_minute_then_the_count_kept_quiet(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    refusals = RefusalLog(logging.getLogger("colibri.http.test"), every_s=60.0, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="colibri.http.test"):
        refusals.refused("revoked", "the token named 'a' was revoked")
        refusals.refused("revoked", "the token named 'b' was revoked")
        refusals.refused("expired", "the token named 'c' has expired")
        now[0] += 59.9
        refusals.refused("revoked", "the token named 'a' was revoked")
        now[0] += 0.2
        refusals.refused("revoked", "the token named 'a' was revoked")
        refusals.refused("revoked", "the token named 'a' was revoked")
    assert [record.levelno for record in caplog.records] == [logging.INFO] * 3
    assert [record.getMessage() for record in caplog.records] == [
        "401: the token named 'a' was revoked",
        "401: the token named 'c' has expired",
        "401: the token named 'a' was revoked (2 more revoked token(s) refused since the last such line, "
        "not logged)",
    ]
