// A host on @modelcontextprotocol/ext-tasks (0.2.x) and the TypeScript SDK v2 client that
// watches its tasks with subscriptions/listen (2026-07-28): it adds its tasks' ids to its listen
// filter with the library's contributeTaskFilterV2, reads what was honoured with
// readAcceptedTaskIdsV2, and the library's session consumes notifications/tasks (it polls
// tasks/get only when no notification came within the task's pollIntervalMs).
//
//   node ext_tasks_listen.mjs SCENARIO URL TOKEN [ARG]
//   watch     run slow_compute {seconds: ARG} as a task and watch it to the end, listening
//             again whenever a stream ends on purpose (with the ids still running)
//   foreign   listen for the task id ARG (another owner's)
//   buffered  as watch, behind a front that buffers (the HTTP API): the listen honours nothing,
//             the library polls; the Client is built with listChanged (it would open a listen
//             by itself wherever the server declares list changes)
// Prints one JSON line; exits 0 whenever it could report, 2 on usage. Packages resolve from
// EXT_TASKS_NODE_PREFIX (default <repo>/.tools/clients/node), like ext_tasks_client.mjs.

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const prefix = process.env.EXT_TASKS_NODE_PREFIX ?? path.resolve(here, "../../../.tools/clients/node");
const require = createRequire(path.join(prefix, "package.json"));

async function load(spec) {
  const pkgDir = path.join(prefix, "node_modules", ...spec.split("/").slice(0, 2));
  const pkg = require(path.join(pkgDir, "package.json"));
  const sub = "." + spec.slice(spec.split("/").slice(0, 2).join("/").length);
  const entry = pkg.exports[sub === "." ? "." : sub];
  const file = typeof entry === "string" ? entry : (entry.import?.default ?? entry.import);
  return import(pathToFileURL(path.join(pkgDir, file)).href);
}

const PROTOCOL = "2026-07-28";
const SCENARIOS = ["watch", "foreign", "buffered"];

