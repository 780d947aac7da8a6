"""The /trail overview's integrity column on both backends: one pass places every break in the
sessions whose spans hold it, seals are rechecked, and large stores are checked in the background."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from colibri.domains.proofs import sessions
from colibri.domains.trail import records
from colibri.storage import Database
from colibri.ui import marks, overview, trail_views
from colibri.ui.checker import Checker
from colibri.ui.render import render


def _session(db: Database, *contents: str) -> str:
    session_id = sessions.start(db, None).session_id
    for content in contents:
        records.append(db, session_id, "plan", content)
    return session_id


def _states(db: Database) -> dict[str, str]:
    page = trail_views.sessions_page(db, None)
    return {sid: f"{state.state} {state.detail}" for sid, state in page["states"].items()}


def test_a_break_turns_the_sessions_whose_span_holds_it_and_no_other(fresh_db: Database) -> None:
    first = _session(fresh_db, "a1", "a2")  # seq 1, 2
    sessions.finalize(fresh_db, first)
    second = _session(fresh_db, "b1", "b2")  # seq 3, 4
    outer = sessions.start(fresh_db, None).session_id
    records.append(fresh_db, outer, "plan", "c1")  # seq 5
    inner = _session(fresh_db, "d1")  # seq 6, inside the outer session's span
    records.append(fresh_db, outer, "plan", "c2")  # seq 7
    empty = sessions.start(fresh_db, None).session_id
    assert _states(fresh_db) == {
        first: "verified chain intact; seal matches",
        second: "verified chain intact; open (not sealed)",
        outer: "verified chain intact; open (not sealed)",
        inner: "verified chain intact; open (not sealed)",
        empty: "empty no records yet",
    }
    fresh_db.execute("UPDATE thought_records SET content = 'forged' WHERE seq IN (2, 6)")
    states = _states(fresh_db)
    assert states[first] == "broken at seq 2 (hash_mismatch)"
    assert states[second].startswith("verified")
    assert states[inner] == states[outer] == "broken at seq 6 (hash_mismatch)"
    # The session's own page says the same of the chain over its span.
    page = trail_views.session_page(fresh_db, outer, None, None)
    assert page is not None and page["integrity"].chain.first_break.seq == 6
    html = render("trail.html", **trail_views.sessions_page(fresh_db, None)).body.decode()
    assert html.count('data-state="broken"') == 3 and "BROKEN" in html


def test_a_seal_that_no_longer_matches_is_broken_too(fresh_db: Database) -> None:
    sealed = _session(fresh_db, "a1", "a2")
    sessions.finalize(fresh_db, sealed)
    fresh_db.execute("UPDATE session_seals SET leaf_count = 3 WHERE session_id = ?", (sealed,))
    assert _states(fresh_db)[sealed] == "broken its seal no longer matches its records"


def test_a_large_store_is_checked_in_the_background_and_rechecked(
    fresh_db: Database, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(marks, "INLINE_SPAN", 1)  # marks.store_pass: the pass every page shares
    monkeypatch.setattr(overview, "MAX_AGE_S", 0.0)
    monkeypatch.setattr(marks, "STORE_CHECKS", overview.StoreChecks())
    # A worker of the test's own, held busy until told: the first pass queues behind the hold, so
    # the page is seen while that pass has not run, however fast the worker would have been.
    checker = Checker()
    monkeypatch.setattr(overview, "CHECKER", checker)
    release = tmp_path / "release"
    sealed = _session(fresh_db, "a1", "a2")
    sessions.finalize(fresh_db, sealed)
    other = _session(fresh_db, "b1")
    try:
        hold = checker.submit(held_until, str(release))
        assert _states(fresh_db)[other] == "unchecked the first check is running"
        assert _states(fresh_db)[sealed] == "unchecked the first check is running"
        assert not hold.done(), "the worker was held while the pages were made"
        release.write_text("go")
        _settled(fresh_db, other, "verified chain intact; open (not sealed)")
        _settled(fresh_db, sealed, "verified chain intact; seal matches")
        fresh_db.execute("UPDATE thought_records SET content = 'forged' WHERE seq = 3")
        _settled(fresh_db, other, "broken at seq 3 (hash_mismatch)")
        assert _states(fresh_db)[sealed].startswith("verified")
    finally:
        release.write_text("go")
        checker.shutdown()


def held_until(release: str) -> None:
    """Keeps the checker's worker busy until `release` exists (a module-level function: it is run
    in the worker process)."""
    while not Path(release).exists():
        time.sleep(0.01)  # polling a condition: the file the test writes


def _settled(db: Database, session_id: str, wanted: str, timeout: float = 60.0) -> None:
    """Wait until the sessions page says `wanted` of the session (the background pass's result)."""
    deadline = time.monotonic() + timeout
    while (state := _states(db)[session_id]) != wanted:
        assert time.monotonic() < deadline, f"still {state!r}, not {wanted!r}"
        time.sleep(0.02)  # polling a condition: the page's state


def test_sessions_page_newest_first_on_both_backends(fresh_db: Database) -> None:
    made = [sessions.start(fresh_db, None).session_id for _ in range(trail_views.PAGE + 3)]
    first = trail_views.sessions_page(fresh_db, None)
    assert [s.session_id for s in first["sessions"]] == made[::-1][: trail_views.PAGE]
    rest = trail_views.sessions_page(fresh_db, trail_views.after_cursor(first["before"]))
    assert [s.session_id for s in rest["sessions"]] == made[::-1][trail_views.PAGE :]
    assert rest["before"] is None
    with pytest.raises(ValueError, match="not a position from this page's links"):
        trail_views.after_cursor("bm90LWEtY3Vyc29y")
