"""The MCP Inspector 2.x signs in to taskgate in a real browser, then runs a task as that person.

The server runs as `make serve-signin` does (its own authorization server in front of the
Cognito-shaped development identity provider); the Inspector's web UI, set up as in
test_inspector.py (same pinned install, same ports and environment), is driven in headless
Chromium by tests/e2e/inspector/drive_sign_in.mjs: connect, the 401, registration, the
provider's sign-in form, the consent page, back to the Inspector, a task. The task is then
checked as the person's own through the API: an agent's client-credentials token cannot see it.
"""

from __future__ import annotations

import json
import os
import pathlib
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest

from taskgate.config import EXAMPLE_TOOL_MODULES
from tests.e2e.test_inspector import (
    ARTIFACTS,
    HERE,
    NODE,
    TOOLS,
    _free_ports,
    _start,
    _stop,
    _wait_http,
    inspector_installed,  # noqa: F401 (the fixture, shared)
    start_inspector,
)
from tests.mcp_client import envelope, headers_for

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
DRIVE_TIMEOUT = 180


@pytest.fixture(scope="module")
def signed_in_stack(
    inspector_installed: None,  # noqa: F811 (the fixture imported above)
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("inspector-sign-in")
    server_port, idp_port, client_port, sandbox_port, app_origin_port = _free_ports(5)
    token = secrets.token_hex(16)
    server_log, inspector_log = tmp / "server.log", tmp / "inspector.log"
    with ExitStack() as cleanup:
        server = _start(
            [sys.executable, "-m", "taskgate.local"],
            {
                **os.environ,
                "PORT": str(server_port),
                "IDP_PORT": str(idp_port),
                "TASKGATE_SIGN_IN": "dev",
                "TOOL_MODULES": EXAMPLE_TOOL_MODULES,  # slow_compute is an example's
                "PYTHONPATH": "layers/taskgate:layers/tools",
            },
            server_log,
        )
        cleanup.callback(_stop, server)
        inspector = start_inspector(tmp, (client_port, sandbox_port, app_origin_port), token, inspector_log)
        cleanup.callback(_stop, inspector)
        _wait_http(f"http://127.0.0.1:{server_port}/health", server, server_log, "taskgate")
        _wait_http(f"http://127.0.0.1:{client_port}/", inspector, inspector_log, "the Inspector web UI")
        yield {
            "server_url": f"http://127.0.0.1:{server_port}/mcp",
            "idp": f"http://127.0.0.1:{idp_port}",
            "ui_url": f"http://127.0.0.1:{client_port}/?MCP_INSPECTOR_API_TOKEN={token}",
            "server_log": server_log,
            "inspector_log": inspector_log,
        }


def test_the_inspector_signs_in_in_a_browser_and_runs_a_task(signed_in_stack: dict[str, Any]) -> None:
    stack = signed_in_stack
    started = time.monotonic()
    done = subprocess.run(
        [str(NODE), str(HERE / "drive_sign_in.mjs"), stack["ui_url"], stack["server_url"]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=DRIVE_TIMEOUT,
        env={**os.environ, "INSPECTOR_ARTIFACTS": str(ARTIFACTS), "INSPECTOR_TOOLS": str(TOOLS)},
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"drive_sign_in.mjs printed no JSON (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    out: dict[str, Any] = json.loads(lines[-1])
    print(
        f"\n[inspector:sign-in] exit {done.returncode} in {time.monotonic() - started:.1f}s\n{json.dumps(out, indent=1)}"
    )
    assert done.returncode == 0 and "error" not in out, (
        f"{out.get('error')}\n{done.stderr}\nserver log:\n{stack['server_log'].read_text()[-3000:]}"
        f"\ninspector log:\n{stack['inspector_log'].read_text()[-3000:]}"
    )
    server = stack["server_url"].removeprefix("http://").removesuffix("/mcp")
    idp = stack["idp"].removeprefix("http://")
    ui = stack["ui_url"].removeprefix("http://").split("/")[0]
    # The browser's own path, redirects included: the Inspector sends it to the stack's
    # authorization endpoint, which sends it to the provider's sign-in form; the provider back to
    # the stack's callback (the consent page); the decision to the Inspector's callback.
    hops = [n for n in out["navigations"] if not n.endswith(f"{ui}/")]
    print("\n  " + "\n  ".join(hops))
    assert hops == [
        f"GET {server}/oauth/authorize",
        f"GET {idp}/oauth2/authorize",
        f"POST {idp}/login",
        f"GET {server}/oauth/callback",
        f"POST {server}/oauth/consent",
        f"GET {ui}/oauth/callback",
    ], out["navigations"]
    assert out["signInPage"] == "/oauth2/authorize" and out["consentPage"] == "/oauth/callback"
    assert out["consentHeading"] == "Allow MCP Inspector to use your taskgate tasks?"
    assert out["connected"] is True and out["consoleErrors"] == []
    task = out["task"]
    assert task["ranAsTask"] is True and task["statuses"][-1] == "completed"
    assert task["resultText"].endswith("finished after 2 seconds")
    for name in ("sign-in-form", "consent", "signed-in", "signed-in-task"):
        assert pathlib.Path(out["screenshots"][name]).stat().st_size > 10_000, name
    # The person's task: an agent (client credentials at the provider) cannot see it.
    agent = httpx.post(
        f"{stack['idp']}/oauth2/token",
        data={"grant_type": "client_credentials", "scope": "taskgate/tasks"},
        auth=("local-agent", "local-agent-secret"),
    ).json()["access_token"]
    params = {"taskId": task["taskId"]}
    reply = httpx.post(
        stack["server_url"],
        content=json.dumps(envelope("tasks/get", params, 1)),
        headers={**headers_for("tasks/get", params), "authorization": f"Bearer {agent}"},
    ).json()
    assert reply["error"]["code"] == -32602, reply
