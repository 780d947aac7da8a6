"""`Approvals`: a call an `approvals` rule matches is held until a person decides (SPEC §22).

At `before_send`, before anything reaches the downstream, a call a rule holds (config/approvals.py)
waits for an awaitable that says go or stop:

- an approval already given to this very call (same principal, tool and arguments digest, unused,
  within its ttl) is taken, and the call goes: one approval, one call;
- else the call is held: an `approvals` row and the call's `held` row (its arguments digest, the
  tool's pin digest as listed now, the rule), logged, in one transaction (domains/approvals). A
  retry of a call that was answered APPROVAL_PENDING waits on its first hold instead, when no call
  here waits on it already.
- `approver` mode: the call waits up to `timeout_s` for a decision made by `colibri switchboard
  approvals` or `colibri ui` in another process, both writing to the audit store. One poller reads
  the store every POLL_S for every approval waited on (one query however many calls wait), so a
  decision reaches its call within POLL_S; the waiting client is sent progress every PROGRESS_S.
  Approved → the approval is used and the call goes on (its row finishes as usual); denied →
  APPROVAL_DENIED with the comment; nothing decided → APPROVAL_PENDING with `approval_id` and
  `retry_after_s`.
- `ask_user` mode: asking.py asks the caller's own user.

The client that waits is the one `Route.run` routes the call for (base's ROUTED_CALLER).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

import anyio
import mcp_types as types

from colibri.core import ids
from colibri.core.clock import utc_now
from colibri.core.database import Connection, Database
from colibri.core.errors import StorageError
from colibri.core.jcs import canonical, digest
from colibri.domains.approvals import api as approvals
from colibri.domains.log.api import log_action
from colibri.switchboard.audit.asking import ask_user
from colibri.switchboard.audit.digests import definition
from colibri.switchboard.audit.writer import Now, Writer
from colibri.switchboard.base import (
    APPROVAL_DENIED,
    APPROVAL_PENDING,
    HANDLER_ERROR,
    ROUTED_CALLER,
    Caller,
)
from colibri.switchboard.config import Approvals as Config
from colibri.switchboard.config import Rule, SwitchboardConfig
from colibri.switchboard.routing import Observer, Refusal, RoutedCall

log = logging.getLogger("colibri.switchboard")
T = TypeVar("T")

POLL_S = 0.2  # how soon a decision made in another process reaches its waiting call
PROGRESS_S = 5.0  # how often a waiting client hears that its call is still held
RETRY_AFTER_S = 30


@dataclass(slots=True)
class _Waiter:
    decided: anyio.Event = field(default_factory=anyio.Event)
    approval: approvals.Approval | None = None


class Approvals(Observer):
    """Holds the calls the `approvals` rules match (see the module)."""

    def __init__(self, writer: Writer, config: Config | None, config_path: str = "F") -> None:
        self._writer = writer
        self._config = config
        self._config_path = config_path
        self._tools: dict[str, Mapping[str, types.Tool]] = {}  # each server's tools as listed now
        self._waiting: dict[str, _Waiter] = {}
        self._poller: asyncio.Task[None] | None = None

    def reconfigured(self, config: SwitchboardConfig) -> None:
        self._config = config.approvals

    def listed(self, server: str, tools: Mapping[str, types.Tool]) -> None:
        self._tools[server] = tools  # a definition's digest is made only when a call is held

    def left(self, server: str) -> None:
        self._tools.pop(server, None)

    def before_send(self, call: RoutedCall, target: str) -> Awaitable[Refusal | None] | None:
        config = self._config
        if config is None or call.method != "tools/call":
            return None
        rule = config.rule_for(target, call.who)
        return None if rule is None else self._decided(call, target, rule, config)

    async def _decided(self, call: RoutedCall, target: str, rule: Rule, config: Config) -> Refusal | None:
        try:
            return await self._judged(call, target, rule, config)
        except StorageError as exc:
            log.error("audit store: cannot hold %s for approval; not sent: %s", target, exc)
            return Refusal(
                HANDLER_ERROR,
                f"{target} needs a person's approval, and the audit store cannot record it ({exc}); nothing "
                "was sent, retry the call",
                {"retryable": True},
            )

    async def _judged(self, call: RoutedCall, target: str, rule: Rule, config: Config) -> Refusal | None:
        caller = ROUTED_CALLER.get()
        arguments = call.arguments or {}
        sha256 = digest(arguments)
        now = utc_now()
        taken = await self._write(lambda conn: approvals.take(conn, call.principal, target, sha256, now))
        if taken is not None:
            log.info("%s of %s goes on: approval %s covers it", target, call.principal, taken)
            return None
        found: list[str] = []
        if rule.mode == "approver":  # a retry waits on the hold it was answered APPROVAL_PENDING for
            found = await self._write(
                lambda conn: approvals.waiting(conn, call.principal, target, sha256, now)
            )
        free = next((approval_id for approval_id in found if approval_id not in self._waiting), None)
        if free is None:
            held = self._held(call, target, rule, sha256, canonical(arguments))
            approval = await self._write(
                lambda conn: approvals.hold(conn, held, now, config.ttl_s, log_action)
            )
            free = approval.id
            log.warning("%s of %s is held for approval %s (%s)", target, call.principal, free, rule.where)
        if rule.mode == "ask_user":
            return await ask_user(self._writer, free, call, target, caller, config.timeout_s)
        return await self._waited(free, call, target, rule, caller, config.timeout_s)

    def _held(self, call: RoutedCall, target: str, rule: Rule, sha256: str, arguments: str) -> approvals.Held:
        server, _, name = target.partition(".")
        tool = self._tools.get(server, {}).get(name)
        text, pin = (None, None) if tool is None else definition(tool)
        identity = call.identity
        return approvals.Held(
            _correlation(call.record),
            call.principal,
            target,
            sha256,
            arguments,
            pin,
            text,
            rule.text(),
            rule.approvers or (call.principal,),
            rule.mode,
            None if identity is None else identity.issuer,
            None if identity is None else identity.token_id,
        )

    async def _waited(  # noqa: PLR0917 - the held call, its rule, and who waits how long
        self,
        approval_id: str,
        call: RoutedCall,
        target: str,
        rule: Rule,
        caller: Caller | None,
        timeout_s: float,
    ) -> Refusal | None:
        waiter = self._waiting[approval_id] = _Waiter()
        if self._poller is None or self._poller.done():
            self._poller = asyncio.get_running_loop().create_task(self._poll())
            self._poller.add_done_callback(_reported)
        command = f"colibri switchboard approvals approve {approval_id} --config {self._config_path}"
        told = (
            f"{target} is held for approval {approval_id}: waiting for {', '.join(rule.approvers)} to "
            f"decide (`{command}`, or /approvals in colibri ui)"
        )
        try:
            async with anyio.create_task_group() as tasks:
                if caller is not None:
                    tasks.start_soon(_tell, caller, told)
                with anyio.move_on_after(timeout_s):
                    await waiter.decided.wait()
                tasks.cancel_scope.cancel()
        finally:
            self._waiting.pop(approval_id, None)
        approval = waiter.approval
        if approval is not None and approval.state == "approved":
            used = await self._write(lambda conn: approvals.use(conn, approval_id, utc_now()))
            if used:
                log.info("%s of %s goes on: approved by %s", target, call.principal, approval.decided_by)
                return None
        if approval is not None and approval.state == "denied":
            comment = approval.comment or ""
            return Refusal(
                APPROVAL_DENIED,
                f"{target} was denied by {approval.decided_by}" + (f": {comment}" if comment else ""),
                {"approval_id": approval_id, "denied_by": approval.decided_by, "comment": comment},
            )
        state = "no decision came" if approval is None else f"the approval is {approval.state}"
        return Refusal(
            APPROVAL_PENDING,
            f"{target} is held for a person's approval and {state} within {timeout_s:g} s; "
            f"{', '.join(rule.approvers)} may approve it (`{command}`), then the same call goes through once",
            {"approval_id": approval_id, "retry_after_s": min(RETRY_AFTER_S, max(1, round(timeout_s)))},
        )

    async def _poll(self) -> None:
        """While calls wait: read which of their approvals were decided, every POLL_S."""
        while self._waiting:
            await anyio.sleep(POLL_S)
            try:
                decided = await self._writer.run(partial(_states, ids=list(self._waiting)))
            except StorageError as exc:
                log.warning("audit store: cannot read the approvals of held calls: %s", exc)
                continue
            for approval_id, approval in decided.items():
                waiter = self._waiting.get(approval_id)
                if waiter is not None:
                    waiter.approval = approval
                    waiter.decided.set()

    async def _write(self, work: Callable[[Connection], T]) -> T:
        written = self._writer.write(work)
        if isinstance(written, Now):
            return written.value
        result: T = await written
        return result


def _states(db: Database, *, ids: list[str]) -> dict[str, approvals.Approval]:
    with db.snapshot() as conn:
        return approvals.states(conn, ids)


def _correlation(record: object) -> str:
    # The audit's record of the call (rows.py) names its correlation id; without one, a new id.
    correlation = getattr(record, "correlation_id", None)
    return correlation if isinstance(correlation, str) else ids.correlation_id()


def _reported(poller: asyncio.Task[None]) -> None:
    # The waiting calls then end APPROVAL_PENDING at their timeout; the next held call starts another.
    if not poller.cancelled() and poller.exception() is not None:
        log.error("approvals: the poller of held calls failed: %r", poller.exception())


async def _tell(caller: Caller, message: str) -> None:
    """Progress to the waiting client while its call is held, until cancelled."""
    count = 0
    while True:
        try:
            await caller.progress(count, None, message)
        except Exception as exc:  # noqa: BLE001 - a client gone deaf must not end the hold
            log.debug("progress of a held call not sent: %s", exc)
            return
        count += 1
        await anyio.sleep(PROGRESS_S)
