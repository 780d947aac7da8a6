"""A downstream's stderr passes the switchboard's own secret masking (SPEC §21): a server that
echoes a `${VAR}` value from its entry shows `***` on the switchboard's stderr, line by line,
even where the value straddles the pieces a very long line is passed on in."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.switchboard.helpers import FAULT_SERVER, stop, switchboard_command, switchboard_env, write_config

SECRET = "tok-8c1f0e5a9d3b7e2f"
LONG_LINE_CUT = 65536  # the piece a line longer than this is passed on in

ECHOING = f"""
import os, runpy, sys
token = os.environ["API_TOKEN"]
err = sys.stderr.buffer
err.write(f"debug: using token {{token}} for the API\\n".encode())
err.write(b"x" * ({LONG_LINE_CUT} - 7) + token.encode() + b" (long line)\\n")
err.write(b"\\xff\\xfe bytes that are not UTF-8 pass as they are\\n")
err.write(b"echo done\\n")
err.flush()
sys.argv = [{str(FAULT_SERVER)!r}]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_a_downstreams_stderr_has_its_secrets_masked(tmp_path: Path) -> None:
    script = tmp_path / "echoing_server.py"
    script.write_text(ECHOING)
    entry = {
        "command": sys.executable,
        "args": [str(script)],
        "env": {"API_TOKEN": "${UPSTREAM_TOKEN}", "FAULT_NAME": "a", "FAULT_MODE": "answer"},
    }
    config = write_config(tmp_path, {"a": entry})
    stderr_file = tmp_path / "switchboard.stderr"
    with stderr_file.open("wb") as stderr:
        process = subprocess.Popen(
            switchboard_command(config),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env={**switchboard_env(), "UPSTREAM_TOKEN": SECRET},
        )
        try:
            deadline = time.monotonic() + 30
            while b"echo done" not in stderr_file.read_bytes():
                assert process.poll() is None, stderr_file.read_bytes()[-2000:]
                assert time.monotonic() < deadline, stderr_file.read_bytes()[-2000:]
                time.sleep(0.05)  # polling the file the condition is in
        finally:
            stop(process)
            assert process.stdin is not None
            process.stdin.close()
    shown = stderr_file.read_bytes()
    assert SECRET.encode() not in shown
    assert b"debug: using token *** for the API\n" in shown
    assert b"x" * (LONG_LINE_CUT - 7) + b"*** (long line)\n" in shown
    assert b"\xff\xfe bytes that are not UTF-8 pass as they are\n" in shown
