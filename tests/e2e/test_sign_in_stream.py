"""The stack's own sign-in (AuthMode USER) on the streaming endpoint (StreamingApi), with real
servers: `make serve-signin`'s server (`python -m taskgate.local`, TASKGATE_SIGN_IN=dev) with
the streaming endpoint beside it (STREAM_PORT: the same app with StreamFunction's settings,
served by uvicorn, which passes bytes on as they are written, as the REST API does).

- the released Python SDK (`mcp==1.30.0`, OAuthClientProvider) pointed at the streaming
  endpoint finds where to sign in from its 401 and its own metadata, registers and signs in at
  the stack's authorization server (the HTTP API's origin), gets a token for the streaming
  endpoint and runs a task there;
- a person signed in for the streaming endpoint makes a 2026-07-28 plain call of a 12 s tool:
  held, its progress arriving while the tool runs, then the result;
- each endpoint refuses the other's token (401 invalid_token, the audience).
"""

from __future__ import annotations

import json
import pathlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.e2e.local_server import free_port, run_setup, running_server
from tests.e2e.test_sign_in_hosts import person_signs_in, python_sdk_signs_in, token_claims
from tests.mcp_client import envelope, headers_for

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "tests" / "e2e" / "clients2025"
SCOPE = "taskgate/tasks"


@dataclass
class Stack:
    url: str  # the HTTP API's /mcp (and its origin: the issuer)
    stream: str  # the streaming endpoint's /mcp
    log: pathlib.Path

    @property
    def origin(self) -> str:
        return self.url.removesuffix("/mcp")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    run_setup(CLIENTS / "setup.sh", "clients2025")
    tmp = tmp_path_factory.mktemp("sign-in-stream")
    port, idp_port, stream_port = free_port(), free_port(), free_port()
    env = {"TASKGATE_SIGN_IN": "dev", "IDP_PORT": str(idp_port), "STREAM_PORT": str(stream_port)}
    log = tmp / "server.log"
    with running_server(log, port=port, **env) as url:
        stream = f"http://127.0.0.1:{stream_port}/mcp"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(stream.replace("/mcp", "/health"), timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        yield Stack(url, stream, log)


def test_the_python_sdk_signs_in_for_the_streaming_endpoint_and_runs_a_task_there(stack: Stack) -> None:
    out = python_sdk_signs_in(stack.stream, stack.log)
    where = {urlsplit(stack.stream).netloc: "stream", urlsplit(stack.url).netloc: "stack"}
    steps = []
    for r in out["requests"]:
        url = urlsplit(r["url"])
        steps.append(f"{r['method']} {where.get(url.netloc, 'idp')}{url.path} {r['status']}")
        if r["bearer"] and url.path == "/mcp":
            break
    print(f"\n[mcp {out['version']} -> the streaming endpoint] " + "\n  ".join(steps))
    assert steps == [
        "POST stream/mcp 401",
        "GET stream/.well-known/oauth-protected-resource/mcp 200",  # where its 401 pointed
        "GET stack/.well-known/oauth-authorization-server 200",  # the stack's issuer
        "POST stack/oauth/register 201",
        "GET stack/oauth/authorize 302",
        "GET idp/oauth2/authorize 200",
        "POST idp/login 302",
        "GET stack/oauth/callback 200",  # the consent page
        "POST stack/oauth/consent 302",
        "POST stack/oauth/token 200",
        "POST stream/mcp 200",
    ]
    (query,) = out["authorizationQueries"]
    assert query["resource"] == stack.stream
    assert out["token"]["aud"] == stack.stream and out["token"]["iss"] == stack.origin
    assert out["polled"][-1] == "completed" and out["texts"] == ["signed-in finished after 1 seconds"]


def test_a_signed_in_person_gets_a_held_2026_call_with_progress_as_it_runs(stack: Stack) -> None:
    token = person_signs_in(stack.origin, stack.stream)
    assert token_claims(token)["aud"] == stack.stream
    params = {"name": "slow_compute", "arguments": {"seconds": 12, "label": "held"}}
    body = envelope("tools/call", params, 7, tasks=False)  # no tasks extension: not to be given a task
    body["params"]["_meta"]["progressToken"] = "held"
    headers = {**headers_for("tools/call", params), "authorization": f"Bearer {token}"}
    started = time.monotonic()
    arrivals: list[tuple[float, dict[str, Any]]] = []
    with httpx.stream("POST", stack.stream, content=json.dumps(body), headers=headers, timeout=90) as reply:
        assert reply.status_code == 200, reply.read()
        assert reply.headers["content-type"].startswith("text/event-stream")
        for line in reply.iter_lines():
            if line.startswith("data: ") and line.strip() != "data:":
                arrivals.append((time.monotonic() - started, json.loads(line[6:])))
    progress = [at for at, m in arrivals if m.get("method") == "notifications/progress"]
    at, final = arrivals[-1]
    print(
        f"\n[held 2026 call, signed in] {len(progress)} progress at {[round(p, 1) for p in progress]} s; result at {at:.1f} s"
    )
    assert final["id"] == 7 and final["result"]["resultType"] == "complete"
    assert final["result"]["content"][0]["text"] == "held finished after 12 seconds"
    # Progress left while the tool ran: the first about 10 s before the result.
    assert len(progress) >= 5 and progress[0] < at - 8, (progress, at)


def test_each_endpoint_refuses_the_other_ones_token(stack: Stack) -> None:
    streaming, home = person_signs_in(stack.origin, stack.stream), person_signs_in(stack.origin, stack.url)
    params: dict[str, Any] = {}
    for url, token, good in (
        (stack.stream, streaming, True),
        (stack.url, home, True),
        (stack.url, streaming, False),
        (stack.stream, home, False),
    ):
        headers = {**headers_for("tools/list", params), "authorization": f"Bearer {token}"}
        reply = httpx.post(url, content=json.dumps(envelope("tools/list", params, 1)), headers=headers)
        if good:
            assert reply.status_code == 200, (url, reply.text)
            continue
        assert reply.status_code == 401, (url, reply.text)
        challenge = reply.headers["www-authenticate"]
        assert 'error="invalid_token"' in challenge and "(audience)" in challenge
        assert (
            f'resource_metadata="{url.removesuffix("/mcp")}/.well-known/oauth-protected-resource/mcp"'
            in challenge
        )
