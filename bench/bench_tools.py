"""Tool search (SPEC §23): what the tool list costs an agent's context, and whether search finds.

Five real servers behind one switchboard over stdio: `colibri serve`, the npm reference servers
server-everything (tests/switchboard/npm), server-memory and server-filesystem (bench/npm, pinned)
and mcp-server-time (PyPI, the dev extra). Reported:
- the tokens of the tools/list result a client receives (its JSON, in the cl100k_base encoding:
  js-tiktoken, whose ranks ship in the npm package, so nothing is fetched), with tool search off and
  on, per server and in all (target: >= 90% fewer with search on);
- top-5 recall of find_tools over the task phrasings of tools_phrasings.json, each naming the tool it
  should find, written as a user asks, not in the descriptions' words (target >= 0.9), and over
  the held-out phrasings of tools_phrasings_heldout.json (no target: a check on the first figure);
- find_tools p50 over an index of 1,000 tools (a generated server behind the same switchboard) beside
  a direct tools/list of those tools in the same run, both over the wire; and the search alone,
  in process (target <= 2 ms).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

from bench.common import line, percentile
from bench.many_tools_server import AREAS, OBJECTS, VERBS
from bench.many_tools_server import tools as many_tools
from colibri.storage.sqlite.fts import TextIndex
from colibri.switchboard.routing.catalog import document, words_of

HERE = Path(__file__).parent
NPM = HERE / "npm"
REFERENCE = NPM / "node_modules" / "@modelcontextprotocol"
EVERYTHING = (
    HERE.parent / "tests/switchboard/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)
PHRASINGS = HERE / "tools_phrasings.json"
# Written apart from the search code and its synonyms, by someone who saw neither: a check on the above.
HELDOUT = HERE / "tools_phrasings_heldout.json"
MANY_TOOLS = HERE / "many_tools_server.py"
SEARCH_CALLS = 300


def _node() -> str:
    node = shutil.which("node")
    missing = [
        str(p) for p in (EVERYTHING, REFERENCE, NPM / "node_modules" / "js-tiktoken") if not p.exists()
    ]
    if node is None or missing:
        raise SystemExit(
            f"bench tools needs node and `make npm` ({'node' if node is None else missing[0]} missing)"
        )
    return node


def five_servers(folder: Path) -> dict[str, Any]:
    node = _node()
    colibri_env = {k: v for k, v in os.environ.items() if not k.startswith("COLIBRI_")}
    colibri_env |= {
        "COLIBRI_DB_PATH": str(folder / "colibri.db"),
        "COLIBRI_LOG_LEVEL": "warn",
        "HOME": str(folder),
    }
    shared = folder / "shared"
    shared.mkdir(exist_ok=True)
    return {
        "colibri": {"command": sys.executable, "args": ["-m", "colibri", "serve"], "env": colibri_env},
        "everything": {"command": node, "args": [str(EVERYTHING), "stdio"]},
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
        "memory": {
            "command": node,
            "args": [str(REFERENCE / "server-memory" / "dist" / "index.js")],
            "env": {"MEMORY_FILE_PATH": str(folder / "memory.jsonl")},
        },
        "filesystem": {
            "command": node,
            "args": [str(REFERENCE / "server-filesystem" / "dist" / "index.js"), str(shared)],
        },
    }


def switchboard_params(folder: Path, servers: dict[str, Any], mode: str, name: str) -> StdioServerParameters:
    config = folder / f"{name}.json"
    health = {"readiness_s": 600, "liveness_s": 30}
    config.write_text(json.dumps({"mcpServers": servers, "health": health, "tool_search": {"mode": mode}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("COLIBRI_")} | {
        "COLIBRI_LOG_LEVEL": "warn"
    }
    args = ["-m", "colibri", "switchboard", "run", "--config", str(config)]
    return StdioServerParameters(command=sys.executable, args=args, env=env)


async def all_healthy(client: Client, servers: int) -> None:
    with anyio.fail_after(60):
        while True:
            status = await client.call_tool("switchboard_status", {})
            listed = (status.structured_content or {}).get("data", {}).get("servers", [])
            if len(listed) == servers and all(server["state"] == "HEALTHY" for server in listed):
                return
            await anyio.sleep(0.1)


async def listed(params: StdioServerParameters, servers: int) -> list[dict[str, Any]]:
    """The tools of a switchboard's tools/list, as the client received them (JSON)."""
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        await all_healthy(client, servers)
        result = await client.list_tools()
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in result.tools]


def tokens(texts: list[str]) -> list[int]:
    """cl100k_base token counts, by js-tiktoken (bench/npm/tokens.mjs)."""
    done = subprocess.run(
        [_node(), str(NPM / "tokens.mjs")],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
    )
    counts: list[int] = json.loads(done.stdout)
    return counts


def list_tokens(tools: list[dict[str, Any]]) -> int:
    return tokens([json.dumps({"tools": tools}, separators=(",", ":"))])[0]


