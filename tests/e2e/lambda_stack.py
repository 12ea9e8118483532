"""The deployed shape on one machine, for e2e tests: the local server in its Lambda mode
(taskgate/local/lambda_mode.py: ApiFunction in environments frozen once they have answered,
cut at the function's timeout) behind the API Gateway stand-in (tests/apigw_front.py), the
front's cut a second above the function's, as API Gateway's 30 s is above ApiFunction's 29 s.

    with lambda_stack(tmp / "work", function_timeout=6) as stack:
        ...  # stack.front_url is the front's /mcp
    # on the way out: no request left a thread running after its answer (stack.report())
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
from taskgate_cli.protocol import envelope, headers_2026, meta_2026

from tests.apigw_front import Front, running_front
from tests.e2e.local_server import left_running, running_server

TOOL_MODULES = "taskgate_conformance,taskgate_tools,tests.fixture_tools"


@dataclass
class LambdaStack:
    server: str  # the local server's base URL
    front: Front
    front_url: str  # the front's /mcp
    runs: pathlib.Path  # where fixture tools keep each run's state (TASKGATE_TEST_RUNS_DIR)
    function_timeout: float

    def report(self) -> dict[str, Any]:
        """The Lambda mode's report (``GET /_lambda``)."""
        with urllib.request.urlopen(f"{self.server}/_lambda", timeout=10) as resp:
            return json.loads(resp.read())  # type: ignore[no-any-return]

    def run_state(self, run: str) -> dict[str, Any] | None:
        try:
            return json.loads((self.runs / f"{run}.json").read_text())  # type: ignore[no-any-return]
        except (OSError, ValueError):
            return None

    def call_2026(self, tool: str, arguments: dict[str, Any], **headers: str) -> tuple[int, Any, float]:
        """A plain 2026-07-28 call through the front: (HTTP status, the body, seconds)."""
        params = {"name": tool, "arguments": arguments}
        body = envelope("tools/call", params, 1, meta_2026(tasks=False))
        began = time.monotonic()
        response = httpx.post(
            self.front_url, json=body, headers={**headers_2026("tools/call", params), **headers}, timeout=120
        )
        return response.status_code, response.json(), time.monotonic() - began

    def summary(self) -> str:
        report = self.report()
        return (
            f"Lambda mode: {report['invocations']} invocations, {report['cold_starts']} cold starts (the slowest {report['slowest_cold_start_seconds']} s), "
            f"{report['timeouts']} cut at the function's {self.function_timeout:g} s, "
            f"{len(report['left_running'])} threads left running"
        )


@contextlib.contextmanager
def lambda_stack(
    work: pathlib.Path, *, function_timeout: float = 29.0, check_left_running: bool = True, **env: str
) -> Iterator[LambdaStack]:
    """The stack, its report checked on the way out (unless ``check_left_running`` is off): a
    thread still running in an API environment after its answer fails the test that used it."""
    runs = work / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    settings = {
        "TASKGATE_LAMBDA": "1",
        "FRONT_TIMEOUT_SECONDS": f"{function_timeout:g}",
        "TOOL_MODULES": TOOL_MODULES,
        "TASKGATE_TEST_RUNS_DIR": str(runs),
        **env,
    }
    with (
        # Checked here, once the stack's own checks ran (check_left_running).
        running_server(work / "server.log", check_left_running=False, **settings) as url,
        running_front(url.removesuffix("/mcp"), timeout_seconds=function_timeout + 1) as [front],
    ):
        stack = LambdaStack(url.removesuffix("/mcp"), front.front, f"{front.url}/mcp", runs, function_timeout)
        yield stack
        if check_left_running:
            left = left_running(stack.server)
            assert left == [], f"threads left running in an API environment after its answer: {left}"
