// Vercel AI SDK: createMCPClient from @ai-sdk/mcp over its HTTP transport, with an
// elicitation handler (client.onElicitationRequest, the capability declared), and the AI SDK
// tools client.tools() makes (tool.execute(args, options), what generateText runs). It sends
// no progress token. Aborting = the abortSignal in the execute options.
import { ElicitationRequestSchema, createMCPClient } from "@ai-sdk/mcp";
import { abortAfter, answerText, main, pkgVersion as pkg } from "./common.mjs";

const adapter = {
  name: "ai-sdk",
  version: `@ai-sdk/mcp ${pkg("@ai-sdk/mcp")}`,
  progress: "none: no progress token or callback",
  elicitation: "callback",
  async open(url) {
    this.client = await createMCPClient({ transport: { type: "http", url }, capabilities: { elicitation: {} } });
    this.client.onElicitationRequest(ElicitationRequestSchema, async () => ({ action: "accept", content: { confirm: true } }));
    this.tools = await this.client.tools();
  },
  async close() {
    await this.client?.close();
  },
  async listTools() {
    return Object.keys(this.tools).sort();
  },
  async call(tool, args, _onProgress, abortSignal) {
    const result = await this.tools[tool].execute(args, { toolCallId: `call-${tool}`, messages: [], abortSignal });
    if (result?.isError) throw new Error(`isError: ${answerText(result)}`);
    return answerText(result);
  },
  async cancel(tool, args, after) {
    return abortAfter((signal) => this.call(tool, args, null, signal), after);
  },
};

await main(adapter);
