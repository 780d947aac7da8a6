"""Reading a switchboard's audit store from outside, and what a row should say (SPEC §15)."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import rfc8785

from tests.helpers import colibri, query
from tests.switchboard.helpers import RawSwitchboard, switchboard_env

RECEIPT = "io.colibri/receipt"  # written out: the tests do not take the name from the code they test


def sha256_of(value: Any) -> str:
    """SHA-256 of the RFC 8785 bytes of `value`, by the rfc8785 package (not the code under test)."""
    return hashlib.sha256(rfc8785.dumps(value)).hexdigest()


def answer_digest(result: dict[str, Any]) -> str:
    """What a row's result_hash holds: the result's digest, less the 2026 era's envelope fields and
    less the gateway's own receipt (SPEC §22: it names the entry holding the digest), with a `_meta`
    it leaves empty."""
    shown = {key: value for key, value in result.items() if key not in ("resultType", "ttlMs", "cacheScope")}
    meta = {key: value for key, value in shown.pop("_meta", {}).items() if key != RECEIPT}
    return sha256_of(shown | ({"_meta": meta} if meta else {}))


def arguments_column(arguments: Any) -> str:
    return json.dumps({"sha256": sha256_of(arguments)}, separators=(",", ":"))


def actions(store: Path) -> list[dict[str, Any]]:
    """Every row of `actions`, oldest first, with its log index (None while it is not logged)."""
    rows = query(
        store,
        "SELECT a.*, e.idx AS log_index FROM actions a"
        " LEFT JOIN log_entries e ON e.kind = 'action' AND e.ref = a.sequence_no ORDER BY a.sequence_no",
    )
    return [dict(row) for row in rows]


def calls(store: Path) -> list[dict[str, Any]]:
    """The rows of routed requests: not the switchboard's own (status, pin events)."""
    return [
        row
        for row in actions(store)
        if row["tool"] != "switchboard_status" and not row["tool"].startswith("switchboard:")
    ]


def verify(store: Path, env: dict[str, str], *extra: str) -> tuple[int, str]:
    done = colibri("verify", "--db", str(store), *extra, env=env)
    return done.returncode, done.stdout + done.stderr


def checkpoint_and_key(store: Path, env: dict[str, str], folder: Path) -> tuple[Path, str]:
    """The latest checkpoint of the store, in a file, and the verifier key of the store's key file."""
    made = colibri("checkpoint", "--db", str(store), env=env)
    assert made.returncode == 0, made.stderr
    checkpoint = folder / "kept.checkpoint"
    checkpoint.write_text(made.stdout)
    shown = colibri("key", "show", str(store.parent / "colibri.key"), env=env)
    assert shown.returncode == 0, shown.stderr
    return checkpoint, shown.stdout.strip()


class Raw:
    """A switchboard over stdio driven by JSON-RPC lines, past its handshake: what a client
    receives is the JSON itself, whose digest the audit row must hold."""

    def __init__(self, config: Path, *extra: str) -> None:
        self.board = RawSwitchboard(config, switchboard_env(), *extra)
        client = {"name": "audit-test", "version": "1"}
        self.board.request(
            "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
        )
        self.board.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        reply = self.board.request("tools/call", {"name": tool, "arguments": arguments}, timeout=30)
        result: dict[str, Any] = reply["result"]
        return result

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self.board.request(method, params, timeout=30)["result"]
        return result

    def wait_for(self, server: str, *states: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            status = self.call("switchboard_status", {})["structuredContent"]["data"]
            state = next(s["state"] for s in status["servers"] if s["name"] == server)
            if state in states:
                return
            assert time.monotonic() < deadline, f"{server} stayed {state}, wanted {states}"
            time.sleep(0.05)

    def close(self) -> bytes:
        """Stop it (its stdin closed); what it wrote on stderr."""
        return self.board.finish(timeout=30)[1]
