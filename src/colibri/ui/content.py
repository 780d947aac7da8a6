"""The handlers of the pages that show the store: board, task, trail, session, audit, one call, pins.

Each reads its query strictly (query.py: UTF-8, bounded lengths), reads the store through
`views`, `trail_views` or `audit_views` in one snapshot, and renders; an id that names nothing
gets a 404 page with a link back to where such ids are listed. Nothing here writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from colibri.domains.log.note import Verifier
from colibri.domains.tasks.arguments import MAX_ASSIGNEE, MAX_TAG, MAX_TITLE
from colibri.ui import audit_views, pins_views, trail_views, views
from colibri.ui.query import limited, parse_query
from colibri.ui.reader import Reader
from colibri.ui.render import not_found, render

REFRESH_S = 5
ID_DIGITS = 19  # the longest number a store's keys can hold


class Content:
    """The content pages over `reader`; `verifier` gives the key checkpoints are checked with;
    `switchboard_config` is the config file the pins page's approve commands name."""

    def __init__(
        self, reader: Reader, verifier: Callable[[], Verifier | None], switchboard_config: str | None = None
    ) -> None:
        self._reader = reader
        self._verifier = verifier
        self._switchboard_config = switchboard_config

    async def board(self, request: Request) -> Response:
        params = parse_query(request.scope["query_string"])
        if not params and await self._reader.read(views.only_audited):
            # A store of calls without tasks (the switchboard's audit store): its board is empty.
            return RedirectResponse("/audit", status_code=303)
        narrowed = views.BoardFilter(
            assignee=limited(params, "assignee", MAX_ASSIGNEE),
            tag=limited(params, "tag", MAX_TAG),
            text=limited(params, "text", MAX_TITLE),
        )
        cursors = {status: limited(params, f"after_{status}") for status in views.STATUSES}
        data = await self._reader.read(lambda db: views.board(db, cursors, narrowed))
        return render("board.html", refresh=REFRESH_S, title="Board", **data)

    async def task(self, request: Request) -> Response:
        task_id = request.path_params["task_id"]
        after = limited(parse_query(request.scope["query_string"]), "after")
        data = await self._reader.read(lambda db: views.task_page(db, task_id, after))
        if data is None:
            return not_found(f"There is no task {task_id!r}.", "/", "the board")
        return render("task.html", refresh=REFRESH_S, title=task_id, **data)

    async def sessions(self, request: Request) -> Response:
        before = trail_views.after_cursor(limited(parse_query(request.scope["query_string"]), "before", 400))
        data = await self._reader.read(lambda db: trail_views.sessions_page(db, before))
        return render("trail.html", refresh=REFRESH_S, title="Trail", **data)

    async def session(self, request: Request) -> Response:
        session_id = request.path_params["session_id"]
        params = parse_query(request.scope["query_string"])
        kind, after, key = limited(params, "kind"), limited(params, "after"), self._verifier()
        data = await self._reader.read(lambda db: trail_views.session_page(db, session_id, kind, after, key))
        if data is None:
            return not_found(f"There is no session {session_id!r}.", "/trail", "the sessions")
        return render("session.html", refresh=REFRESH_S, title=session_id, **data)

    async def audit(self, request: Request) -> Response:
        params = parse_query(request.scope["query_string"])
        before = position(limited(params, "before"))
        filters = {name: limited(params, name) for name in ("tool", "principal", "outcome")}
        events = limited(params, "events") == "1"  # the switchboard's own events too (pins, approvals)
        data = await self._reader.read(lambda db: audit_views.audit_page(db, before, filters, events))
        return render("audit.html", refresh=REFRESH_S, title="Audit", request_before=before, **data)

    async def call(self, request: Request) -> Response:
        number, key = call_number(request.path_params["number"]), self._verifier()
        data = (
            None
            if number is None
            else await self._reader.read(lambda db: audit_views.call_page(db, number, key))
        )
        if data is None:
            return _no_call(request.path_params["number"])
        return render("call.html", title=f"Call #{number}", **data)

    async def pins(self, request: Request) -> Response:
        config = self._switchboard_config
        data = await self._reader.read(lambda db: pins_views.pins_page(db, config))
        return render("pins.html", refresh=REFRESH_S, title="Pins", **data)

    async def proof(self, request: Request) -> Response:
        number, key = call_number(request.path_params["number"]), self._verifier()
        found = (
            None
            if number is None
            else await self._reader.read(lambda db: audit_views.proof_bundle(db, number, key))
        )
        if found is None:
            return _no_call(request.path_params["number"])
        if isinstance(found, str):
            message = f"Call #{number} has no inclusion proof yet: {found}."
            return render(
                "error.html",
                409,
                title="No proof yet",
                message=message,
                back=f"/audit/{number}",
                back_label=f"call #{number}",
            )
        body = json.dumps(found, indent=2, ensure_ascii=False) + "\n"
        disposition = f'attachment; filename="colibri-call-{number}-proof.json"'
        headers = {"Content-Disposition": disposition, "Cache-Control": "no-store"}
        return Response(body, media_type="application/json", headers=headers)


def position(value: str | None) -> int | None:
    """A keyset position from this page's own links; ValueError (a 400 page) for anything else."""
    if value is None:
        return None
    if not value.isascii() or not value.isdigit() or len(value) > ID_DIGITS:
        raise ValueError(f"before={value!r} is not a position from this page's links; follow them instead")
    return int(value)


def call_number(text: str) -> int | None:
    """The call a path names (its audit number), or None when it cannot name one."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= ID_DIGITS else None


def _no_call(text: str) -> Response:
    return not_found(
        f"There is no call #{text}: calls are numbered as in the audit list.", "/audit", "the audit"
    )
