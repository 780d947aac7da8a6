"""Tool search (SPEC §23): what the tool list costs an agent's context, and whether search finds.

Five real servers behind one switchboard over stdio: `colibri serve`, the npm reference servers
server-everything (tests/switchboard/npm), server-memory and server-filesystem (bench/npm, pinned)
and mcp-server-time (PyPI, the dev extra). Reported:
- the tokens of the tools/list result a client receives (its JSON, in the cl100k_base encoding:
  js-tiktoken, whose ranks ship in the npm package, so nothing is fetched), with tool search off and
  on, per server and in all (target: >= 90% fewer with search on);
- top-5 recall of find_tools over each set of task phrasings, bench/tools_phrasings*.json (or the
  files BENCH_TOOLS_SETS names, comma-separated), each phrasing naming the tool it should find,
  written as a user asks, not in the descriptions' words: per set and over all (target >= 0.9),
  per server, and, in process over the same index, without the lexicon's expansions (lexicon.py)
  or what a query's form says (a file's name, quantities, a variable's name, a city, quoted names,
  "X is a ...": query.py), with the
  query's own words only, to show what they add;
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
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

from bench.common import line, percentile
from bench.many_tools_server import AREAS, OBJECTS, VERBS
from bench.many_tools_server import tools as many_tools
from colibri.storage.sqlite.fts import TextIndex
from colibri.switchboard.routing.catalog import document
from colibri.switchboard.routing.query import also_of, words_of

HERE = Path(__file__).parent
NPM = HERE / "npm"
REFERENCE = NPM / "node_modules" / "@modelcontextprotocol"
EVERYTHING = (
    HERE.parent / "tests/switchboard/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)
PHRASINGS = HERE / "tools_phrasings.json"
SETS = "BENCH_TOOLS_SETS"
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
    # In search mode switchboard_status is not listed: asked directly, the client could not find
    # its output schema and warned it would not validate. Listed first, or else through call_tool.
    names = {tool.name for tool in (await client.list_tools()).tools}
    name, arguments = "switchboard_status", {}
    if name not in names:
        name, arguments = "call_tool", {"name": "switchboard_status", "arguments": {}}
    with anyio.fail_after(60):
        while True:
            status = await client.call_tool(name, arguments)
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


def phrasing_sets() -> list[Path]:
    """The sets of phrasings to measure: those BENCH_TOOLS_SETS names, else every one in bench/."""
    named = [name.strip() for name in os.environ.get(SETS, "").split(",") if name.strip()]
    if not named:
        return sorted(HERE.glob("tools_phrasings*.json"))
    missing = [name for name in named if "/" in name or not (HERE / name).is_file()]
    if missing:
        raise SystemExit(
            f"{SETS} names {missing[0][:80]!r}, not a file in bench/: give file names such as "
            "tools_phrasings.json, comma-separated"
        )
    return [HERE / name for name in named]


# What one phrasing asked for and found: (phrase, the tool it should find, the tools found).
Found = tuple[str, str, list[str]]


async def searched(params: StdioServerParameters, servers: int, sets: list[Path]) -> dict[Path, list[Found]]:
    """Each set's phrasings asked of find_tools (limit 5) through one switchboard session."""
    results: dict[Path, list[Found]] = {}
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        await all_healthy(client, servers)
        for source in sets:
            results[source] = []
            for phrase, wanted in json.loads(source.read_text()):
                answer = await client.call_tool("find_tools", {"query": phrase, "limit": 5})
                found = [tool["name"] for tool in (answer.structured_content or {})["data"]["tools"]]
                results[source].append((phrase, wanted, found))
    return results


def searched_without_lexicon(tools: list[dict[str, Any]], sets: list[Path]) -> dict[Path, list[Found]]:
    """The same, in process over the index the switchboard builds of the same tools, with the
    query's own words only: what the lexicon adds is the difference."""
    groups: dict[str, list[Any]] = defaultdict(list)
    for tool in tools:
        server, dot, _ = tool["name"].partition(".")
        spec = types.Tool.model_validate(tool)
        groups[server if dot else ""].append(document(tool["name"], spec, server if dot else ""))
    index = TextIndex()
    for group, documents in groups.items():
        index.replace(group, documents)
    return {
        source: [
            (phrase, wanted, list(itertools.islice(index.search(words_of(phrase)), 5)))
            for phrase, wanted in json.loads(source.read_text())
        ]
        for source in sets
    }


def recall(results: list[Found]) -> float:
    return sum(wanted in found for _, wanted, found in results) / len(results)


def per_server(results: list[Found], without: list[Found]) -> str:
    asked: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for (_, wanted, found), (_, _, plain) in zip(results, without, strict=True):
        counts = asked[wanted.partition(".")[0]]
        counts[0] += wanted in found
        counts[1] += wanted in plain
        counts[2] += 1
    return ", ".join(
        f"{server} {hit}/{of} ({plain}/{of} without)" for server, (hit, plain, of) in sorted(asked.items())
    )


def report_recall(results: dict[Path, list[Found]], without: dict[Path, list[Found]]) -> None:
    for source, found in results.items():
        label = f"find_tools recall@5, {source.name} ({len(found)} phrasings)"
        line(label, recall(found), "", ">= 0.9")
        line("  the same without the lexicon (in process)", recall(without[source]), "")
        print(f"  per server: {per_server(found, without[source])}", flush=True)
        for phrase, wanted, tools in found:
            if wanted not in tools:
                print(f"  missed: {phrase!r} -> wanted {wanted}, found {tools}", flush=True)
    every = [one for found in results.values() for one in found]
    line(
        f"find_tools recall@5, all {len(every)} phrasings of {len(results)} sets", recall(every), "", ">= 0.9"
    )
    plain = [one for found in without.values() for one in found]
    line("  the same without the lexicon (in process)", recall(plain), "")


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
    queries = [(words_of(phrase), also_of(phrase)) for phrase in phrasings + asked]
    samples = []
    for i in range(SEARCH_CALLS * 3):
        started = time.perf_counter()
        found = []
        words, also = queries[i % len(queries)]
        for key in index.search(words, also):
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
        sets = phrasing_sets()
        recalling = switchboard_params(folder, servers, "search", "recall")
        report_recall(await searched(recalling, len(servers), sets), searched_without_lexicon(off, sets))
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
