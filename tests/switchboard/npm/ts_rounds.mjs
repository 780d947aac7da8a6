// The TypeScript SDK v2 client (@modelcontextprotocol/client, the 2026-07-28 era) in front of a switchboard
// (stdio): it answers sampling and elicitation as input requests and prints what it saw as JSON.
// Usage: node ts_rounds.mjs COMMAND [ARGS...]; the Python test checks the output.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client(
  { name: "colibri-ts-rounds", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: { form: {} } }, versionNegotiation: { mode: "auto" } },
);
const seen = { sampled: [], elicited: [] };
client.setRequestHandler("sampling/createMessage", async (request) => {
  seen.sampled.push(request.params.messages[0].content.text);
  return { role: "assistant", content: { type: "text", text: "sampled by the v2 client" }, model: "ts" };
});
client.setRequestHandler("elicitation/create", async (request) => {
  seen.elicited.push(request.params.message);
  return { action: "accept", content: { name: "Ada from TypeScript", check: true } };
});

await client.connect(transport);
const deadline = Date.now() + 60000;
for (;;) {
  const status = await client.callTool({ name: "switchboard_status", arguments: {} });
  if (status.structuredContent.data.servers.every((server) => server.state === "HEALTHY")) break;
  if (Date.now() > deadline) throw new Error("the downstream never became healthy");
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const sampling = await client.callTool({
  name: "everything.trigger-sampling-request",
  arguments: { prompt: "from the v2 client", maxTokens: 5 },
});
const elicitation = await client.callTool({ name: "everything.trigger-elicitation-request", arguments: {} });
const version = client.getNegotiatedProtocolVersion();
await client.close();
console.log(
  JSON.stringify({
    version,
    sampled: seen.sampled,
    elicited: seen.elicited,
    sampling: sampling.content.map((block) => block.text ?? "").join(" "),
    elicitation: elicitation.content.map((block) => block.text ?? "").join(" "),
  }),
);
