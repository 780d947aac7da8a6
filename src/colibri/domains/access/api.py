"""What the switchboard may use of access (it reaches a domain only through its `api`): the
on-behalf-of statement it signs for a downstream Colibri (on_behalf.py, SPEC §20)."""

from __future__ import annotations

from colibri.domains.access.on_behalf import ON_BEHALF_OF, StatementKey, read_statement_key

__all__ = ["ON_BEHALF_OF", "StatementKey", "read_statement_key"]
