"""The witness's HTTP face: `POST /add-checkpoint` (protocol.py) and the monitors' `GET
/<sha256(origin) in hex>/checkpoint`, on serving.http.run_http.

Every route is behind the checks every HTTP face has (`serving.guards`, SPEC §21): the Host/Origin
allow-list (421/403), the `COLIBRI_HTTP_*` body cap (413) and arrival limit (408), the header
timeout and the connection cap. Within them a request body is read up to 1 MiB and no further (a
longer one is answered 400, as protocol.py says). Submissions are decided one at a time, in a
worker thread, each in one write transaction of the witness's file: one submission per origin at a
time, and the check of `old N` and the update are atomic.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from colibri.core.database import Database
from colibri.core.errors import StorageError
from colibri.domains.log.note import Signer, Verifier
from colibri.serving.guards import guarded
from colibri.serving.hosts import AllowedHosts
from colibri.serving.http import run_http
from colibri.serving.http_limits import HttpLimits
from colibri.witness import protocol, state

log = logging.getLogger("colibri.witness")

ADD_CHECKPOINT = "/add-checkpoint"


@dataclass(frozen=True, slots=True)
class WitnessConfig:
    host: str
    port: int
    cosigner: Signer
    db_path: Path
    logs: dict[str, Verifier]  # origin -> the log's verifier key
    allowed_hosts: Sequence[str] = ()  # --allow-host: names clients reach the witness by
    limits: HttpLimits = field(default_factory=HttpLimits)  # COLIBRI_HTTP_*

    def hosts(self) -> AllowedHosts:
        return AllowedHosts.for_bind(self.host, self.allowed_hosts)


def witness_app(config: WitnessConfig, db: Database) -> Starlette:
    one_at_a_time = anyio.Lock()
    by_hash = {hashlib.sha256(origin.encode()).hexdigest(): origin for origin in config.logs}

    async def add_checkpoint(request: Request) -> Response:
        body = await _bounded_body(request)
        parsed = (
            protocol.Answer(400, "the request is over 1 MiB\n")
            if body is None
            else protocol.read_request(body)
        )
        if isinstance(parsed, protocol.Request):
            async with one_at_a_time:
                try:
                    parsed = await anyio.to_thread.run_sync(_decide, db, parsed, config)
                except StorageError as exc:
                    log.error("cannot read or write the witness's state in %s: %s", config.db_path, exc)
                    parsed = protocol.Answer(503, "the witness cannot reach its state; try again later\n")
        if parsed.status != 200:
            log.info(
                "add-checkpoint answered %d: %s", parsed.status, (parsed.reason or parsed.body.strip())[:200]
            )
        return Response(parsed.body, parsed.status, media_type=parsed.content_type)

    async def latest(request: Request) -> Response:
        origin = by_hash.get(request.path_params["origin_hash"])
        found = None
        if origin is not None:
            async with one_at_a_time:
                found = await anyio.to_thread.run_sync(_latest, db, origin)
        if found is None:
            return Response("no checkpoint of that log was cosigned here\n", 404, media_type=protocol.TEXT)
        return Response(found.note, 200, media_type=protocol.TEXT)

    return Starlette(
        routes=[
            Route(ADD_CHECKPOINT, add_checkpoint, methods=["POST"]),
            Route("/{origin_hash:str}/checkpoint", latest, methods=["GET"]),
        ]
    )


async def serve_witness(config: WitnessConfig) -> None:
    db = state.open_state(config.db_path)
    try:
        log.info(
            "colibri witness %s at http://%s:%d/add-checkpoint, following %d log(s)",
            config.cosigner.verifier().key(),
            config.host,
            config.port,
            len(config.logs),
        )
        web = guarded(witness_app(config, db), config.hosts(), config.limits, large_bodies=(ADD_CHECKPOINT,))
        await run_http(web, config.host, config.port, config.limits)
    finally:
        db.close()


def _decide(db: Database, request: protocol.Request, config: WitnessConfig) -> protocol.Answer:
    with db.atomic() as conn:
        return protocol.decide(conn, request, config.logs, config.cosigner, int(time.time()))


def _latest(db: Database, origin: str) -> state.Cosigned | None:
    with db.snapshot() as conn:
        return state.cosigned(conn, origin)


async def _bounded_body(request: Request) -> bytes | None:
    """The body, or None as soon as it is known to be over the limit (it is not read further)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > protocol.MAX_BODY_BYTES:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > protocol.MAX_BODY_BYTES:
            return None
    return bytes(body)
