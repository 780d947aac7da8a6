"""The switchboard: a health-aware MCP gateway in front of downstream MCP servers (SPEC §7).

config.py      the mcpServers JSON, validated into frozen objects
states.py      the health state machine (one table, injected clock)
schedule.py    when each check runs next
checks.py      liveness, readiness, capability
transport.py   the SDK edge: open connections, converted errors
downstream.py  one supervised downstream: connection, restarts, checks, calls
router.py      listing and routing: namespacing, fallbacks, refusals
gateway.py     all of it together, transport-independent
server.py      the MCP adapter (stdio, Streamable HTTP)
cli.py         `colibri switchboard`
"""
