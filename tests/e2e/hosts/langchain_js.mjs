// LangChain.js: @langchain/mcp-adapters' MultiServerMCPClient and the LangChain tools it makes
// (tool.invoke, what an agent calls), with its onProgress callback; it has no elicitation
// handler. Aborting = the AbortSignal in the call's RunnableConfig.
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { abortAfter, answerText, main, pkgVersion as pkg } from "./common.mjs";

let sink = null;

const adapter = {
  name: "langchain-js",
  version: `@langchain/mcp-adapters ${pkg("@langchain/mcp-adapters")} (@modelcontextprotocol/sdk ${pkg("@modelcontextprotocol/sdk")})`,
  progress: "callback",
  elicitation: "none: no elicitation handler",
  async open(url) {
    this.client = new MultiServerMCPClient({
      mcpServers: { taskgate: { url, transport: "http" } },
      onProgress: (progress) => sink?.(progress),
    });
    this.tools = Object.fromEntries((await this.client.getTools()).map((t) => [t.name, t]));
  },
  async close() {
    await this.client?.close();
  },
  async listTools() {
    return Object.keys(this.tools).sort();
  },
  async call(tool, args, onProgress) {
    sink = onProgress;
    return answerText(await this.tools[tool].invoke(args));
  },
  async cancel(tool, args, after) {
    return abortAfter((signal) => this.tools[tool].invoke(args, { signal }), after);
  },
};

await main(adapter);
