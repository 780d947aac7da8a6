"""The trail page's checkpoint block names each witness's last cosigned size (SPEC §16)."""

from __future__ import annotations

from colibri.domains.log import cosigned
from colibri.domains.log.notary import Notary
from colibri.domains.log.note import Signer
from colibri.domains.proofs import sessions
from colibri.domains.trail import records
from colibri.storage import Database
from colibri.ui import trail_views
from colibri.ui.render import render


def test_the_latest_checkpoint_shows_each_witness_s_last_cosigned_size(fresh_db: Database) -> None:
    session = sessions.start(fresh_db, None).session_id
    records.append(fresh_db, session, "plan", "witnessed")
    with fresh_db.atomic() as conn:
        made = Notary(Signer.generate("example.com/log")).make(conn, "on-demand")
        assert made.id is not None
        cosigned.add_cosignature(conn, made.id, "w1-key", "— w1.example AAAA\n", 1_700_000_000)
        cosigned.record_attempt(conn, "w1-key", "w1", "http://w1", "2026-01-01T00:00:00Z", None)
        cosigned.record_attempt(conn, "w2-key", "w2", "http://w2", "2026-01-01T00:00:00Z", "no answer")
    page = trail_views.session_page(fresh_db, session, None, None)
    assert page is not None
    assert page["checkpoints"]["latest"].witnesses == (("w1", made.size), ("w2", None))
    html = render("session.html", **page).body.decode()
    assert f"witnesses' last cosigned size: w1 {made.size}, w2 none" in html
