"""The switchboard: a health-aware MCP gateway in front of downstream MCP servers (SPEC §7, §12).

config.py      the mcpServers JSON, validated into frozen objects
expand.py      ${VAR} / ${VAR:-default} in the fields that start or reach a server
states.py      the health state machine (one table, injected clock)
schedule.py    when each check runs next
checks.py      liveness, readiness, capability
transport.py   the SDK edge: open connections, converted errors, callbacks from the downstream
catalog.py     a downstream's resources, templates and prompts
downstream.py  one supervised downstream: connection, restarts, checks, calls
router.py      tools: namespacing, fallbacks, refusals
passthrough.py everything else: resources, prompts, completion, logging
gateway.py     all of it together, transport-independent; applies a reloaded config
reload.py      SIGHUP and --watch
auth.py        the tokens file, as the SDK's bearer-token verifier
metrics.py     /healthz, /readyz, /metrics (prometheus_client)
serving.py     the serving options the command line settled
server.py      the MCP adapter (stdio, Streamable HTTP)
cli.py         `colibri switchboard`, `colibri token create`
"""
