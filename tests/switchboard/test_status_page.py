"""The /status page's HTML from a status snapshot: state, checks, failures, cooldown, timeline."""

from __future__ import annotations

from typing import Any

from colibri.switchboard.faces import render_status


def _server(name: str, state: str) -> dict[str, Any]:
    return {
        "name": name,
        "transport": "stdio",
        "state": state,
        "routable": state == "HEALTHY",
        "server_name": "fault",
        "failures": {"consecutive": 3, "calls": 1, "checks": 2, "connects": 0},
        "calls": 7,
        "cooldown_left_s": 4.25,
        "last_failure": "readiness check timed out after 1.0 s",
        "last_checks": {
            "liveness": {"ok": False, "at": "t1", "duration_ms": 1000.0, "detail": "timeout <b>"}
        },
        "transitions": [
            {"at": "t0", "from": "STARTING", "to": "HEALTHY", "reason": "first checks passed"},
            {"at": "t1", "from": "HEALTHY", "to": "QUARANTINE", "reason": "3 failures in a row"},
        ],
    }


def test_status_page_shows_state_cooldown_checks_and_timeline_escaped() -> None:
    html = render_status({"servers": [_server("fault", "QUARANTINE"), _server("time", "HEALTHY")]})
    assert 'id="state-fault">QUARANTINE<' in html
    assert "cooldown left <b>4.2 s</b>" in html or "cooldown left <b>4.3 s</b>" in html
    assert html.count("cooldown left") == 1  # only the quarantined server has one
    assert '<li data-to="QUARANTINE">t1: HEALTHY → <b>QUARANTINE</b> — 3 failures in a row</li>' in html
    assert "timeout &lt;b&gt;" in html  # evidence from a downstream is text, never markup
    assert 'http-equiv="refresh"' in html


def test_status_page_lists_withheld_tools_with_both_digests_and_how_to_approve() -> None:
    withheld = {
        "tool": "git.commit",
        "pinned_sha256": "a" * 64,
        "listed_sha256": "b" * 64,
        "approve": "colibri switchboard pins approve --config s.json git.commit",
    }
    html = render_status(
        {"servers": [_server("git", "HEALTHY")], "pins": "block", "withheld_tools": [withheld]}
    )
    plain = render_status({"servers": [_server("git", "HEALTHY")], "pins": "block", "withheld_tools": []})
    assert 'id="withheld"' in html and '<tr data-tool="git.commit">' in html
    assert "a" * 64 in html and "b" * 64 in html and "pins approve --config s.json git.commit" in html
    assert 'id="withheld"' not in plain
