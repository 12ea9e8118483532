"""Sign-in end to end: the released Python SDK (``mcp==1.30.0``, ``OAuthClientProvider``)
signs in to `python -m taskgate.local` running with AUTH_MODE=JWT, and runs a task as the
identity it signed in as.

Three servers, all on loopback ports: the local OAuth authorization server
(tests/oauth_server.py, in this process, auto-approving as "alice"; RFC 8414 discovery,
RFC 7591 registration, PKCE, RS256 tokens, a JWKS), taskgate (a subprocess, as a user runs
it), and the SDK's client (a subprocess on .tools/clients2025/py). The flow: POST /mcp
without a token -> 401 with ``resource_metadata`` -> the protected resource metadata -> the
authorization server's metadata -> registration (or a pre-registered client) -> /authorize
with PKCE and ``resource`` -> /token -> initialize, a task, its result, tasks/list.

The Cognito-shaped case: the issuer has a path, only OIDC discovery, no registration, and
access tokens without ``aud`` (client_id and token_use instead) - what the stack's own user
pool gives MCP clients.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.e2e.local_server import free_port, run_setup, running_server
from tests.mcp_client import envelope, headers_for
from tests.oauth_server import LocalAuthorizationServer, RegisteredClient, serve_in_thread

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "tests" / "e2e" / "clients2025"
PYTHON = ROOT / ".tools" / "clients2025" / "py" / "bin" / "python"
SCOPE = "taskgate/tasks"
CLIENT_ID = "taskgate-e2e"
REDIRECT_URI = "http://localhost:33418/callback"  # never listened on: the test's browser reads it


@pytest.fixture(scope="module")
def clients_installed() -> None:
    run_setup(CLIENTS / "setup.sh", "clients2025")
    assert PYTHON.exists()


@contextmanager
def stack(
    tmp: pathlib.Path, *, cognito_style: bool = False
) -> Iterator[tuple[LocalAuthorizationServer, str]]:
    """The authorization server and taskgate signed in with it; yields (server, /mcp URL)."""
    auth = LocalAuthorizationServer(
        subject="alice",
        scopes_supported=[SCOPE],
        clients=[RegisteredClient(CLIENT_ID, [REDIRECT_URI])],
        cognito_style=cognito_style,
    )
    with serve_in_thread(auth.app_for):
        port = free_port()
        resource = f"http://127.0.0.1:{port}/mcp"
        env = {
            "AUTH_MODE": "JWT",
            "OAUTH_RESOURCE": resource,
            "OAUTH_ISSUER": auth.issuer,
            "OAUTH_SCOPES": SCOPE,
        }
        if cognito_style:  # what the template sets for the stack's own user pool
            env.update(OAUTH_CLIENT_IDS=CLIENT_ID, OAUTH_TOKEN_USE="access")
        with running_server(tmp / "server.log", port=port, **env) as url:
            assert url == resource
            yield auth, url


def _sign_in_and_run_a_task(url: str, client_id: str | None = None) -> dict[str, Any]:
    command = [str(PYTHON), str(CLIENTS / "mcp_oauth_client.py"), url, "--redirect-uri", REDIRECT_URI]
    if client_id:
        command += ["--client-id", client_id]
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=120, env=dict(os.environ)
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert "error" not in out, f"{out['error']}\n{out.get('traceback')}"
    print(f"\n[mcp {out['version']}] signed in as {out['token']}, client {out['clientId']}")
    for n, r in enumerate(out["requests"], 1):
        note = f"   WWW-Authenticate: {r['wwwAuthenticate']}" if "wwwAuthenticate" in r else ""
        rpc = f" ({r['rpc']})" if r.get("rpc") else ""
        print(
            f"  {n:2}. {r['method']:<6} {r['url']} -> {r['status']}{' [Bearer]' if r['bearer'] else ''}{rpc}{note}"
        )
    return out


def _flow(out: dict[str, Any]) -> list[str]:
    """'METHOD path status' of the requests up to the first authorized /mcp call."""
    steps: list[str] = []
    for r in out["requests"]:
        steps.append(f"{r['method']} {urlsplit(r['url']).path} {r['status']}")
        if r["bearer"] and urlsplit(r["url"]).path == "/mcp":
            break
    return steps


def _raw(url: str, token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 request with a token the authorization server minted."""
    headers = {**headers_for(method, params), "authorization": f"Bearer {token}"}
    reply = httpx.post(url, content=json.dumps(envelope(method, params, 1)), headers=headers, timeout=30)
    return reply.json()  # type: ignore[no-any-return]


