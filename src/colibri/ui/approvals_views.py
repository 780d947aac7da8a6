"""`/approvals` (SPEC §22): the calls a switchboard holds for a person's decision, read from its audit
store, and a decision posted from the page.

The page shows each held call in full — who made it, the tool, the arguments, the tool's definition
as listed and its pin digest, the rule and who may decide — with a comment box and approve / deny.
A decision is the one write the ui makes: posted from the ui's own page (same origin) by a signed-in
principal (with its IdP groups, when the identity provider signed it in: a rule may name
`group:NAME`), it is written to the store in its own transaction (domains/approvals: the approval
and its log entry together, `via: ui`), where the waiting call's switchboard reads it within its poll.
Only an approver the call's rule names may decide, never the caller; an unknown, expired or decided
call, the caller's own call and a principal the rule does not name are a 409 page naming why (and
logged). Decisions need a store the ui may write: `colibri ui` opens one connection for each, beside
its read-only one; where no store is given for writes the page only shows.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from colibri.core.clock import utc_now
from colibri.core.database import Database
from colibri.domains import access
from colibri.domains.approvals import api as approvals
from colibri.domains.log.api import log_action
from colibri.serving.oauth.verifier import OAuthVerifier
from colibri.serving.origin import same_origin_post
from colibri.ui import auth
from colibri.ui.reader import Reader
from colibri.ui.render import SIGNED_IN, render

REFRESH_S = 5
MAX_COMMENT = 2000
# Opens the store for one decision and closes it after (None: this ui cannot write).
Writable = Callable[[], Database] | None


@dataclass(frozen=True, slots=True)
class HeldRow:
    approval: approvals.Approval
    arguments: str  # pretty JSON
    definition: str | None
    rule: str


def store_has_approvals(db: Database) -> bool:
    return db.execute(db.dialect.table_exists, ("approvals",)).fetchone() is not None


def held_page(db: Database) -> list[HeldRow]:
    if not store_has_approvals(db):
        return []
    with db.snapshot() as conn:
        held = approvals.pending(conn, utc_now())
    return [
        HeldRow(
            approval,
            _pretty(approval.arguments or "{}"),
            None if approval.definition is None else _pretty(approval.definition),
            approval.rule,
        )
        for approval in held
    ]


class ApprovalPages:
    """GET /approvals and POST /approvals/{approval_id}."""

    def __init__(
        self, reader: Reader, writable: Writable, public_url: str | None, oauth: OAuthVerifier | None = None
    ) -> None:
        self._reader = reader
        self._writable = writable
        self._public_url = public_url
        self._oauth = oauth

    async def page(self, request: Request) -> Response:
        rows = await self._reader.read(held_page)
        done = request.query_params.get("done")
        decided = None
        if done is not None and done.startswith("ap_") and len(done) < 64:
            decided = await self._reader.read(lambda db: _find(db, done))
        return render(
            "approvals.html", refresh=REFRESH_S, title="Approvals", rows=rows, decided=decided,
            writable=self._writable is not None,
        )  # fmt: skip

    async def decide(self, request: Request) -> Response:
        approval_id = request.path_params["approval_id"]
        if not same_origin_post(request.headers, self._public_url):
            return _refused(
                403, "Decide from this server's own page: a decision posted by another site is refused."
            )
        by = SIGNED_IN.get()
        if by is None:
            return _refused(
                403, "A decision needs a signed-in principal: start colibri ui without --no-auth."
            )
        if self._writable is None:
            return _refused(
                409, "This ui cannot write to the store: decide with colibri switchboard approvals."
            )
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        decision = (form.get("decision") or [""])[0]
        comment = (form.get("comment") or [""])[0].strip()[:MAX_COMMENT]
        if decision not in ("approve", "deny"):
            return _refused(400, f"Expected decision approve or deny, got {decision[:40]!r}.")
        opened, groups = self._writable, await self._groups(request)

        def decided(_: Database) -> approvals.Approval:
            db = opened()
            try:
                return approvals.decided(
                    db, approval_id, decision == "approve", by, groups, comment, "ui", log_action
                )
            finally:
                db.close()

        try:
            await self._reader.read(decided)
        except approvals.NotDecidable as exc:
            return _refused(409, f"{exc} ({exc.why}; the attempt is logged).", title="Not decided")
        return RedirectResponse(f"/approvals?done={approval_id}", status_code=303)

    async def _groups(self, request: Request) -> tuple[str, ...]:
        """The IdP groups of the signed-in principal (a rule may name `group:NAME` as its approvers);
        none for a Colibri token."""
        token = auth.presented_token(request)
        if self._oauth is None or not token or access.well_formed(token):
            return ()
        proved = await self._oauth.verify_token(token)
        return () if proved is None else proved.groups


def _find(db: Database, approval_id: str) -> approvals.Approval | None:
    if not store_has_approvals(db):
        return None
    with db.snapshot() as conn:
        return approvals.find(conn, approval_id)


def _pretty(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=True)
    except ValueError:
        return text


def _refused(status: int, message: str, title: str = "Refused") -> Response:
    return render(
        "error.html", status, title=title, message=message, back="/approvals", back_label="the held calls"
    )
