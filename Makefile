# Two commands a new user needs: `make serve` and `make test`. Both set up .venv first.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 3000

.PHONY: setup serve serve-front hosts test unit integration lint typecheck template walkthrough conformance clients transcript load bench bench-quick inspector clean build lambda-image local-aws invoke local-aws-stop

setup:
	@scripts/bootstrap.sh

# The local server serves the examples and the conformance fixtures the README's walkthrough,
# `make walkthrough` and `make transcript` call; a deployment serves only ToolModules
# (default taskgate_tools). `make serve TOOL_MODULES=taskgate_tools` serves what deploys.
TOOL_MODULES ?= taskgate_conformance,taskgate_tools
# The example tool declared in JSON (taskgate_tools/jobs.json: load_source).
TOOL_DECLARATIONS ?= taskgate_tools:jobs.json
serve: setup
	PORT=$(PORT) TOOL_MODULES=$(TOOL_MODULES) TOOL_DECLARATIONS=$(TOOL_DECLARATIONS) PYTHONPATH=layers/taskgate:layers/tools $(PY) -m taskgate.local

# A stand-in for API Gateway's HTTP API in front of a running `make serve` (tests/apigw_front.py):
# whole responses at once, cut at 30 s (503), Lambda's 6 MB cap. FRONT_ARGS="--api rest" for a
# REST API (29 s, 504); "--timeout N" to change the cut.
FRONT_PORT ?= 3001
serve-front: setup
	$(PY) -m tests.apigw_front --upstream http://127.0.0.1:$(PORT) --port $(FRONT_PORT) $(FRONT_ARGS)

# The agent frameworks and hosts (tests/e2e/hosts/) through the API Gateway front: the matrix.
hosts: setup
	$(PY) -m pytest -q -s tests/e2e/test_hosts.py

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
# BENCH_ARGS="--before main" adds that revision's tasks/get cold start to section 1.
bench: setup
	$(PY) bench/run.py $(BENCH_ARGS)

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

# `sam build` for an architecture: the template's Architecture and the layer wheels'
# (layers/Makefile LAMBDA_ARCH) always the same. `make build ARCH=x86_64`.
ARCH ?= arm64
build: setup
	LAMBDA_ARCH=$(ARCH) PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/sam build --parameter-overrides Architecture=$(ARCH)

# --- sam local invoke against a local AWS endpoint (README, "sam local invoke") ----------
LOCAL_AWS_PORT ?= 4599
LOCAL := PYTHONPATH=layers/taskgate:layers/tools LOCAL_AWS_PORT=$(LOCAL_AWS_PORT) $(PY) -m taskgate.local
# A stand-in for the Lambda Python 3.13 image, for machines without registry access (root).
lambda-image:
	scripts/lambda_image.sh

# The endpoint in the foreground (table, bucket, state machine; RunTool runs WorkerFunction
# with sam local invoke). `make invoke` starts one in the background when none is running.
local-aws: setup
	$(LOCAL).endpoint

# make invoke FUNCTION=ApiFunction EVENT=events/api_tools_call_task.json [TASK_ID=...]
FUNCTION ?= ApiFunction
EVENT ?= events/api_server_discover.json
invoke: setup
	$(LOCAL).sam_local invoke $(FUNCTION) $(EVENT) $(if $(TASK_ID),--task-id $(TASK_ID))

local-aws-stop:
	$(LOCAL).sam_local stop

clean:
	rm -rf $(VENV) .aws-sam .pytest_cache .mypy_cache .ruff_cache
