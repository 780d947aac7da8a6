// The official TypeScript SDK client over Streamable HTTP with a bearer token, as Claude Code,
// Cursor and VS Code connect to `colibri serve --http`; reports what a user of that client sees.
//
// Usage: node client.mjs SPEC.json  → one JSON object on stdout.
// SPEC: {"url", "token" (or null), "steps": [...]}; each step is one of
//   {"list": true}                                   tools/list
//   {"tool": NAME, "arguments": ARGS, "save": KEY}   client.callTool; KEY names the envelope
// A string "$KEY.a.b" in ARGS is replaced by that field of a saved envelope. Assertions live in pytest.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { resolver } from "../../helpers/references.mjs";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const saved = {};
const resolve = resolver(saved);

const headers = spec.token ? { Authorization: `Bearer ${spec.token}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers } });
const client = new Client({ name: "colibri-http-interop", version: "1.0.0" });
const report = { steps: [], connectError: null };
try {
  await client.connect(transport);
  report.server = client.getServerVersion();
  report.protocolVersion = transport.protocolVersion ?? null;
  for (const step of spec.steps) {
    if (step.list) {
      const listed = await client.listTools();
      report.steps.push({ list: listed.tools.map((tool) => tool.name) });
      continue;
    }
    const entry = { tool: step.tool, threw: null };
    try {
      const result = await client.callTool({ name: step.tool, arguments: resolve(step.arguments ?? {}) });
      entry.isError = result.isError ?? false;
      entry.structuredContent = result.structuredContent ?? null;
      if (step.save) saved[step.save] = result.structuredContent;
    } catch (error) {
      entry.threw = `${error?.name}: ${error?.message}`;
    }
    report.steps.push(entry);
  }
  await client.close();
} catch (error) {
  // A refused connection (401) is reported, not thrown: the pytest side asserts on it.
  report.connectError = `${error?.name}: ${error?.message}`;
}
process.stdout.write(JSON.stringify(report) + "\n");
