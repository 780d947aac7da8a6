"""One supervised connection per downstream server: started, watched, restarted, checked, called.

supervisor.py  `Downstream`: the connection's lifecycle (restarts with backoff), its health machine
               and check loop, what it lists; `Connector` is how it opens a connection
calls.py       the real calls of a downstream, counted and judged as health evidence, on either lane
catalog.py     what it offers besides tools: resources, templates, prompts
transport.py   the SDK edge: one `mcp.Client` per connection, the one place its errors become ours
streams.py     the byte streams under it: a stdio process (with a lean lane) or an HTTP connection
watched.py     a read stream that reports its own end, so a lost connection is noticed at once
lanes.py       the lean lane of a stdio connection: tools/call as JSON lines beside the SDK
http_lane.py   the lean lane of a Streamable HTTP connection: tools/call POSTed as raw JSON-RPC on
               the SDK's own pooled client; http_answers.py: its responses read as the SDK reads them
results.py     a raw tools/call result checked as the SDK's client checks one
asking.py      a 2026-era server's input requests in answer to a lean request: the call made again
               through the SDK's client, which relays them (sampling, elicitation, roots)
forwards.py    progress on its way to the client, which a call's result waits for
callbacks.py   what a downstream sends unasked: to its call's client, or to its owner's `Hooks`
owners.py      which call a downstream's message belongs to; those of no call dropped and counted
isolated.py    "isolate": "principal": a process per principal, started on demand, stopped when idle
exchange.py    "identity": "exchange": each caller's token exchanged at the issuer for the server's own,
               on a connection per principal (SUBJECT: the caller's token, set by the HTTP face)
"""

from colibri.switchboard.downstream.catalog import template_matches
from colibri.switchboard.downstream.exchange import SUBJECT
from colibri.switchboard.downstream.owners import DROPS
from colibri.switchboard.downstream.results import SERVER_INFO_META
from colibri.switchboard.downstream.supervisor import CONNECT_TIMEOUT_S, Connector, Downstream
from colibri.switchboard.downstream.transport import open_session

__all__ = [
    "CONNECT_TIMEOUT_S",
    "DROPS",
    "SERVER_INFO_META",
    "SUBJECT",
    "Connector",
    "Downstream",
    "open_session",
    "template_matches",
]
