"""Pins: the definition of every tool the switchboard has listed, as approved (SPEC §15).

schema.py  the `tool_pins` table (the same DDL on both backends)
store.py   pins read, made on a tool's first listing, a differing definition noted, approved
api.py     what the switchboard (and `colibri switchboard pins`) use
"""

from colibri.domains.pins.schema import MIGRATIONS, POSTGRES_MIGRATIONS

__all__ = ["MIGRATIONS", "POSTGRES_MIGRATIONS"]
