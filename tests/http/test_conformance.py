"""The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in npm/) against
`colibri serve --http`.

Run: every server scenario that applies to a server offering tools only —
  server-initialize, ping, tools-list, server-sse-multiple-streams, dns-rebinding-protection.
Not run, because each needs something a tools-only server does not offer:
  tools-call-* (simple-text, image, audio, embedded-resource, mixed-content, with-logging, error,
  with-progress, sampling, elicitation), json-schema-2020-12, server-sse-polling and the
  elicitation-sep* scenarios call fixture tools (test_simple_text, test_reconnection, ...) that
  only the suite's reference server has; logging-set-level and completion-complete need the
  logging and completions capabilities; resources-* and prompts-* need resources and prompts.
The suite's client sends no Authorization header, so the server runs with --no-auth on loopback.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.http.helpers import http_env, running
from tests.http.node import require_node, run_conformance

SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> object:
    require_node()
    tmp_path = tmp_path_factory.mktemp("conformance")
    with running(http_env(tmp_path), tmp_path, "--no-auth") as server:
        yield server


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario_passes(served: object, scenario: str, tmp_path: Path) -> None:
    url = served.url  # type: ignore[attr-defined]
    done = run_conformance(url, scenario, tmp_path)
    output = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    assert done.returncode == 0, output[-4000:]
    passed = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", output)
    assert passed is not None, output[-4000:]
    assert passed.group(1) == passed.group(2) and int(passed.group(2)) > 0 and passed.group(3) == "0", output
