"""Why a call was refused: the `reason` an `actions` row carries (SPEC §21), named in one place.

    scope             the caller's token has too little scope (a read token asked a write tool)
    policy:<name>     a policy refused it (`policy:ana`: auth.policies.ana)
    rate_limit        over a rate limit (per token or per tool)
    withheld          a tool whose definition changed since it was pinned
    unknown_tool      no such tool (a name over 256 characters included)
    approval_denied   a person said no (SPEC §22)
    approval_pending  held for a person's decision, and none came within timeout_s
    approval_required a rule asks the caller's own user, and its client cannot be asked
    unavailable:<why> nothing could take it: `unavailable:unhealthy`, `unavailable:mode`, ...

A row's reason comes with a one-line message (`message`), escaped and bounded, so a refusal of a
name of a megabyte is still a row of a few hundred bytes.
"""

from __future__ import annotations

from colibri.core.shown import shown

SCOPE = "scope"
RATE_LIMIT = "rate_limit"
WITHHELD = "withheld"
UNKNOWN_TOOL = "unknown_tool"
APPROVAL_DENIED = "approval_denied"
APPROVAL_PENDING = "approval_pending"
APPROVAL_REQUIRED = "approval_required"

LONGEST_MESSAGE = 300  # characters of a reason's message kept in its row


def policy(name: str) -> str:
    return f"policy:{name}"


def unavailable(why: str) -> str:
    return f"unavailable:{why}"


def message(text: str) -> str:
    """A refusal's message as its row keeps it: one line, escaped, at most LONGEST_MESSAGE chars."""
    # Cut first: a message naming a megabyte-long name is never escaped whole.
    line = shown(text[: LONGEST_MESSAGE + 1], longest=LONGEST_MESSAGE + 1)
    return line if len(line) <= LONGEST_MESSAGE else line[: LONGEST_MESSAGE - 3] + "..."
