"""echo_server.py's bare SDK server on Colibri's event-loop stdio transport (`colibri.pipes`)
instead of the SDK's: a like-for-like comparison of what the chain and the database cost, the
transport being the same on both sides. Kept apart so that echo_server.py imports nothing of Colibri.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.echo_server import build
from colibri.pipes import stdio_streams


async def main() -> None:
    server = build()
    async with stdio_streams() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
