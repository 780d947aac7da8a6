"""The event-loop stdio transport keeps the wire clean: stray prints go to stderr."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import anyio, os, sys
from colibri.pipes import stdio_streams

async def main():
    async with stdio_streams() as (read, write):
        print("stray print from a library")
        os.write(1, b"stray write to fd 1\\n")
        assert os.read(0, 10) == b"", "fd 0 reads as /dev/null while serving"
    print("after serving, stdout is stdout again")

anyio.run(main)
"""


def test_stray_output_while_serving_goes_to_stderr() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        input=b"",
        capture_output=True,
        timeout=30,
        check=True,
    )
    assert result.stdout == b"after serving, stdout is stdout again\n"
    assert b"stray print from a library" in result.stderr
    assert b"stray write to fd 1" in result.stderr
