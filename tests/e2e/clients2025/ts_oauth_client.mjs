// Sign in to taskgate with the released TypeScript MCP SDK (@modelcontextprotocol/sdk 1.32.x)
// and run a task as the signed-in user.
//
//   node ts_oauth_client.mjs URL REDIRECT_URI [CLIENT_METADATA_URL]
//
// Without CLIENT_METADATA_URL the SDK registers itself (RFC 7591); with it, and with the
// authorization server saying client_id_metadata_document_supported, the SDK uses that URL as
// its client_id (a Client ID Metadata Document, SEP-991) and registers nothing.
//
// Only the SDK's own APIs do the work: an OAuthClientProvider as the transport's authProvider
// (the 401, protected resource metadata, authorization server metadata, registration or
// metadata document, PKCE, the token), UnauthorizedError, transport.finishAuth(code), then
// client.experimental.tasks.callToolStream. The person's browser is the test's: this script
// prints {"authorize": URL} and reads back, on stdin, the URL the browser was finally sent to
// (the redirect URI with code and state). Prints one JSON line at the end; exits 0 whenever
// it could report.

import { createRequire } from "node:module";
import path from "node:path";
import readline from "node:readline";
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

const lines = readline.createInterface({ input: process.stdin });
const pending = [];
lines.on("line", (line) => pending.shift()?.(line));
const nextLine = () => new Promise((resolve) => pending.push(resolve));

function claims(token) {
  const payload = token.split(".")[1];
  return JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
}

class Provider {
  constructor(redirectUri, clientMetadataUrl) {
    this._redirectUri = redirectUri;
    this.clientMetadataUrl = clientMetadataUrl;
    this.registered = null;
    this.authorizationUrls = [];
  }
  get redirectUrl() {
    return this._redirectUri;
  }
  get clientMetadata() {
    return {
      client_name: "taskgate e2e (@modelcontextprotocol/sdk)",
      redirect_uris: [this._redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this._client;
  }
  saveClientInformation(info) {
    this._client = info;
    this.registered = info.client_id;
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(tokens) {
    this._tokens = tokens;
  }
  redirectToAuthorization(url) {
    this.authorizationUrls.push(url.href);
    process.stdout.write(JSON.stringify({ authorize: url.href }) + "\n");
  }
  saveCodeVerifier(verifier) {
    this._verifier = verifier;
  }
  codeVerifier() {
    return this._verifier;
  }
}

async function run(url, redirectUri, clientMetadataUrl) {
  const { Client } = await sdk("client/index.js");
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
  const { UnauthorizedError } = await sdk("client/auth.js");
  const out = { client: "ts-sdk-oauth", version: SDK_PKG.version, requests: [] };
  const fetchFn = async (target, init = {}) => {
    const response = await fetch(target, init);
    const u = new URL(typeof target === "string" ? target : target.url ?? String(target));
    out.requests.push({ method: init.method ?? "GET", path: u.pathname, status: response.status });
    return response;
  };
  const provider = new Provider(redirectUri, clientMetadataUrl);
  const client = new Client({ name: "taskgate-e2e-oauth", version: "1.0.0" }, { capabilities: {} });
  const connect = () => new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: fetchFn });
  let transport = connect();
  try {
    await client.connect(transport);
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    const landed = new URL(await nextLine());
    out.landed = { state: landed.searchParams.has("state"), iss: landed.searchParams.get("iss") };
    await transport.finishAuth(landed.searchParams.get("code"));
    transport = connect();
    await client.connect(transport);
  }
  out.clientId = provider.clientInformation()?.client_id ?? null;
  out.registered = provider.registered;
  out.authorizationQueries = provider.authorizationUrls.map((u) =>
    Object.fromEntries([...new URL(u).searchParams].filter(([k]) => !["state", "code_challenge"].includes(k))),
  );
  const token = provider.tokens()?.access_token;
  out.token = token ? claims(token) : null;
  await client.listTools();
  const messages = [];
  const stream = client.experimental.tasks.callToolStream({
    name: "slow_compute",
    arguments: { seconds: 1, label: "ts-signed-in" },
  });
  for await (const message of stream) {
    if (message.type === "taskCreated") messages.push({ type: "taskCreated", taskId: message.task.taskId });
    else if (message.type === "taskStatus") messages.push({ type: "taskStatus", status: message.task.status });
    else if (message.type === "result")
      messages.push({ type: "result", texts: (message.result.content ?? []).map((c) => c.text) });
    else messages.push({ type: message.type, error: String(message.error?.message ?? "") });
  }
  out.messages = messages;
  out.taskId = messages.find((m) => m.type === "taskCreated")?.taskId ?? null;
  await client.close();
  return out;
}

const [url, redirectUri, clientMetadataUrl] = process.argv.slice(2);
if (!url || !redirectUri) {
  console.error("usage: ts_oauth_client.mjs URL REDIRECT_URI [CLIENT_METADATA_URL]");
  process.exit(2);
}
let out;
try {
  out = await run(url, redirectUri, clientMetadataUrl);
} catch (error) {
  out = { error: String(error?.stack ?? error).slice(0, 3000) };
}
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);
