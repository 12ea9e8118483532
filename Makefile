# Two commands a new user needs: `make serve` and `make test`. Both set up .venv first.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 3000

.PHONY: setup serve test unit integration lint typecheck template walkthrough conformance clients transcript load bench bench-quick inspector clean

setup:
	@scripts/bootstrap.sh

serve: setup
	PORT=$(PORT) PYTHONPATH=layers/taskgate:layers/tools $(PY) -m taskgate.local

test: setup lint typecheck
	$(PY) -m pytest -q

# The hermetic tier: in-memory fakes, sockets and subprocesses refused (tests/unit/conftest.py).
unit: setup
	$(PY) -m pytest -q tests/unit

integration: setup
	$(PY) -m pytest -q tests/integration

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: setup
	$(VENV)/bin/mypy

template: setup
	$(VENV)/bin/sam validate --lint
	$(VENV)/bin/cfn-lint template.yaml

walkthrough: setup
	$(PY) scripts/walkthrough.py --url http://127.0.0.1:$(PORT)/mcp

# The official MCP conformance suite in its four selections (default, --requirements 2025-11-25,
# --requirements 2026-07-28, --suite all), each against a fresh local server; baseline:
# conformance-baseline.yml.
conformance: setup
	$(PY) scripts/conformance.py

# End-to-end tests with the released MCP client libraries (installed under .tools/).
clients: setup
	$(PY) -m pytest -q tests/e2e/test_clients_2026.py tests/e2e/test_clients_2025.py tests/e2e/test_clients_catalog.py

# Cold start, warm per-request cost, loopback throughput vs FastMCP, memory
# (medians on a shared machine: read the ratios; writes bench/results/latest.json).
bench: setup
	$(PY) bench/run.py

bench-quick: setup
	$(PY) bench/run.py --quick

# Many tasks at once against a fresh local server (loopback only, bounded).
load: setup
	$(PY) bench/load.py --n 50 --n 200 --mix

# The MCP Inspector 2.x web UI (headless Chromium) and CLI against a fresh local server.
inspector: setup
	$(PY) -m pytest -q tests/e2e/test_inspector.py -s

# A 2025-11-25 session against a running `make serve` (TASKGATE_DEV_TOKENS=demo-token=demo).
transcript: setup
	$(PY) scripts/transcript_2025.py --url http://127.0.0.1:$(PORT)/mcp --token demo-token --long 45

clean:
	rm -rf $(VENV) .aws-sam .pytest_cache .mypy_cache .ruff_cache