def _assert_the_task_ran_as_the_signed_in_user(
    out: dict[str, Any], auth: LocalAuthorizationServer, url: str
) -> None:
    assert out["protocolVersion"] == "2025-11-25"
    assert out["polled"][-1] == "completed"
    assert out["texts"] == ["signed-in finished after 1 seconds"]
    assert out["listed"] is True  # tasks/list is offered: the caller has an identity
    assert out["token"]["iss"] == auth.issuer and out["token"]["sub"] == "alice"
    # The owner is iss#sub: the same user with a fresh token sees the task, another does not.
    task_id = out["taskId"]
    mine = _raw(
        url, auth.mint_token(aud=url, client_id=CLIENT_ID, scope=SCOPE), "tasks/get", {"taskId": task_id}
    )
    assert mine["result"]["status"] == "completed"
    bob = auth.mint_token(sub="bob", aud=url, client_id=CLIENT_ID, scope=SCOPE)
    assert _raw(url, bob, "tasks/get", {"taskId": task_id})["error"]["code"] == -32602


def test_a_request_without_a_token_is_told_where_to_sign_in(
    clients_installed: None, tmp_path: pathlib.Path
) -> None:
    with stack(tmp_path) as (auth, url):
        reply = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
        assert reply.status_code == 401
        assert (
            reply.headers["www-authenticate"] == f'Bearer scope="{SCOPE}", resource_metadata="{metadata_url}"'
        )
        metadata = httpx.get(metadata_url).json()
        print(
            f"\n401 WWW-Authenticate: {reply.headers['www-authenticate']}\nmetadata: {json.dumps(metadata)}"
        )
        assert metadata["resource"] == url and metadata["authorization_servers"] == [auth.issuer]
        assert metadata["scopes_supported"] == [SCOPE]


def test_the_python_sdk_registers_signs_in_and_runs_a_task(
    clients_installed: None, tmp_path: pathlib.Path
) -> None:
    with stack(tmp_path) as (auth, url):
        out = _sign_in_and_run_a_task(url)
        assert _flow(out) == [
            "POST /mcp 401",
            "GET /.well-known/oauth-protected-resource/mcp 200",
            "GET /.well-known/oauth-authorization-server 200",
            "POST /register 201",
            "GET /authorize 302",
            "POST /token 200",
            "POST /mcp 200",
        ]
        first = out["requests"][0]
        assert (
            f'resource_metadata="{url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")}"'
            in (first["wwwAuthenticate"])
        )
        assert out["clientId"].startswith("dyn-")
        (query,) = out["authorizationQueries"]
        assert (
            query["scope"] == SCOPE and query["resource"] == url and query["code_challenge_method"] == "S256"
        )
        assert out["token"]["aud"] == url  # RFC 8707: the resource became the audience
        _assert_the_task_ran_as_the_signed_in_user(out, auth, url)


def test_a_pre_registered_client_signs_in_against_a_cognito_shaped_issuer(
    clients_installed: None, tmp_path: pathlib.Path
) -> None:
    """What the stack's own user pool gives: no RFC 8414 document and no registration, only
    OIDC discovery under the issuer's path, and access tokens with client_id, not aud."""
    with stack(tmp_path, cognito_style=True) as (auth, url):
        out = _sign_in_and_run_a_task(url, client_id=CLIENT_ID)
        pool = urlsplit(auth.issuer).path
        assert _flow(out) == [
            "POST /mcp 401",
            "GET /.well-known/oauth-protected-resource/mcp 200",
            f"GET /.well-known/oauth-authorization-server{pool} 404",
            f"GET /.well-known/openid-configuration{pool} 404",
            f"GET {pool}/.well-known/openid-configuration 200",
            "GET /oauth2/authorize 302",
            "POST /oauth2/token 200",
            "POST /mcp 200",
        ]
        assert out["clientId"] == CLIENT_ID
        assert out["token"]["aud"] is None and out["token"]["token_use"] == "access"
        assert out["token"]["client_id"] == CLIENT_ID and out["token"]["scope"] == SCOPE
        _assert_the_task_ran_as_the_signed_in_user(out, auth, url)
