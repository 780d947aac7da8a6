"""What is listed and where each request goes, over every supervised downstream (SPEC §7, §12).

board.py        `Switchboard`: every downstream supervised, the router and the passthrough over them,
                list-change news, and a reloaded config applied as a difference
router.py       the tools listed (`server.tool`, fallback capabilities, `switchboard_status`) and the
                `Route` each tools/call takes
route.py        one tools/call from admission to answer, on every lane: fallbacks, never repeating a
                call that may have acted, SERVICE_UNAVAILABLE with every reason, the observers' moments
failures.py     what a route says when an entry fails or cannot take the call
observers.py    the seam every routed request passes: `RoutedCall`, `Answer`, and the `Observer`s that
                may refuse it, hide a name, hold its sending or its answer, or see it go
passthrough.py  resources, templates, prompts, completion, logging
asked.py        a resources/read or prompts/get through the observers' moments
policy.py       `Policies`: what each token may see and call (auth.policies)
limits.py       `Limiter`: how often a token and a tool may be called (rate_limits)
vouching.py     the caller's signed statement to a downstream Colibri (identity_key, SPEC §20)
identity_gate.py  `IdentityGate`: an "identity": "exchange" server is sent only a signed-in caller's
                tools/call (SPEC §20)
status.py       what `switchboard_status` returns
search.py       tool search (SPEC §23): find_tools and call_tool in place of every tool, lists by name
catalog.py      the BM25 index find_tools ranks with, rebuilt once per downstream listing
query.py        how find_tools reads a query: its words, ids and the lexicon's words (lexicon.py)
"""

from colibri.switchboard.base import TOOL_NOT_ADMITTED
from colibri.switchboard.routing.board import Switchboard
from colibri.switchboard.routing.identity_gate import IdentityGate
from colibri.switchboard.routing.limits import RATE_LIMITED, Limiter
from colibri.switchboard.routing.observers import (
    LOCAL,
    Answer,
    Observer,
    Outcome,
    Refusal,
    RoutedCall,
    Tried,
    Who,
)
from colibri.switchboard.routing.passthrough import Passthrough
from colibri.switchboard.routing.policy import Policies
from colibri.switchboard.routing.route import Attempt, Clearing, Route

__all__ = [
    "LOCAL",
    "RATE_LIMITED",
    "TOOL_NOT_ADMITTED",
    "Answer",
    "Attempt",
    "Clearing",
    "IdentityGate",
    "Limiter",
    "Observer",
    "Outcome",
    "Passthrough",
    "Policies",
    "Refusal",
    "Route",
    "RoutedCall",
    "Switchboard",
    "Tried",
    "Who",
]
