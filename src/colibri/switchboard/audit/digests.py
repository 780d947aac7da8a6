"""What the audit store keeps of a routed call's content: digests, never the content (SPEC §15).

A gateway must not copy secrets (tokens in arguments, file contents in results) into its log. A
row's `arguments` column holds `{"sha256": HEX}`, the SHA-256 of the JCS (RFC 8785) of what was
asked — a tool's arguments, `{"uri": ...}` for a resource, `{"name": ..., "arguments": ...}` for a
prompt — and `result_hash` the SHA-256 of the JCS of the result the client received, less the
fields of the protocol's 2026 era that each era's wire adds or drops on its own (`resultType`,
`ttlMs`, `cacheScope`) and less the gateway's own receipt (`_meta["io.colibri/receipt"]`, which
names the very entry holding the digest, SPEC §22; a `_meta` left empty goes with it), or of the
JSON-RPC error object. Anyone holding the arguments or the answer recomputes the digest, however
their JSON was written, and finds the row.

A tool's pin is the SHA-256 of the JCS of everything a client is shown of it, as the downstream
listed it (SPEC §21): name, title, description, inputSchema, outputSchema, annotations, icons,
`_meta`, execution — the whole `Tool` the switchboard passes on, so a field a later protocol adds
is pinned too. That is digest version 2; version 1, before §21, left out the last three, and
`legacy_digest` still computes it, so that a pin made then is re-pinned rather than read as changed.
"""

from __future__ import annotations

import hashlib
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from colibri.core.jcs import canonical, digest
from colibri.domains.log.api import RECEIPT

LEGACY_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
ERA_FIELDS = frozenset({"resultType", "ttlMs", "cacheScope"})


def arguments_column(asked: dict[str, Any] | None) -> str:
    """The `arguments` column of a routed call: the digest of what was asked, as a JSON object."""
    return f'{{"sha256":"{digest({} if asked is None else asked)}"}}'


def result_digest(result: BaseModel | dict[str, Any] | None, error: MCPError | None = None) -> str | None:
    """The digest of the answer the client received: a result, or a JSON-RPC error."""
    if error is not None:
        shown: dict[str, Any] = {"code": error.error.code, "message": error.error.message}
        if error.error.data is not None:
            shown["data"] = error.error.data
        return digest(shown)
    if result is None:
        return None
    # As the SDK's server writes a result (the lean lane passes the downstream's JSON as it is).
    shown = (
        result.model_dump(by_alias=True, mode="json", exclude_none=True)
        if isinstance(result, BaseModel)
        else result
    )
    if not ERA_FIELDS.isdisjoint(shown):
        shown = {key: value for key, value in shown.items() if key not in ERA_FIELDS}
    meta = shown.get("_meta")
    if isinstance(meta, dict) and (not meta or RECEIPT in meta):
        rest = {key: value for key, value in meta.items() if key != RECEIPT}
        shown = {key: value for key, value in shown.items() if key != "_meta"}
        if rest:
            shown["_meta"] = rest
    return digest(shown)


def definition(tool: types.Tool) -> tuple[str, str]:
    """Everything a client is shown of a tool as JCS text, and its SHA-256 (digest version 2)."""
    text = canonical(tool.model_dump(by_alias=True, mode="json", exclude_none=True))
    return text, digest_of_text(text)


def legacy_digest(tool: types.Tool) -> str:
    """The digest version 1 gave a tool: its SHA-256 over LEGACY_FIELDS only."""
    listed = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
    return digest_of_text(canonical({key: listed[key] for key in LEGACY_FIELDS if key in listed}))


def digest_of_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