/** The host's request coordinator (rawDispatch): a second SDK transport, every request recorded. */
class RawCoordinator {
  constructor(StreamableHTTPClientTransport, url, headers) {
    this.transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
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

  async dispatch(request, options = {}) {
    const id = `raw-${this.nextId++}`;
    const message = { ...request, jsonrpc: "2.0", id };
    this.sent.push({ method: message.method, at: Date.now() });
    const reply = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    await this.transport.send(message, options.signal === undefined ? {} : { requestSignal: options.signal });
    const response = await reply;
    return "error" in response ? { kind: "error", error: response.error } : { kind: "result", result: response.result };
  }
}

async function run(scenario, url, token, arg) {
  const { Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client");
  const { createTaskSessionFromClient } = await load("@modelcontextprotocol/ext-tasks/client");
  const { contributeTaskFilterV2, readAcceptedTaskIdsV2 } = await load("@modelcontextprotocol/ext-tasks/core/v2");
  const headers = { authorization: `Bearer ${token}` };
  const clientInfo = { name: "taskgate-e2e-listen-host", version: "0" };
  const clientCapabilities = { extensions: { "io.modelcontextprotocol/tasks": {} } };
  const client = new Client(clientInfo, {
    capabilities: clientCapabilities,
    versionNegotiation: { mode: { pin: PROTOCOL } },
    // Opens a listen by itself where the server declares list changes (the streaming endpoint).
    listChanged: { resources: { onChanged: () => {} } },
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  // The SDK's honoredFilter keeps only the core fields (its schema drops taskIds), so the host
  // reads each acknowledgement as it arrived, for readAcceptedTaskIdsV2.
  const acks = new Map();
  const onmessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message?.method === "notifications/subscriptions/acknowledged") {
      acks.set(message.params?._meta?.["io.modelcontextprotocol/subscriptionId"], message.params);
    }
    onmessage?.(message, extra);
  };
  const out = {
    client: "ext-tasks",
    scenario,
    resourcesCapability: client.getServerCapabilities()?.resources ?? null,
    autoOpened: client.autoOpenedSubscription ? client.autoOpenedSubscription.honoredFilter : null,
    listens: [],
    notifications: [],
  };
  const coordinator = new RawCoordinator(StreamableHTTPClientTransport, url, headers);
  await coordinator.transport.start();
  const session = createTaskSessionFromClient(client, {
    endpointId: `taskgate:${url}`,
    rawDispatch: coordinator.dispatch,
    v2RequestFraming: { protocolVersion: PROTOCOL, clientInfo, clientCapabilities },
  });
  // What reaches the session (the library reads notifications/tasks from the client's fallback).
  const delegate = client.fallbackNotificationHandler;
  client.fallbackNotificationHandler = async (notification) => {
    if (notification.method === "notifications/tasks") {
      out.notifications.push({ status: notification.params.status, at: Date.now(), hasResult: "result" in notification.params });
    }
    await delegate?.(notification);
  };

  async function listen(taskIds) {
    const params = contributeTaskFilterV2({ notifications: {} }, taskIds);
    const opened = Date.now();
    const before = new Set(acks.keys());
    const sub = await client.listen(params.notifications);
    const id = [...acks.keys()].find((key) => !before.has(key));
    const accepted = readAcceptedTaskIdsV2(acks.get(id));
    const entry = { honoured: sub.honoredFilter, acknowledged: acks.get(id)?.notifications, accepted, openedAt: opened };
    out.listens.push(entry);
    sub.closed.then((cause) => {
      entry.closed = cause;
      entry.seconds = (Date.now() - opened) / 1000;
    });
    return { sub, accepted };
  }

  try {
    if (scenario === "foreign") {
      const { sub, accepted } = await listen([arg]);
      out.accepted = accepted;
      out.closed = await Promise.race([sub.closed, new Promise((r) => setTimeout(() => r("still open"), 5000))]);
      await new Promise((r) => setTimeout(r, 500));
    } else {
      const seconds = Number(arg ?? 5);
      const execution = await session.callTool("slow_compute", { seconds, label: "watched" });
      out.kind = execution.kind;
      const taskId = execution.handle.taskId;
      out.createdAt = Date.now();
      let done = false;
      const settled = execution.settle().then((r) => {
        done = true;
        return r;
      });
      // Watch it, listening again whenever a stream ends on purpose while it still runs; a
      // listen that honours nothing (or ends any other way) is not repeated: the library polls.
      (async () => {
        while (!done) {
          const { sub, accepted } = await listen([taskId]);
          const cause = await sub.closed;
          if (done || cause !== "graceful" || !accepted.includes(taskId)) break;
        }
      })().catch((error) => (out.listenError = String(error)));
      const { outcome } = await settled;
      out.status = outcome.status;
      out.texts = (outcome.result?.content ?? []).filter((c) => c.type === "text").map((c) => c.text);
      out.settledAt = Date.now();
      await new Promise((r) => setTimeout(r, 300));
    }
  } finally {
    out.wire = coordinator.sent.map((m) => m.method);
    await session.close();
    await coordinator.transport.close();
    await client.close();
  }
  return out;
}

async function main() {
  const [scenario, url, token, arg] = process.argv.slice(2);
  if (!SCENARIOS.includes(scenario) || !url || !token) {
    console.error(`usage: ext_tasks_listen.mjs {${SCENARIOS.join("|")}} URL TOKEN [ARG]`);
    return 2;
  }
  const versions = {
    "@modelcontextprotocol/ext-tasks": require(path.join(prefix, "node_modules/@modelcontextprotocol/ext-tasks/package.json")).version,
    "@modelcontextprotocol/client": require(path.join(prefix, "node_modules/@modelcontextprotocol/client/package.json")).version,
  };
  let out;
  try {
    out = { ...(await run(scenario, url, token, arg)), ok: true };
  } catch (error) {
    out = { scenario, ok: false, error: String(error?.message ?? error), stack: String(error?.stack ?? "").slice(0, 3000) };
  }
  out.versions = versions;
  process.stdout.write(JSON.stringify(out) + "\n");
  return 0;
}

process.exitCode = await main();
