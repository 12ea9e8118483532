"""Sign in to taskgate with the released Python MCP SDK (``mcp==1.30.0``) and run a task.

Run with the venv that ``setup.sh`` makes (``.tools/clients2025/py``), never the project's
own: ``python mcp_oauth_client.py URL [--client-id ID] [--redirect-uri URI]``. Without
``--client-id`` the SDK registers itself (RFC 7591 dynamic client registration); with it,
the client is pre-registered (what a Cognito user pool needs). Prints one JSON line; exits
0 whenever it could report (the test asserts on the JSON).

Only the SDK's own APIs do the work: ``OAuthClientProvider`` as the ``httpx.Auth`` of the
client given to ``streamable_http_client`` (the 401, protected resource metadata,
authorization server metadata, registration, PKCE, the token), then ``ClientSession`` and
``session.experimental.call_tool_as_task`` / ``poll_task`` / ``get_task_result`` /
``list_tasks``. The one thing a test must stand in for is the user's browser: the SDK hands
``redirect_handler`` the authorization URL, which a person (tests/sign_in_user.py) follows
through whatever the server shows (an authorization server that approves at once, or the
stack's own with its identity provider's sign-in form and the consent page) to the redirect
URI, whose ``code`` and ``state`` ``callback_handler`` returns.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import sys
import time
import traceback
import warnings
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from mcp import ClientSession, types

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: the person at the browser
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from sign_in_user import Person

warnings.simplefilter("ignore", DeprecationWarning)  # the SDK's 2025-11-25 tasks client is marked so


class MemoryStorage(TokenStorage):
    """Tokens in memory; ``client_info`` given up front is a pre-registered client."""

    def __init__(self, client_info: OAuthClientInformationFull | None) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info = client_info

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class Requests:
    """Every request the SDK's HTTP client sent (transport and auth flow), in order."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    async def on_response(self, response: httpx.Response) -> None:
        self.on_response_sync(response)

    def on_response_sync(self, response: httpx.Response) -> None:
        request = response.request
        entry: dict[str, Any] = {
            "method": request.method,
            "url": str(request.url.copy_with(query=None)),
            "status": response.status_code,
            "bearer": request.headers.get("authorization", "").startswith("Bearer "),
        }
        if response.status_code in (401, 403):
            entry["wwwAuthenticate"] = response.headers.get("www-authenticate")
        if request.method == "POST" and request.url.path.endswith("/mcp"):
            with contextlib.suppress(ValueError, AttributeError):
                entry["rpc"] = json.loads(request.content or b"null").get("method")
        self.entries.append(entry)


class Browser:
    """The user's browser: tests/sign_in_user.py's person follows the authorization URL (through
    a sign-in form and a consent page, if the server shows them) to the redirect URI, whose
    ``code`` and ``state`` ``callback_handler`` returns, as a local callback server would."""

    def __init__(self, requests: Requests, redirect_uri: str) -> None:
        self._result: tuple[str, str | None] | None = None
        self.authorization_urls: list[str] = []
        self.pages: list[dict[str, Any]] = []
        self._requests = requests
        self._redirect_uri = redirect_uri

    async def redirect_handler(self, authorization_url: str) -> None:
        self.authorization_urls.append(authorization_url)
        person = Person()
        hooks = {"response": [self._requests.on_response_sync]}  # logged in order with the SDK's own
        with httpx.Client(follow_redirects=False, event_hooks=hooks, timeout=30) as browser:
            landed = person.sign_in(authorization_url, stop_at=self._redirect_uri, client=browser)
        self.pages = [
            {"url": s.url.split("?")[0], "status": s.status, "text": s.text[:300]} for s in person.steps
        ]
        query = parse_qs(urlsplit(landed).query)
        if "code" not in query:
            raise RuntimeError(f"authorization refused: {landed} {query}")
        self._result = (query["code"][0], query.get("state", [None])[0])

    async def callback_handler(self) -> tuple[str, str | None]:
        assert self._result is not None, "no authorization response"
        result, self._result = self._result, None
        return result


def _claims(token: str) -> dict[str, Any]:
    """The access token's payload, read (not verified) to report who the client is."""
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))  # type: ignore[no-any-return]


async def run(url: str, client_id: str | None, redirect_uri: str) -> dict[str, Any]:
    metadata = OAuthClientMetadata(
        client_name="taskgate e2e (mcp 1.30.0)",
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    pre_registered = (
        OAuthClientInformationFull(
            client_id=client_id,
            redirect_uris=[redirect_uri],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        )
        if client_id
        else None
    )
    storage = MemoryStorage(pre_registered)
    requests = Requests()
    browser = Browser(requests, redirect_uri)
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
        timeout=60,
    )
    out: dict[str, Any] = {"client": "mcp-python-oauth", "version": version("mcp")}
    async with (
        httpx.AsyncClient(
            auth=provider, event_hooks={"response": [requests.on_response]}, timeout=60
        ) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        out["protocolVersion"] = init.protocolVersion
        exp = session.experimental
        created = await exp.call_tool_as_task(
            "slow_compute", {"seconds": 1, "label": "signed-in"}, ttl=60_000
        )
        task_id = created.task.taskId
        out["polled"] = [status.status async for status in exp.poll_task(task_id)]
        result = await exp.get_task_result(task_id, types.CallToolResult)
        out["texts"] = [c.text for c in result.content if isinstance(c, types.TextContent)]
        listed = await exp.list_tasks()
        out["listed"] = task_id in [t.taskId for t in listed.tasks]
        out["taskId"] = task_id
    out["requests"] = requests.entries
    out["clientId"] = storage.client_info.client_id if storage.client_info else None
    out["pages"] = browser.pages
    out["authorizationQueries"] = [
        {k: v[0] for k, v in parse_qs(urlsplit(u).query).items() if k not in ("state", "code_challenge")}
        for u in browser.authorization_urls
    ]
    if storage.tokens is not None:
        claims = _claims(storage.tokens.access_token)
        out["token"] = {k: claims.get(k) for k in ("iss", "sub", "aud", "scope", "client_id", "token_use")}
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--client-id", default=None, help="a pre-registered client (no dynamic registration)")
    parser.add_argument("--redirect-uri", default="http://localhost:33418/callback")
    args = parser.parse_args()
    started = time.monotonic()
    try:
        out = asyncio.run(run(args.url, args.client_id, args.redirect_uri))
    except BaseException as exc:  # report, don't crash: the test asserts on the JSON
        out = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-4000:]}
    out["elapsed"] = round(time.monotonic() - started, 2)
    print(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
