"""`python -m colibri.tools`: write the catalogue's schemas again (snapshot.py), after a change to a
tool's arguments or result model."""

from __future__ import annotations

from colibri.tools.catalog import TOOLS
from colibri.tools.snapshot import PATH, write

write(TOOLS)
print(f"wrote the schemas of {len(TOOLS)} tools to {PATH}")
