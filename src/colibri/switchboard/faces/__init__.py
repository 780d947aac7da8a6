"""How clients and people reach the switchboard: the MCP server (stdio and Streamable HTTP), the lean
lane beside it on stdio, the HTTP face's tokens and status page, and the Prometheus metrics.

mcp_server.py   the SDK's low-level `Server` over the board: tools, resources, prompts, completion,
                logging, list changes (both protocol eras)
lean.py         the lean lane facing a stdio client: routed tools/call taken off the SDK's path
lean_caller.py  such a call as the `Caller` of its downstream call (progress, logs, relays)
lean_wire.py    the JSON-RPC body it writes back, on its `Wire` (the client's stdout)
rounds.py       a 2026-era client's input requests: calls held between rounds, their sealed states
held.py         one such held call, the `Caller` of its downstream call
peers.py        the connected clients, as a downstream's news and requests reach them
listening.py    `subscriptions/listen` for 2026-era clients, backed by downstream subscriptions
http_face.py    what the HTTP face adds around /mcp: the bearer-token check and /status
json_answers.py a POST's answer-only event stream sent as one JSON body (keeps connections open)
post_lane.py    the HTTP face's lean lane: a POST of one routed tools/call answered beside the SDK
post_http.py    what that lane reads of a request and keeps of its session
outbox.py       what it sends back on the call's own POST: one JSON body, or an event stream
driving.py      one routed call of either lean lane driven along its route
tokens.py       the tokens file (`colibri token create --file`), the SDK's token verifier
status_page.py  GET /status for people (templates/)
metrics.py      /healthz, /readyz, /metrics, and `Metrics`, an observer of every routed call
serving.py      how the command line asked the switchboard to serve
"""

from colibri.switchboard.faces.http_face import FaceAuth, status_page
from colibri.switchboard.faces.json_answers import JsonAnswers
from colibri.switchboard.faces.lean import ClientLane
from colibri.switchboard.faces.mcp_server import SERVER_NAME, build_server
from colibri.switchboard.faces.metrics import Metrics, probe_routes
from colibri.switchboard.faces.post_lane import lane_in_front
from colibri.switchboard.faces.serving import Serving
from colibri.switchboard.faces.status_page import render_status
from colibri.switchboard.faces.tokens import TokensFile

__all__ = [
    "SERVER_NAME",
    "ClientLane",
    "FaceAuth",
    "JsonAnswers",
    "Metrics",
    "Serving",
    "TokensFile",
    "build_server",
    "lane_in_front",
    "probe_routes",
    "render_status",
    "status_page",
]
