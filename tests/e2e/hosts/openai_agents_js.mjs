// OpenAI Agents SDK (JS): MCPServerStreamableHttp with its defaults and the FunctionTools an
// agent gets for its tools (getAllMcpTools), invoked as the runner invokes them
// (tool.invoke(runContext, input, details)). It has no elicitation or progress callback.
// Aborting = the AbortSignal in the call's details (what an aborted run passes).
import { MCPServerStreamableHttp, RunContext, getAllMcpTools } from "@openai/agents";
import { abortAfter, answerText, main, pkgVersion as pkg } from "./common.mjs";

const adapter = {
  name: "openai-agents-js",
  version: `@openai/agents ${pkg("@openai/agents")} (@modelcontextprotocol/client ${pkg("@modelcontextprotocol/client")})`,
  progress: "none: no progress callback",
  elicitation: "none: no elicitation callback",
  async open(url) {
    this.server = new MCPServerStreamableHttp({ url, name: "taskgate" });
    await this.server.connect();
    this.context = new RunContext();
    // errorFunction: null rethrows, so the matrix shows the error rather than the model's text for it.
    const tools = await getAllMcpTools({ mcpServers: [this.server], runContext: this.context, errorFunction: null });
    this.tools = Object.fromEntries(tools.map((t) => [t.name, t]));
  },
  async close() {
    await this.server?.close();
  },
  async listTools() {
    return Object.keys(this.tools).sort();
  },
  async call(tool, args) {
    return answerText(await this.tools[tool].invoke(this.context, JSON.stringify(args)));
  },
  async cancel(tool, args, after) {
    return abortAfter((signal) => this.tools[tool].invoke(this.context, JSON.stringify(args), { signal }), after);
  },
};

await main(adapter);
