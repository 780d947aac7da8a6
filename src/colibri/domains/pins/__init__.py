"""Pins: the definition of every tool the switchboard has listed, as approved (SPEC §15, §21).

schema.py  the `tool_pins` and `pin_definitions` tables (the same DDL on both backends)
store.py   pins read, made on a tool's first listing, a differing definition noted, re-pinned at
           an upgrade of the digest, shown to a person, approved
texts.py   a pinned and a seen definition as a person reads them: changed fields, unified diff
api.py     what the switchboard (and `colibri switchboard pins`) use
"""

from colibri.domains.pins.schema import MIGRATIONS, POSTGRES_MIGRATIONS

__all__ = ["MIGRATIONS", "POSTGRES_MIGRATIONS"]
