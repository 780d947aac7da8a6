"""`colibri serve` on stdio with SQLite imports nothing it does not need (SPEC §18's cold start).

Measured against what the SDK itself brings: a bare `import mcp.server.lowlevel, mcp.server.stdio`
already loads cryptography, Starlette, uvicorn and httpx2 (among others), so a Colibri server
cannot avoid those, and this test does not pretend otherwise. What it holds Colibri to: a whole
stdio session on SQLite (boot, tools/list, writes, reads, shutdown with its checkpoint) loads no
third-party package that the bare SDK does not, so none of psycopg, Jinja2, prometheus_client,
PyYAML, jsonschema or tqdm; and of cryptography only the Ed25519 part the log's signer needs
(not its serialization package, which pulls in SSH keys and bcrypt).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.helpers import call, clean_env, ok_data

pytestmark = pytest.mark.anyio

# What the issue names, and more, each a package only some other path needs.
NOT_FOR_STDIO_ON_SQLITE = ("psycopg", "jinja2", "prometheus_client", "yaml", "jsonschema", "tqdm")

_SERVE_AND_REPORT = """
import atexit, json, sys
atexit.register(lambda: open(sys.argv[1], "w").write(json.dumps(sorted(sys.modules))))
from colibri.cli import main
raise SystemExit(main(["serve"]))
"""


_BARE_SDK = "import json, sys, mcp.server.lowlevel, mcp.server.stdio; print(json.dumps(sorted(sys.modules)))"


def _top_level(modules: list[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def _third_party(modules: set[str]) -> set[str]:
    return {name for name in modules if name not in sys.stdlib_module_names and not name.startswith("_")}


def _bare_sdk() -> list[str]:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys, mcp.server.lowlevel, mcp.server.stdio; print(json.dumps(sorted(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    modules: list[str] = json.loads(done.stdout)
    return modules


async def test_a_stdio_session_on_sqlite_loads_nothing_beyond_what_the_sdk_brings(tmp_path: Path) -> None:
    report = tmp_path / "modules.json"
    env = clean_env(tmp_path, COLIBRI_LOG_LEVEL="warn")
    params = StdioServerParameters(
        command=sys.executable, args=["-c", _SERVE_AND_REPORT, str(report)], env=env
    )
    async with Client(params, mode="legacy", read_timeout_seconds=30) as client:
        assert len((await client.list_tools()).tools) == 14
        session = ok_data(await call(client, "audit_session_start", {}))["session_id"]
        ok_data(await call(client, "thought_record", {"session_id": session, "kind": "plan", "content": "x"}))
        ok_data(await call(client, "task_create", {"title": "a task"}))
        ok_data(await call(client, "task_next_actions", {}))
        ok_data(await call(client, "skill_list", {}))
        ok_data(await call(client, "merkle_finalize", {"session_id": session}))
    served = json.loads(report.read_text())
    sdk = _bare_sdk()

    brought_by_sdk = _top_level(sdk)
    for package in NOT_FOR_STDIO_ON_SQLITE:
        assert package not in brought_by_sdk, f"the SDK now loads {package} itself: revisit this test"
    beyond_sdk = _third_party(_top_level(served)) - _third_party(brought_by_sdk) - {"colibri"}
    assert beyond_sdk == set(), (
        f"serve on stdio with SQLite loaded packages the bare SDK does not: {beyond_sdk}"
    )
    assert "cryptography" in brought_by_sdk  # so Ed25519 below costs a submodule, not a package
    assert "cryptography.hazmat.primitives.asymmetric.ed25519" in served
    assert "cryptography.hazmat.primitives.serialization.ssh" not in served


# What `colibri serve` imports before its first answers: the CLI, the server, its App with the kept
# declarations, and tools/list described from them; then phase 2 (`App.boot`). In a fresh
# interpreter, so that no other test has imported anything already.
_LIST_THEN_BOOT = """
import json, sys
import anyio
from colibri.cli import main
from colibri.runtime.app import App
from colibri.runtime.config import Config
from colibri.runtime.server import build_server, describe

def colibri_modules():
    return sorted(name for name in sys.modules if name.startswith("colibri."))

async def boot(app):
    await app.boot()
    reply = await app.call("audit_session_start", {})
    assert not reply.is_error, reply.text

app = App(Config.from_env({"COLIBRI_DB_PATH": sys.argv[1]}))
build_server(app)
listed = [describe(tool) for tool in app.admitted()]
assert len(listed) == 14, listed
at_list = colibri_modules()
anyio.run(boot, app)
after_boot = colibri_modules()
app.close()
print(json.dumps({"list": at_list, "boot": after_boot}))
"""

# Phase 2's thread loads these; none of them may be needed to answer initialize or tools/list. Nor
# are the token store and the OAuth faces ever needed on stdio, where no token comes.
PHASE_2_ONLY = (
    "colibri.chain.",
    "colibri.domains.",
    "colibri.runtime.http_auth",
    "colibri.serving.oauth",
    "colibri.checkpointing",
    "colibri.runtime.boot",
    "colibri.runtime.checkpoints",
    "colibri.tools.catalog",
    "colibri.core.spec",
)


def test_initialize_and_tools_list_import_no_chain_domain_model_or_handler(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _LIST_THEN_BOOT, str(tmp_path / "colibri.db")],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = json.loads(done.stdout)
    early = [name for name in loaded["list"] if name.startswith(PHASE_2_ONLY)]
    assert early == [], f"imported before the first answers, which the kept declarations give: {early}"
    # Phase 2 loads the chain and every tool's handler and models, before the first call needs them.
    for name in ("colibri.chain.pipeline", "colibri.domains.proofs.handlers", "colibri.domains.tasks.models"):
        assert name in loaded["boot"], name
