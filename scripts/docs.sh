#!/usr/bin/env bash
# `make docs`: the documentation site (docs/, mkdocs.yml) built strictly with Zensical, so a
# link to a missing page or anchor fails the build, naming the file, line and column. The
# generator lives in a venv of its own (.venv/docs, from requirements-docs.txt), so `make serve`
# never installs it. README.md is not part of the site; its links are checked by
# tests/unit/test_docs_links.py.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv/docs
stamp=$venv/.installed
if [ ! -f "$stamp" ] || [ requirements-docs.txt -nt "$stamp" ]; then
  PY=""
  for candidate in python3.13 python3.12 python3.11 python3.10 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
      PY=$(command -v "$candidate")
      break
    fi
  done
  [ -n "$PY" ] || { echo "docs: need Python >= 3.10" >&2; exit 1; }
  rm -rf "$venv"
  "$PY" -m venv "$venv"
  "$venv/bin/python" -m pip install -q -r requirements-docs.txt
  touch "$stamp"
fi
# Zensical colours its report whatever the terminal, and ends a strict failure with a Python
# traceback: CI logs read better with neither (the exit status is zensical's, through pipefail).
"$venv/bin/zensical" build --strict --clean 2>&1 \
  | sed -e 's/\x1b\[[0-9;]*m//g' -e '/^Traceback/,/^RuntimeError/{/^RuntimeError/!d}'
echo
