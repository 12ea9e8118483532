"""One host through `sam local start-api` on the Lambda runtime image the project builds
(issue 18 item 4): mcp-remote (Claude Desktop's bridge) lists, calls a quick tool, answers an
elicitation and makes the 45 s plain call, with ApiFunction in a Lambda container and the
state machine's worker steps in `sam local invoke` (the setup of test_sam_local_invoke.py).

`sam local start-api` is not API Gateway: it streams nothing either (it waits for the
container's whole response), but it has no 30 s integration timeout of its own; what ends a
long request there is the function's own Timeout (ApiFunction: 29 s): SAM logs "Function
'ApiFunction' timed out after 29 seconds" and answers 502 `{"message":"Internal server
error"}` (deployed, the same 29 s Lambda timeout ends the invocation a second before HTTP
API's 30 s cut). The test prints what it got, so that difference stays visible.

SAM CLI cannot resolve an integration whose IntegrationUri is `!Ref ApiFunction.Alias` (it
mounts the routes on no function and answers 502): start-api gets a copy of the built
template with the function's ARN there instead (`start_api_template`).

Only the deployed tools exist in the built layer, so the 45 s tool is the conformance
fixture ``slow_compute`` (progress every 0.25 s).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from taskgate.local.endpoint import ADD_HOST, sam_binary, sam_environment
from taskgate.local.sam_local import SamLocal
from tests.e2e.local_server import free_port
from tests.e2e.test_hosts import HOSTS, Outcome, hosts_installed
from tests.e2e.test_sam_local_invoke import local

pytestmark = pytest.mark.slow
Say = Callable[[str], None]
__all__ = ["hosts_installed", "local"]  # fixtures shared with those modules
HOST = next(h for h in HOSTS if h.name == "mcp-remote")


def _answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def start_api_template(local: SamLocal) -> Path:
    """The built template with each Lambda integration on the function's ARN (what SAM CLI
    resolves) instead of its alias; next to the original, so CodeUri paths still hold."""
    data = yaml.safe_load(local.template.read_text())
    alias_uri = {"Ref": "ApiFunction.Alias"}
    arn_uri = {
        "Fn::Sub": "arn:aws:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/${ApiFunction.Arn}/invocations"
    }
    swapped = 0
    for resource in data["Resources"].values():
        properties = resource.get("Properties", {})
        if (
            resource["Type"] == "AWS::ApiGatewayV2::Integration"
            and properties.get("IntegrationUri") == alias_uri
        ):
            properties["IntegrationUri"] = arn_uri
            swapped += 1
    assert swapped, "no integration on ApiFunction.Alias: is this workaround still needed?"
    out = local.build_dir / "template-start-api.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


@pytest.fixture(scope="module")
def start_api(local: SamLocal, tmp_path_factory: pytest.TempPathFactory, say: Say) -> Iterator[str]:
    port = free_port()
    log_path = tmp_path_factory.mktemp("start-api") / "start-api.log"
    command = [
        sam_binary(),
        "local",
        "start-api",
        "--port",
        str(port),
        "--env-vars",
        str(local.write_env_file()),
        "--skip-pull-image",
        "--warm-containers",
        "LAZY",
        *ADD_HOST,
        "--template",
        str(start_api_template(local)),
        "--parameter-overrides",
        f"Architecture={local.arch} AuthMode=NONE",
    ]
    started = time.monotonic()
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            command, cwd=local.root, env=sam_environment(), stdout=log, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 180
        while not _answers(port):
            assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()[-3000:]
            time.sleep(0.5)
        say(f"\n[sam local start-api] on port {port} in {time.monotonic() - started:.0f} s")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        tail = [
            line
            for line in log_path.read_text(errors="replace").splitlines()
            if "timed out" in line.lower() or '" 502 ' in line
        ]
        say(
            "[sam local start-api] what it logged about time-outs:\n  "
            + "\n  ".join(tail[-6:] or ["nothing"])
        )


def test_mcp_remote_through_sam_local_start_api(hosts_installed: None, start_api: str, say: Say) -> None:
    env = {**os.environ, "HOSTS_LONG_TOOL": "slow_compute"}
    started = time.time()
    done = subprocess.run(
        HOST.command(start_api, "main", "sam-local"), capture_output=True, text=True, timeout=600, env=env
    )
    lines: dict[str, dict[str, Any]] = {}
    for text in done.stdout.splitlines():
        if text.startswith("{"):
            line = json.loads(text)
            lines[line["scenario"]] = line
    outcome = Outcome(
        HOST, lines=lines, expected_tools=frozenset({"greet", "slow_compute", "confirm_delete"})
    )
    cells = outcome.cells()
    say(
        f"[sam local start-api] {HOST.name} ({time.time() - started:.0f} s): "
        + lines.get("client", {}).get("version", "?")
    )
    for key in ("list", "quick", "elicit", "long", "progress"):
        say(f"    {key:<9} {cells[key].ok} {cells[key].text}")
    assert cells["list"].ok and cells["quick"].ok, (cells, done.stderr[-2000:])
    assert cells["elicit"].ok, cells["elicit"]
    # The result, or (when the work outlasts what the host waits, as here where each worker step
    # starts a container of its own) the task handle it is handed over as: never the function's
    # own timeout.
    assert cells["long"].ok is True, cells["long"]
