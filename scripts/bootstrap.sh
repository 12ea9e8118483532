#!/usr/bin/env bash
# Create .venv with the same Python minor as the Lambda runtime (3.13) when the machine has it,
# and install what the asked-for commands need, each need once (a stamp per need):
#
#   scripts/bootstrap.sh serve   the local server: taskgate itself with its `local` extra (uvicorn,
#                                moto) and the `taskgate` command. `make serve`, `make dev`, the
#                                scripts that talk to a server.
#   scripts/bootstrap.sh test    (the default) serve's, plus the CI toolchain: pytest and the test
#                                libraries, ruff, radon, mypy, cfn-lint, the SAM CLI
#                                (requirements-dev.txt), and the template scanners in .venv/scanners.
#
# `make serve` asks for `serve` only, so serving never waits for the CI toolchain; `make test`
# asks for `test`, which finds serve's part already done.
set -euo pipefail
cd "$(dirname "$0")/.."
need=${1:-test}

find_python() {
  for candidate in python3.13 "$HOME/.pyenv/versions/3.13"*/bin/python3.13 /root/.pyenv/versions/3.13*/bin/python3.13 python3.12 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

# True when the stamp exists and is newer than every file named after it.
fresh() {
  local stamp=$1
  shift
  [ -f "$stamp" ] || return 1
  for input in "$@"; do
    [ "$stamp" -nt "$input" ] || return 1
  done
}

serve_inputs=(pyproject.toml setup.py layers/taskgate/requirements.txt)
test_inputs=("${serve_inputs[@]}" requirements-dev.txt requirements-sam.txt requirements-scan.txt)

# A new user starts `make serve`, and while it installs, `make walkthrough` in another
# terminal: two bootstraps in one .venv break each other's pip. The second waits for the
# first here, then finds the stamp and has nothing to do.
if command -v flock >/dev/null 2>&1; then
  exec 9>.venv.lock
  flock 9
fi

venv() {
  [ -x .venv/bin/python ] && return 0
  PY=$(find_python) || { echo "bootstrap: need Python >= 3.12 (3.13 preferred, the Lambda runtime)" >&2; exit 1; }
  echo "bootstrap: creating .venv with $("$PY" --version) ($PY)"
  "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
}

# The slice of botocore's data the clients load (adapters/aws_clients.py), cut from .venv's botocore.
trim_botocore() {
  PYTHONPATH=layers/taskgate .venv/bin/python -m taskgate.adapters.botocore_trim
}

install_serve() {
  fresh .venv/.installed-serve "${serve_inputs[@]}" && return 0
  venv
  echo "bootstrap: installing the local server (taskgate[local])"
  # The project itself, editable, with the local server's extra (uvicorn, moto): puts the
  # `taskgate` command (cli/) in .venv/bin.
  .venv/bin/python -m pip install -q -e ".[local]"
  trim_botocore
  touch .venv/.installed-serve
}

install_test() {
  fresh .venv/.installed-test "${test_inputs[@]}" && return 0
  venv
  echo "bootstrap: installing the CI toolchain (requirements-dev.txt, .venv/scanners)"
  # One resolution for the tools and the project, as the two must agree on their shared pins.
  .venv/bin/python -m pip install -q -r requirements-dev.txt -e ".[local]"
  trim_botocore
  # The template scanners whose pins clash with ours (checkov: boto3 1.35), in a venv of their own.
  rm -rf .venv/scanners
  "$(readlink -f .venv/bin/python)" -m venv .venv/scanners
  .venv/scanners/bin/python -m pip install -q --upgrade pip
  .venv/scanners/bin/python -m pip install -q -r requirements-scan.txt
  touch .venv/.installed-serve .venv/.installed-test
}

case "$need" in
  serve) install_serve ;;
  test) install_test ;;
  *) echo "bootstrap: unknown need '$need' (serve or test)" >&2; exit 2 ;;
esac
