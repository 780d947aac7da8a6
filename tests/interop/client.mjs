// Drives an MCP server over stdio with the official TypeScript SDK client, as Claude Code, Cursor,
// VS Code and the MCP Inspector do, and reports what a user of that client would see.
//
// Usage: node client.mjs SPEC.json  → one JSON object on stdout.
// SPEC: {"command", "args", "env", "cwd", "steps": [...]}; each step is one of
//   {"list": true}                                   tools/list
//   {"tool": NAME, "arguments": ARGS, "save": KEY}   client.callTool; KEY names the result for later steps
// A string "$KEY.a.b" anywhere in ARGS is replaced by that field of the saved result's structured
// envelope (or of its JSON text block when it has none). Assertions live in the pytest side.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { resolver } from "../helpers/references.mjs";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const saved = {};
const resolve = resolver(saved);

function envelopeOf(result) {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const text = (result.content ?? []).find((block) => block.type === "text");
  try {
    return text ? JSON.parse(text.text) : null;
  } catch {
    return null;
  }
}

const transport = new StdioClientTransport({
  command: spec.command,
  args: spec.args ?? [],
  env: spec.env,
  cwd: spec.cwd,
  stderr: "inherit",
});
const client = new Client({ name: "colibri-interop", version: "1.0.0" });
const report = { steps: [] };
try {
  await client.connect(transport);
  report.server = client.getServerVersion();
  for (const step of spec.steps) {
    if (step.list) {
      const listed = await client.listTools();
      report.steps.push({ list: listed.tools.map((tool) => tool.name), tools: listed.tools });
      continue;
    }
    const entry = { tool: step.tool, arguments: null, threw: null };
    try {
      entry.arguments = resolve(step.arguments ?? {});
      const result = await client.callTool({ name: step.tool, arguments: entry.arguments });
      entry.isError = result.isError ?? false;
      entry.structuredContent = result.structuredContent ?? null;
      entry.text = (result.content ?? []).filter((block) => block.type === "text").map((block) => block.text);
      if (step.save) saved[step.save] = envelopeOf(result);
    } catch (error) {
      // What the user would see instead of our envelope: the test fails on any of these.
      entry.threw = `${error?.name}: ${error?.message}`;
    }
    report.steps.push(entry);
  }
} finally {
  await client.close();
}
process.stdout.write(JSON.stringify(report) + "\n");
