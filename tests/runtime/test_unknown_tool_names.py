"""`colibri serve`'s own UNKNOWN_TOOL shows the client's name as a person may safely read it
(SPEC §21): a name over 256 characters by its length and digest, never echoed (a 1,000,000-char
name came back twice in a 2 MB answer), and control and bidi characters as visible escapes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.helpers import call, chain_error, clean_env, connect, query

pytestmark = pytest.mark.anyio

LONG = "nope" + "x" * 999_996  # 1,000,000 characters
HOSTILE = "evil.\u202etxt.exe\r\nforged: ok"


async def test_a_megabyte_name_is_named_by_its_length_and_digest_and_a_hostile_one_escaped(
    tmp_path: Path,
) -> None:
    async with connect(clean_env(tmp_path)) as client:
        long = await call(client, LONG)
        hostile = await call(client, HOSTILE)
        await call(client, "server_ping")  # a row follows the calls above, so the store has been written

    named = f"<name of {len(LONG)} chars, sha256 {hashlib.sha256(LONG.encode()).hexdigest()[:16]}>"
    error = chain_error(long)
    assert error["code"] == "UNKNOWN_TOOL"
    assert error["message"].startswith(f"unknown tool {named}; call tools/list")
    assert error["details"] == {"tool": named}
    assert len(str(long)) < 1000, f"the answer to a 1 MB name is {len(str(long))} characters"

    message = chain_error(hostile)["message"]
    assert message.startswith("unknown tool 'evil.\\u202etxt.exe\\r\\nforged: ok'; call tools/list"), message
    assert not any(char in message for char in "\u202e\r\n")

    rows = query(tmp_path / "colibri.db", "SELECT * FROM actions ORDER BY sequence_no")
    assert rows, "no row was written"
    for row in rows:  # whatever the store keeps of these calls stays small and holds neither name
        assert sum(len(str(value)) for value in tuple(row)) < 1000, dict(row)
        assert LONG[:300] not in row["tool"] and "\u202e" not in row["tool"]
