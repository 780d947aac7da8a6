// Calls tools through a switchboard (stdio) with the official TypeScript SDK client, once every
// server is healthy, and prints each result as one JSON line.
// Usage: node ts_call.mjs TOOLS_JSON COMMAND [ARGS...], TOOLS_JSON a list of [name, arguments].
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [tools, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "colibri-ts-call", version: "1.0.0" });
await client.connect(transport);
const deadline = Date.now() + 30000;
for (;;) {
  const status = await client.callTool({ name: "switchboard_status", arguments: {} });
  if (status.structuredContent.data.servers.every((server) => server.state === "HEALTHY")) break;
  if (Date.now() > deadline) throw new Error("the servers never became healthy");
  await new Promise((resolve) => setTimeout(resolve, 100));
}
for (const [name, toolArguments] of JSON.parse(tools)) {
  console.log(JSON.stringify(await client.callTool({ name, arguments: toolArguments })));
}
await client.close();
