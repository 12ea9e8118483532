// mcp-remote (Claude Desktop's stdio bridge) with a TypeScript SDK host at its defaults (a
// 60 s request timeout, not reset by progress) calls a long tool plainly, then does what its
// model would with what it got: a result is the answer; a task handle is driven with the handle
// tools (status every POLL seconds, then the result). One JSON line per event.
//   node mcp_remote_handle.mjs URL SECONDS    (from .tools/hosts/node/drivers/, for its imports)
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const POLL = 30;
const here = path.dirname(fileURLToPath(import.meta.url));
const PROXY = path.join(here, "..", "node_modules", "mcp-remote", "dist", "proxy.js");
const start = Date.now();
const say = (event, fields = {}) =>
  console.log(JSON.stringify({ client: "mcp-remote", event, t: Math.round((Date.now() - start) / 100) / 10, ...fields }));
const text = (result) => (result.content ?? []).map((p) => p.text ?? "").join("");
const sleep = (s) => new Promise((resolve) => setTimeout(resolve, s * 1000));

const [url, seconds] = process.argv.slice(2);
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [PROXY, url, "--transport", "http-only"],
  env: { ...process.env, MCP_REMOTE_CONFIG_DIR: mkdtempSync(path.join(os.tmpdir(), "mcp-remote-")) },
  stderr: "ignore",
});
const client = new Client({ name: "claude-desktop-like", version: "1.0.0" }, { capabilities: {} });
await client.connect(transport);
say("open");
const progress = [];
try {
  const first = await client.callTool(
    { name: "slow_compute", arguments: { seconds: Number(seconds), label: "mcp-remote" } },
    undefined,
    { onprogress: () => progress.push((Date.now() - start) / 1000) },
  );
  const answer = text(first);
  say("answered", { isError: first.isError ?? false, text: answer.slice(0, 160), progressSeen: progress.length });
  const match = /background task ([0-9a-f-]{36})/.exec(answer);
  if (match) {
    const handle = match[1];
    for (;;) {
      await sleep(POLL);
      const status = text(await client.callTool({ name: "taskgate_task_status", arguments: { handle } }));
      say("handle_status", { text: status.slice(0, 160) });
      if (!status.includes(" is working")) break;
    }
    const result = await client.callTool({ name: "taskgate_task_result", arguments: { handle } });
    say("handle_result", { isError: result.isError ?? false, text: text(result).slice(0, 160) });
  }
} catch (err) {
  say("error", { error: `${err.name}: ${err.message}`.slice(0, 300) });
} finally {
  await client.close();
  process.exit(0);
}
