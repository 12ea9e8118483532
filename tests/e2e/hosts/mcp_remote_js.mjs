// mcp-remote as Claude Desktop uses it: a stdio bridge (`npx mcp-remote URL`) that a desktop
// host spawns and talks to over stdin/stdout. The host here is the TypeScript SDK's stdio
// client (Client + StdioClientTransport, what Claude Desktop and Claude Code build on) with
// its defaults (a 60 s request timeout), an elicitation handler and an onprogress callback.
// Aborting = the call's AbortSignal (the SDK sends notifications/cancelled down the pipe).
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { abortAfter, answerText, main, pkgVersion as pkg } from "./common.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const PROXY = path.join(here, "..", "node_modules", "mcp-remote", "dist", "proxy.js");

const adapter = {
  name: "mcp-remote",
  version: `mcp-remote ${pkg("mcp-remote")} over stdio (host: @modelcontextprotocol/sdk ${pkg("@modelcontextprotocol/sdk")})`,
  progress: "callback",
  elicitation: "callback",
  async open(url) {
    this.transport = new StdioClientTransport({
      command: process.execPath,
      args: [PROXY, url, "--transport", "http-only"],
      // Its OAuth state in a scratch directory, never the user's ~/.mcp-auth.
      env: { ...process.env, MCP_REMOTE_CONFIG_DIR: mkdtempSync(path.join(os.tmpdir(), "mcp-remote-")) },
      stderr: "ignore",
    });
    this.client = new Client({ name: "claude-desktop-like", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    this.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { confirm: true } }));
    await this.client.connect(this.transport);
    this.tools = (await this.client.listTools()).tools.map((t) => t.name);
  },
  async close() {
    await this.client?.close();
  },
  async listTools() {
    return [...this.tools].sort();
  },
  async call(tool, args, onProgress, signal) {
    const options = { ...(onProgress ? { onprogress: onProgress } : {}), ...(signal ? { signal } : {}) };
    const result = await this.client.callTool({ name: tool, arguments: args }, undefined, options);
    if (result.isError) throw new Error(`isError: ${answerText(result)}`);
    return answerText(result);
  },
  async cancel(tool, args, after) {
    return abortAfter((signal) => this.call(tool, args, null, signal), after);
  },
};

await main(adapter);
