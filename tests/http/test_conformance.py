"""The official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16, pinned in npm/, run on
Node.js 22 from node22/) against both programs over Streamable HTTP: `colibri serve --http` and
`colibri switchboard --http` (with a `colibri serve` and a fault server behind it).

The suite's server scenarios are all of the handshake era (2025-06-18, 2025-11-25); none drives the
2026-07-28 era (the era's own tests are tests/switchboard/test_input_rounds.py, tests/tracing and
tests/http/test_modern_headers.py). Run here, every scenario that a server of each kind can pass:

  both        server-initialize, ping, tools-list, resources-list (the skills' skill:// files;
              the switchboard's downstreams' resources), server-sse-multiple-streams,
              dns-rebinding-protection
  switchboard logging-set-level (passed to its downstreams) and prompts-list (theirs, namespaced)

Not run, because each needs what only the suite's own reference server has — fixture tools, URIs
and prompts by name — not a behaviour either program lacks:
  tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content, -with-logging,
  -error, -with-progress, -sampling, -elicitation (tools named test_simple_text, test_image, ...),
  json-schema-2020-12 (json_schema_2020_12_tool), elicitation-sep1034-defaults and
  elicitation-sep1330-enums (their test_elicitation_* tools), server-sse-polling
  (test_reconnection), resources-read-text/-read-binary/-templates-read/-subscribe/-unsubscribe
  (test://static-text, test://static-binary, test://template/{id}/data, test://watched-resource),
  prompts-get-simple/-with-args/-embedded-resource/-with-image (test_simple_prompt, ...),
  completion-complete (a prompt named test_prompt_with_arguments).
On `colibri serve`, also logging-set-level and prompts-list: it offers no logging capability (the
2026 era deprecates it) and no prompts. The suite's client sends no Authorization header, so each
program runs with --no-auth on loopback.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.helpers import http_env, running
from tests.http.node import require_node22, run_conformance
from tests.switchboard.helpers import (
    Downstreams,
    free_port,
    stop,
    switchboard_command,
    switchboard_env,
    wait_for_port,
    write_config,
)

BOTH = [
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
]
SWITCHBOARD_ONLY = ["logging-set-level", "prompts-list"]


@pytest.fixture(scope="module")
def serve_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_node22()
    tmp_path = tmp_path_factory.mktemp("conformance")
    skill = tmp_path / "skills" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: demo\ndescription: A skill for the suite\n---\nHello\n")
    with running(http_env(tmp_path), tmp_path, "--no-auth") as server:
        yield server.url  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def switchboard_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_node22()
    tmp_path = tmp_path_factory.mktemp("conformance-switchboard")
    downstreams = Downstreams(tmp_path)
    config = write_config(
        tmp_path,
        {"colibri": downstreams.colibri(), "fault": downstreams.fault("fault")},
        health={"readiness_s": 60},
    )
    port = free_port()
    board = subprocess.Popen(
        switchboard_command(config, "--http", f"127.0.0.1:{port}"), env=switchboard_env()
    )
    try:
        wait_for_port(port, board)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(board)


def passes(url: str, scenario: str, tmp_path: Path) -> None:
    done = run_conformance(url, scenario, tmp_path)
    output = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    assert done.returncode == 0, output[-4000:]
    passed = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", output)
    assert passed is not None, output[-4000:]
    assert passed.group(1) == passed.group(2) and int(passed.group(2)) > 0 and passed.group(3) == "0", output


@pytest.mark.parametrize("scenario", BOTH)
def test_colibri_serve_passes(serve_url: str, scenario: str, tmp_path: Path) -> None:
    passes(serve_url, scenario, tmp_path)


@pytest.mark.parametrize("scenario", BOTH + SWITCHBOARD_ONLY)
def test_the_switchboard_passes(switchboard_url: str, scenario: str, tmp_path: Path) -> None:
    passes(switchboard_url, scenario, tmp_path)
