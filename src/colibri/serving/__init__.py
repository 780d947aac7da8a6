"""Serving either program (`colibri serve`, `colibri ui`, `colibri switchboard`): the parts they share.

- `stdio.run_stdio` and `http.run_http`: the runners. A program hands over its MCP server
  (and, for stdio, a `drain`); the runner owns the transport and the signal policy.
- `signals`: the one signal policy. SIGTERM or SIGINT runs the program's stop once; only the
  stdio runner then leaves the process itself (`signals.leave`), because the SDK's reader
  of a stdin that is not a pipe sits in a thread that cannot be joined.
- `listen`: the socket bound before anything starts; a bad address is an `AddressError`, one
  line and exit 2 (`errors`: every start-up failure carries its exit code).
- `hosts`: the loopback rule and the Host/Origin allow-list; `guards.guarded`: the checks in
  front of every route of an HTTP face (allow-list, body caps and deadline, anti-framing).
- `sessions`: MCP sessions capped per principal; `origin`: same-origin sign-in forms;
  `bearer`: a plain route behind a bearer token; `secret_files`: a tokens file others may write;
  `protected_resource`: the RFC 9728 metadata and the `WWW-Authenticate` challenge of `/mcp`.
- `http_limits`: the bounds of an HTTP face (sessions, bodies, slow sockets, connections).
- `address.parse_address`, `exits` (the exit codes of every command), `logs` (the
  COLIBRI_LOG_LEVEL parser and stderr logging).
"""
