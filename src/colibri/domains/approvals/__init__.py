"""Approvals: calls held until a person decides, bound to the exact call (SPEC §22).

schema.py  the `approvals` table, and 0035's `held` outcome of `actions`
store.py   a call held, an approval taken by its one call, the held calls a restart interrupted
decisions.py  a person's decision made, or refused, and logged
api.py     what the switchboard, `colibri switchboard approvals` and `colibri ui`'s /approvals use
"""

from colibri.domains.approvals.schema import MIGRATIONS, POSTGRES_MIGRATIONS

__all__ = ["MIGRATIONS", "POSTGRES_MIGRATIONS"]
