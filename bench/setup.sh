#!/usr/bin/env bash
# Create the comparison venvs bench/run.py measures against, in the git-ignored
# .tools/bench/ (same base interpreter as .venv, so the Python is the same):
#   .tools/bench/mcp      mcp==2.3.0 alone                     (cold start: `import mcp`)
#   .tools/bench/fastmcp  fastmcp==4.1.4 + fastmcp-tasks==4.1.4 (cold start and end-to-end)
#   .tools/bench/layer    only layers/taskgate/requirements.txt, at the versions .venv has
#                         (what `sam build` ships: no moto/sam-cli extras such as awscrt or
#                         pyOpenSSL, which botocore imports whenever they are installed)
# mcp and fastmcp install under bench/constraints.txt (a frozen tree); layer under a
# freeze of .venv. Idempotent: a venv is rebuilt only when the hash of its pin files
# changes. Exits non-zero on failure.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOOLS="$ROOT/.tools/bench"
mkdir -p "$TOOLS"

BASE_PY="$ROOT/.venv/bin/python"
if [ ! -x "$BASE_PY" ]; then
  echo "bench/setup: $BASE_PY missing; run 'make setup' first" >&2
  exit 1
fi
# The interpreter .venv was made from, not the venv's own wrapper.
BASE_PY=$("$BASE_PY" -c 'import sys; print(sys._base_executable)')

# make_venv NAME CONSTRAINTS CHECK-IMPORT PIP-ARG...
make_venv() {
  local name=$1 constraints=$2 check=$3
  shift 3
  local venv="$TOOLS/$name"
  local stamp
  # The pins, the constraints, and the content of any requirements file named.
  stamp=$({
    printf '%s\n' "$@"
    cat "$constraints"
    for arg in "$@"; do if [ -f "$arg" ]; then cat "$arg"; fi; done
  } | sha256sum | cut -d' ' -f1)
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "bench/setup: $venv up to date"
    return
  fi
  echo "bench/setup: creating $venv ($*) with $("$BASE_PY" --version)"
  rm -rf "$venv"
  "$BASE_PY" -m venv "$venv"
  if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    "$@" -c "$constraints" >"$TOOLS/$name-pip.log" 2>&1; then
    cat "$TOOLS/$name-pip.log" >&2
    echo "bench/setup: pip install into $venv failed" >&2
    exit 1
  fi
  "$venv/bin/python" -c "import $check"
  echo "$stamp" >"$venv/.stamp"
}

make_venv mcp "$HERE/constraints.txt" mcp "mcp==2.3.0"
make_venv fastmcp "$HERE/constraints.txt" "fastmcp, fastmcp_tasks" "fastmcp==4.1.4" "fastmcp-tasks==4.1.4"

# The layer's own requirements at exactly the versions the project venv resolved.
"$ROOT/.venv/bin/python" -m pip freeze --exclude-editable 2>/dev/null |
  grep -E '^[A-Za-z0-9_.-]+==' >"$TOOLS/layer-constraints.txt.new"
if ! cmp -s "$TOOLS/layer-constraints.txt.new" "$TOOLS/layer-constraints.txt"; then
  mv "$TOOLS/layer-constraints.txt.new" "$TOOLS/layer-constraints.txt"
else
  rm -f "$TOOLS/layer-constraints.txt.new"
fi
make_venv layer "$TOOLS/layer-constraints.txt" "boto3, pydantic, starlette, mangum, aws_lambda_powertools, aws_xray_sdk" \
  -r "$ROOT/layers/taskgate/requirements.txt" -r "$ROOT/layers/tools/requirements.txt"

# What layers/Makefile ships beside the code: botocore's data cut to the clients' services
# and operations, from the layer venv's own botocore (the same version as .venv's).
PYTHONPATH="$ROOT/layers/taskgate" "$TOOLS/layer/bin/python" -m taskgate.adapters.botocore_trim

"$TOOLS/mcp/bin/python" -c 'from importlib.metadata import version as v; print("bench/setup: mcp venv: mcp", v("mcp"), "mcp-types", v("mcp-types"))'
"$TOOLS/fastmcp/bin/python" -c 'from importlib.metadata import version as v; print("bench/setup: fastmcp venv: fastmcp", v("fastmcp"), "fastmcp-tasks", v("fastmcp-tasks"), "mcp", v("mcp"))'
"$TOOLS/layer/bin/python" -c 'from importlib.metadata import version as v; print("bench/setup: layer venv: boto3", v("boto3"), "powertools", v("aws-lambda-powertools"), "pydantic", v("pydantic"), "starlette", v("starlette"), "mangum", v("mangum"))'
