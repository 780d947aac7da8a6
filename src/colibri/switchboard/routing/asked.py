"""A request other than tools/call through the observers' moments, as route.py takes a tools/call:
resources/read, prompts/get, completion/complete, resources/subscribe and unsubscribe,
logging/setLevel (once per server it reaches) and subscriptions/listen (once per server it names).

One server answers it (no fallbacks). Which server is found first (`call.server`), so that the
observers know the request as `server:resources/read`, `server:completion/complete`, ...: they may
refuse it (policy, rate limits), hold its sending (the audit's row opened first) and its answer,
and see it go, with what was asked of which server and what it came to, like any routed call.
Their refusal is a JSON-RPC error whose message starts with its code; a request no server can
take (an unknown resource or prompt) is shown to them as refused, so it takes from its caller's
rate limit as an unknown tool does. A request that needs nothing
sent (a subscription the server already holds for another client) is admitted and recorded all
the same, and answered with an empty result.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST

from colibri.core import reasons
from colibri.core.identity import identity_of
from colibri.switchboard.base import CallTimedOut, DownstreamError, PeerError, ResultT
from colibri.switchboard.downstream import Downstream
from colibri.switchboard.routing.observers import Answer, Observers, Outcome, Refusal, RoutedCall, Tried, Who

log = logging.getLogger("colibri.switchboard")

# Which server a request goes to, and its name there (the URI, or the prompt without its prefix);
# raises `MCPError` when there is none (unknown, or not routable).
Owner = Callable[[], tuple[Downstream, str]]


def routed(name: str, arguments: dict[str, Any] | None, who: Who, method: str) -> RoutedCall:
    """A request of `method` by `who`: a principal's name, or the Identity that proved it (the
    audit records its issuer and token_id; policies and limits judge its groups)."""
    identity = identity_of(who)
    return RoutedCall(name, arguments, identity.principal, method, identity=identity)


async def asked(
    observers: Observers,
    call: RoutedCall,
    owner: Owner,
    request: Callable[[str], types.ClientRequest | None],
    result_type: type[ResultT],
) -> ResultT:
    """Ask the owner `request(name there)`; its JSON-RPC errors pass through, others name the server."""
    answer = await answer_of(observers, call, owner, request, result_type)
    if answer.error is not None:
        raise answer.error
    assert isinstance(answer.result, result_type)
    return answer.result


async def answer_of(
    observers: Observers,
    call: RoutedCall,
    owner: Owner,
    request: Callable[[str], types.ClientRequest | None],
    result_type: type[ResultT],
) -> Answer:
    """What `asked` answers, as an `Answer` (`tried` is empty when no server was asked)."""
    try:
        answer = await _answer(observers, call, owner, request, result_type)
        try:
            waiting = observers.before_answer(call, answer)
            if waiting is not None:
                await waiting
        except Exception as exc:
            log.exception("an observer failed before the answer to %s", call.subject)
            retry = {"retryable": True} if getattr(exc, "retryable", False) else None
            failed = MCPError(INTERNAL_ERROR, f"HANDLER_ERROR: {exc}", retry)
            answer = Answer(Outcome.ERROR, error=failed, tried=answer.tried)
    except anyio.get_cancelled_exc_class():
        observers.after_answer(call, Answer(Outcome.CANCELLED))
        raise
    observers.after_answer(call, answer)
    return answer


async def _answer(
    observers: Observers,
    call: RoutedCall,
    owner: Owner,
    request: Callable[[str], types.ClientRequest | None],
    result_type: type[ResultT],
) -> Answer:
    try:
        downstream, name = owner()
    except MCPError as exc:
        # Refused before admission (no such resource or prompt, a name over 256 characters, no
        # routable server): it costs its caller all the same, as an unknown tool does (SPEC §21),
        # and once over the limit the rate limit's refusal is the answer.
        limited = observers.refused(call)
        if limited is not None:
            return Answer(Outcome.DENIED, error=_refused(limited))
        if exc.error.code == INTERNAL_ERROR:  # SERVICE_UNAVAILABLE, whose code names its reason
            return Answer(Outcome.UNAVAILABLE, error=exc)
        return Answer(Outcome.DENIED, error=exc, reason=reasons.UNKNOWN_TOOL)
    call.server = downstream.name
    refusal = observers.admit(call)
    if refusal is not None:
        return Answer(Outcome.DENIED, error=_refused(refusal))
    asking = request(name)
    if asking is None:
        return Answer(Outcome.OK, result_type())
    said = observers.before_send(call, call.subject)
    if said is not None and not isinstance(said, Refusal):
        said = await said
    if said is not None:
        return Answer(Outcome.ERROR, error=_refused(said))
    started = time.perf_counter()
    try:
        result = await downstream.request(asking, result_type)
    except PeerError as exc:
        return _failed(downstream, name, started, "error", MCPError(exc.code, exc.rpc_message, exc.data))
    except DownstreamError as exc:
        upstream = MCPError(INTERNAL_ERROR, f"UPSTREAM_ERROR: {downstream.name}: {exc.message}")
        return _failed(
            downstream, name, started, "timeout" if isinstance(exc, CallTimedOut) else "error", upstream
        )
    tried = Tried(downstream.name, name, "ok", time.perf_counter() - started)
    return Answer(Outcome.OK, result, tried=(tried,))


def _refused(refusal: Refusal) -> MCPError:
    return MCPError(INVALID_REQUEST, f"{refusal.code}: {refusal.message}", refusal.details or None)


def _failed(downstream: Downstream, name: str, started: float, outcome: str, error: MCPError) -> Answer:
    tried = Tried(downstream.name, name, outcome, time.perf_counter() - started)
    return Answer(Outcome.TIMEOUT if outcome == "timeout" else Outcome.ERROR, error=error, tried=(tried,))
