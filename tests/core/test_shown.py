"""Names shown to a person (SPEC §21): one escaping function (core/shown.py), and the places that
show a name a client or a downstream chose — /status, the status table — use it."""

from __future__ import annotations

import hashlib
from typing import Any

from colibri.core.reasons import message
from colibri.core.shown import shown
from colibri.switchboard.faces import render_status
from colibri.switchboard.program.status_table import table

FORGED = "evil\u202etxt.exe\r\nok\x1b[2J\u2066x\u2069\u200e\x85"


def test_controls_and_bidi_characters_are_written_as_visible_escapes() -> None:
    assert shown(FORGED) == "evil\\u202etxt.exe\\r\\nok\\x1b[2J\\u2066x\\u2069\\u200e\\x85"
    assert shown("github.create_issue") == "github.create_issue"
    assert shown("café.日本") == "café.日本"  # letters of any script are themselves


def test_a_name_over_256_characters_is_its_length_and_digest() -> None:
    name = "nope" + "x" * 1_000_000
    assert shown(name) == f"<name of 1000004 chars, sha256 {hashlib.sha256(name.encode()).hexdigest()[:16]}>"
    assert shown("x" * 256) == "x" * 256


def test_a_refusal_message_is_one_escaped_line_of_bounded_length() -> None:
    assert message("a\r\nb") == "a\\r\\nb"
    long = message("unknown tool " + "\u202e" * 10_000)
    assert len(long) == 300 and long.endswith("...") and "\u202e" not in long


def _server() -> dict[str, Any]:
    return {
        "name": "evil",
        "transport": "stdio",
        "state": "UNHEALTHY",
        "routable": False,
        "server_name": FORGED,
        "failures": {"consecutive": 1, "calls": 0, "checks": 1, "connects": 0},
        "calls": 0,
        "cooldown_left_s": 0.0,
        "last_failure": f"handshake failed: {FORGED}",
        "last_checks": {"liveness": {"ok": False, "at": "t1", "duration_ms": 3.0, "detail": FORGED}},
        "transitions": [],
    }


def test_status_page_and_table_escape_what_a_downstream_chose() -> None:
    withheld = {
        "tool": f"evil.{FORGED}",
        "pinned_sha256": "a" * 64,
        "listed_sha256": "b" * 64,
        "approve": "x",
    }
    html = render_status({"servers": [_server()], "pins": "block", "withheld_tools": [withheld]})
    assert "\u202e" not in html and "\x1b" not in html and "\r\n" not in html
    assert shown(FORGED) in html
    printed = table({"servers": [_server()]})
    assert len(printed.splitlines()) == 2 and "\u202e" not in printed and shown(FORGED) in printed
