#!/usr/bin/env bash
# Create .venv with the same Python minor as the Lambda runtime (3.13) when the
# machine has it, and install everything the server and the tests need.
set -euo pipefail
cd "$(dirname "$0")/.."

find_python() {
  for candidate in python3.13 "$HOME/.pyenv/versions/3.13"*/bin/python3.13 /root/.pyenv/versions/3.13*/bin/python3.13 python3.12 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

# A new user starts `make serve`, and while it installs, `make walkthrough` in another
# terminal: two bootstraps in one .venv break each other's pip. The second waits for the
# first here, then finds the stamp and has nothing to do.
if command -v flock >/dev/null 2>&1; then
  exec 9>.venv.lock
  flock 9
fi

stamp=.venv/.installed
if [ -f "$stamp" ] && [ "$stamp" -nt requirements-dev.txt ] && [ "$stamp" -nt layers/taskgate/requirements.txt ] \
  && [ "$stamp" -nt pyproject.toml ] && [ "$stamp" -nt requirements-scan.txt ]; then
  exit 0
fi
PY=$(find_python) || { echo "bootstrap: need Python >= 3.12 (3.13 preferred, the Lambda runtime)" >&2; exit 1; }
echo "bootstrap: creating .venv with $("$PY" --version) ($PY)"
"$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r requirements-dev.txt
# The project itself, editable, with the local server's extra (uvicorn, moto): puts the
# `taskgate` command (cli/) in .venv/bin.
.venv/bin/python -m pip install -q -e ".[local]"
# The slice of botocore's data the clients load (adapters/aws_clients.py), cut from .venv's botocore.
PYTHONPATH=layers/taskgate .venv/bin/python -m taskgate.adapters.botocore_trim
# The template scanners whose pins clash with ours (checkov: boto3 1.35), in a venv of their own.
rm -rf .venv/scanners
"$PY" -m venv .venv/scanners
.venv/scanners/bin/python -m pip install -q --upgrade pip
.venv/scanners/bin/python -m pip install -q -r requirements-scan.txt
touch "$stamp"
