"""0032: what proved a call's caller (SPEC §20): `actions` gains `issuer` and `token_id`; 0033:
`via`, the gateway that vouched for the caller.

`token_id` ties a row to the credential behind it, so an auditor can tell which token made a call:
for a Colibri token (a tokens file, `colibri token create`) its SHA-256, the digest it is stored
as; for an OAuth token the JWT's `jti` (or its SHA-256). `issuer` is the identity provider's
issuer for an OAuth token and NULL for a Colibri token, which Colibri issued itself. Both are NULL
on stdio and in rows written before 0032. Like `reason`, they are columns of the row, not fields of
its log entry (the entry's format is fixed, SPEC §11). Plain added columns, the same DDL on SQLite
and PostgreSQL: no constraint changes, so no table is rebuilt and every row keeps its number.

`via` names the gateway through which a Colibri took a call's principal on the word of a signed
on-behalf-of statement (domains/access/on_behalf.py): the trusted key's name on stdio, the
gateway's own token name over HTTP. NULL for every call that came straight from its caller, and
in rows written before 0033.
"""

from __future__ import annotations

from colibri.storage.migrations import Migration

MIGRATION = Migration(
    "0032_actions_identity",
    ("ALTER TABLE actions ADD COLUMN issuer TEXT", "ALTER TABLE actions ADD COLUMN token_id TEXT"),
)
VIA = Migration("0033_actions_via", ("ALTER TABLE actions ADD COLUMN via TEXT",))
MIGRATIONS = (MIGRATION, VIA)  # the same DDL on SQLite and PostgreSQL
