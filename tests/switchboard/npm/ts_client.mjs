// Drives a switchboard (stdio) with the official TypeScript SDK client and prints what it saw as JSON.
// Usage: node ts_client.mjs COMMAND [ARGS...]; the Python test checks the output.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "colibri-ts-interop", version: "1.0.0" }, { capabilities: { sampling: {} } });
const seen = { sampled: [], logs: 0, updated: [] };
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  seen.sampled.push(request.params.messages[0].content.text);
  return { role: "assistant", content: { type: "text", text: "sampled by the TypeScript client" }, model: "ts" };
});
client.setNotificationHandler(LoggingMessageNotificationSchema, async () => {
  seen.logs += 1;
});
client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (notification) => {
  seen.updated.push(notification.params.uri);
});

await client.connect(transport);
const deadline = Date.now() + 30000;
for (;;) {
  const status = await client.callTool({ name: "switchboard_status", arguments: {} });
  if (status.structuredContent.data.servers.every((server) => server.state === "HEALTHY")) break;
  if (Date.now() > deadline) throw new Error("the downstream never became healthy");
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const uri = "demo://resource/static/document/architecture.md";
const resources = await client.listResources();
const templates = await client.listResourceTemplates();
const read = await client.readResource({ uri });
const prompts = await client.listPrompts();
const prompt = await client.getPrompt({ name: "everything.args-prompt", arguments: { city: "Porto", state: "PT" } });
const completion = await client.complete({
  ref: { type: "ref/prompt", name: "everything.completable-prompt" },
  argument: { name: "department", value: "Eng" },
});
const progress = [];
await client.callTool(
  { name: "everything.trigger-long-running-operation", arguments: { duration: 1.5, steps: 3 } },
  undefined,
  { onprogress: (update) => progress.push(update.progress) },
);
await client.setLoggingLevel("debug");
await client.subscribeResource({ uri });
await client.callTool({ name: "everything.toggle-subscriber-updates", arguments: {} });
const sampling = await client.callTool({
  name: "everything.trigger-sampling-request",
  arguments: { prompt: "from typescript", maxTokens: 5 },
});
while (seen.updated.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
await client.close();
console.log(
  JSON.stringify({
    resources: resources.resources.map((resource) => resource.uri),
    templates: templates.resourceTemplates.map((template) => template.uriTemplate),
    read: read.contents[0].uri,
    prompts: prompts.prompts.map((p) => p.name),
    prompt: prompt.messages[0].content.text,
    completion: completion.completion.values,
    progress,
    sampled: seen.sampled,
    sampling: sampling.content[0].text,
    logs: seen.logs,
    updated: seen.updated,
  }),
);
