"""The switchboard: a health-aware MCP gateway in front of downstream MCP servers (SPEC §7, §12, §19).

Eight packages, each importing only those above it in this list (lowest first), and another only
through what its __init__ exports (tests/test_architecture.py holds both rules):

base/        the vocabulary: the error tree, the promises between parts, envelopes, the lanes' JSON
config/      the config file: read, `${VAR}` expanded, checked, frozen
health/      the checks, when they run, and the state machine that judges each downstream
downstream/  one supervised connection per downstream: transports, both lanes, its calls
routing/     the board: what is listed, the `Route` every call takes, the observers of every call,
             who may call what (policies) and how often (rate limits)
audit/       the audit store: every routed call's row in a signed log, and the tool pins (SPEC §15)
faces/       how clients and people reach it: MCP over stdio and HTTP, the lean lane, status, metrics
program/     `colibri switchboard`: the command, the wiring, reload

This module imports nothing: `colibri.cli` imports `colibri.switchboard.program` when asked to run it.
"""