async def recall(
    params: StdioServerParameters, servers: int, source: Path = PHRASINGS
) -> tuple[int, list[tuple[str, str, list[str]]]]:
    phrasings = json.loads(source.read_text())
    misses = []
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        await all_healthy(client, servers)
        for phrase, wanted in phrasings:
            answer = await client.call_tool("find_tools", {"query": phrase, "limit": 5})
            found = [tool["name"] for tool in (answer.structured_content or {})["data"]["tools"]]
            if wanted not in found:
                misses.append((phrase, wanted, found))
    return len(phrasings), misses


async def search_latency(folder: Path) -> tuple[list[float], list[float], list[float]]:
    """find_tools over 1,000 tools, a ping of the same switchboard (what any request costs over this
    wire) and a direct tools/list of the tools, alternating, over the wire."""
    many = {"many": {"command": sys.executable, "args": [str(MANY_TOOLS), "1000"]}}
    searching = switchboard_params(folder, many, "search", "many-search")
    direct = StdioServerParameters(
        command=sys.executable, args=[str(MANY_TOOLS), "1000"], env=dict(os.environ)
    )
    queries = [phrase for phrase, _ in json.loads(PHRASINGS.read_text())]
    finds, pings, lists = [], [], []
    async with (
        Client(searching, mode="legacy", read_timeout_seconds=60) as board,
        Client(direct, mode="legacy", read_timeout_seconds=60) as server,
    ):
        await all_healthy(board, 1)
        for i in range(SEARCH_CALLS):
            started = time.perf_counter()
            await board.call_tool("find_tools", {"query": queries[i % len(queries)]})
            finds.append(time.perf_counter() - started)
            started = time.perf_counter()
            with warnings.catch_warnings():  # the handshake era's ping, which this session speaks
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await board.send_ping()
            pings.append(time.perf_counter() - started)
            if i % 10 == 0:
                started = time.perf_counter()
                await server.list_tools()
                lists.append(time.perf_counter() - started)
    return finds, pings, lists


def in_process_search() -> list[float]:
    """The search alone: the catalog's index of 1,000 tools, ranked and cut to 5, for the bench's
    phrasings and for as many asking for the generated tools themselves (many matches to rank)."""
    index = TextIndex()
    index.replace("many", [document(f"many.{tool.name}", tool) for tool in many_tools(1000)])
    phrasings = [phrase for phrase, _ in json.loads(PHRASINGS.read_text())]
    generated = itertools.product(AREAS, VERBS, OBJECTS)
    asked = [f"{verb} the {thing} of {area}" for area, verb, thing in itertools.islice(generated, 0, None, 7)]
    queries = [words_of(phrase) for phrase in phrasings + asked]
    samples = []
    for i in range(SEARCH_CALLS * 3):
        started = time.perf_counter()
        found = []
        for key in index.search(queries[i % len(queries)]):
            found.append(key)
            if len(found) == 5:
                break
        samples.append(time.perf_counter() - started)
    return samples


async def run() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-tools-") as tmp:
        folder = Path(tmp)
        servers = five_servers(folder)
        off = await listed(switchboard_params(folder, servers, "off", "off"), len(servers))
        on = await listed(switchboard_params(folder, servers, "search", "on"), len(servers))
        per_server = Counter(tool["name"].partition(".")[0] for tool in off)
        for server in sorted(servers):
            mine = [tool for tool in off if tool["name"].startswith(server + ".")]
            line(
                f"tokens of tools/list, {server} ({per_server[server]} tools), search off",
                list_tokens(mine),
                "tokens",
            )
        total_off, total_on = list_tokens(off), list_tokens(on)
        line(f"tokens of tools/list, five servers ({len(off)} tools), search off", total_off, "tokens")
        line(f"tokens of tools/list, five servers ({len(on)} tools), search on", total_on, "tokens")
        line("fewer tokens with search on", 100 * (1 - total_on / total_off), "%", ">= 90")
        recalling = switchboard_params(folder, servers, "search", "recall")
        for source, label, target in ((PHRASINGS, "", ">= 0.9"), (HELDOUT, " held-out", "")):
            asked, misses = await recall(recalling, len(servers), source)
            share = (asked - len(misses)) / asked
            line(f"find_tools recall@5 over {asked}{label} phrasings", share, "", target)
            for phrase, wanted, found in misses:
                print(f"  missed: {phrase!r} -> wanted {wanted}, found {found}", flush=True)
        finds, pings, lists = await search_latency(folder)
        line(
            "find_tools over 1,000 tools, p50 (stdio, through the switchboard)",
            percentile(finds, 50) * 1e3,
            "ms",
            "<= 2",
        )
        line("ping of the same switchboard, p50 (what the wire costs)", percentile(pings, 50) * 1e3, "ms")
        line("tools/list of the same 1,000 tools, p50 (stdio, direct)", percentile(lists, 50) * 1e3, "ms")
        line(
            "find_tools search alone over 1,000 tools, p50 (in process)",
            percentile(in_process_search(), 50) * 1e3,
            "ms",
            "<= 2",
        )


def main() -> None:
    anyio.run(run)
