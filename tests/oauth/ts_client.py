"""The Python side of ts_client.mjs: the official TypeScript SDK client signing in to a Colibri
/mcp URL by itself, by client credentials or by authorization code + PKCE, the user signing in at
the provider in headless Chromium while the script waits for the redirect on its stdin."""

from __future__ import annotations

import json
import selectors
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tests.helpers.idp import SCOPES, IdentityProvider
from tests.oauth.sdk_flows import sign_in_with_chromium

SCRIPT = Path(__file__).resolve().with_name("ts_client.mjs")
TIMEOUT = 120.0


def calls(prefix: str = "") -> list[dict[str, Any]]:
    """What the client calls once signed in: a read, then a write, which needs colibri:write (the
    scope the 401 named); through the switchboard each tool is PREFIX.TOOL."""
    return [
        {"tool": f"{prefix}server_ping"},
        {"tool": f"{prefix}audit_session_start", "arguments": {"agent_id": "ts-oauth"}, "save": "session"},
        {
            "tool": f"{prefix}thought_record",
            "arguments": {"session_id": "$session.data.session_id", "kind": "plan", "content": "signed in"},
        },
    ]


@dataclass
class TsClient:
    """ts_client.mjs running on one spec: its stdout read line by line, its stdin open for the redirect."""

    process: subprocess.Popen[str]
    stderr: IO[str]
    deadline: float

    def line(self) -> dict[str, Any]:
        """The script's next JSON line, waited for until the deadline. The selector sees the pipe,
        not the reader's buffer: enough, as the script writes a line only once the one before it
        has been answered (the authorization URL), or as its last (the report)."""
        assert self.process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            if selector.select(timeout=max(0.0, self.deadline - time.monotonic())):
                text = self.process.stdout.readline()
                if text:
                    line: dict[str, Any] = json.loads(text)
                    return line
                raise AssertionError(f"ts_client.mjs ended without its report: {self.log()}")
        raise AssertionError(f"ts_client.mjs said nothing within {TIMEOUT:.0f} s: {self.log()}")

    def send(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{text}\n")
        self.process.stdin.flush()

    def report(self) -> dict[str, Any]:
        line = self.line()
        assert "report" in line, line
        report: dict[str, Any] = line["report"]
        assert self.process.wait(timeout=max(1.0, self.deadline - time.monotonic())) == 0, self.log()
        return report

    def log(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read()[-3000:]


@contextmanager
def ts_client(node: str, spec: dict[str, Any], tmp_path: Path) -> Iterator[TsClient]:
    """ts_client.mjs started on `spec`; killed, if it has not ended, and waited for on the way out."""
    path = tmp_path / f"ts-spec-{time.monotonic_ns()}.json"
    path.write_text(json.dumps(spec))
    # Its stderr goes to a file, not a pipe nobody reads while stdout is awaited.
    with tempfile.TemporaryFile("w+") as stderr:
        process = subprocess.Popen(
            [node, str(SCRIPT), str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        try:
            yield TsClient(process, stderr, time.monotonic() + TIMEOUT)
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()


def client_credentials(
    node: str, idp: IdentityProvider, url: str, tools: list[dict[str, Any]], tmp_path: Path
) -> dict[str, Any]:
    """The report of the SDK's ClientCredentialsProvider signing in to `url` and making `tools` calls."""
    spec = {
        "url": url,
        "flow": "client_credentials",
        "issuer": idp.issuer,
        "clientId": idp.client_id,
        "clientSecret": idp.client_secret,
        "scope": SCOPES,
        "calls": tools,
    }
    with ts_client(node, spec, tmp_path) as client:
        return client.report()


def browser_sign_in(
    node: str, idp: IdentityProvider, url: str, tools: list[dict[str, Any]], tmp_path: Path, *, user: str
) -> dict[str, Any]:
    """The report of the script's authorization code + PKCE sign-in to `url`, `user` signing in
    with Chromium at the provider, then its `tools` calls; the authorization URL it was sent to is
    in report["authorize"]."""
    spec = {
        "url": url,
        "flow": "authorization_code",
        "issuer": idp.issuer,
        "clientId": idp.public_client_id,
        "redirectUrl": idp.redirect_uri,
        "calls": tools,
    }
    with ts_client(node, spec, tmp_path) as client:
        first = client.line()
        assert "authorize" in first, f"no authorization URL: {first} {client.log()}"
        client.send(sign_in_with_chromium(first["authorize"], user, idp.redirect_uri))
        report = client.report()
    report["authorize"] = first["authorize"]
    return report
