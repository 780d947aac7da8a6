"""Serving either program (`colibri serve`, `colibri switchboard`): the parts they share.

- `stdio.run_stdio` and `http.run_http`: the runners. A program hands over its MCP server
  (and, for stdio, a `drain`); the runner owns the transport and the signal policy.
- `signals`: the one signal policy. SIGTERM or SIGINT runs the program's stop once; only the
  stdio runner then leaves the process itself (`signals.leave`), because the SDK's reader
  of a stdin that is not a pipe sits in a thread that cannot be joined.
- `http_limits`: the bounds of an HTTP face (allowed hosts, sessions, slow sockets, connections).
- `address.parse_address`, `exits` (the exit codes of every command), `logs` (the
  COLIBRI_LOG_LEVEL parser and stderr logging).
"""
