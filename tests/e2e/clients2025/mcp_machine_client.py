"""Machine callers signing in by the released Python SDK's own client-credentials flow
(``mcp==1.30.0``: ``ClientCredentialsOAuthProvider`` with client_secret_basic and _post,
``PrivateKeyJWTOAuthProvider`` with an SDK-signed assertion), each running a task; several
clients in one process, to keep the end-to-end tier cheap.

Run with the venv ``setup.sh`` makes (``.tools/clients2025/py``): ``python
mcp_machine_client.py CASES.json``, where the file holds ``{"url": …, "cases": [...]}``; each case
is ``{"name", "kind": "basic" | "post" | "key", "client_id", "secret"?, "key_pem"?, "issuer"?,
"register"?: "<origin>" (register a client first and use its credentials), "replay"?: true}``.
Prints one JSON line: per case what the SDK reached (the token endpoint it posted to, the
token's claims), the task's outcome, or the error it stopped with; with ``replay``, what the
token endpoint answered to the same assertion sent again. Exits 0 whenever it could report.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import time
import traceback
import warnings
from importlib.metadata import version
from typing import Any

import httpx
from mcp import ClientSession, types
from mcp.client.auth import TokenStorage
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

warnings.simplefilter("ignore", DeprecationWarning)  # the 2025-11-25 tasks client; issuer= omitted


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


def _claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))  # type: ignore[no-any-return]


async def _register(origin: str) -> tuple[str, str]:
    """A client that registers itself (RFC 7591), confidential: its id and secret."""
    async with httpx.AsyncClient(timeout=30) as http:
        reply = await http.post(
            f"{origin}/oauth/register",
            json={"redirect_uris": ["http://127.0.0.1:9/cb"], "client_name": "self-registered"},
        )
    body = reply.json()
    return body["client_id"], body["client_secret"]


async def run_case(url: str, case: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": case["name"]}
    storage = MemoryStorage()
    assertions: list[str] = []
    client_id = case.get("client_id", "")
    secret = case.get("secret", "")
    if case.get("register"):
        client_id, secret = await _register(case["register"])
        out["registeredClientId"] = client_id
    provider: httpx.Auth
    if case["kind"] == "key":
        signed = SignedJWTParameters(issuer=client_id, subject=client_id, signing_key=case["key_pem"])
        make = signed.create_assertion_provider()

        async def recorded(audience: str) -> str:
            assertion = await make(audience)
            assertions.append(assertion)
            return assertion

        provider = PrivateKeyJWTOAuthProvider(
            server_url=url,
            storage=storage,
            client_id=client_id,
            assertion_provider=recorded,
            issuer=case.get("issuer"),
        )
    else:
        provider = ClientCredentialsOAuthProvider(
            server_url=url,
            storage=storage,
            client_id=client_id,
            client_secret=secret,
            token_endpoint_auth_method=f"client_secret_{case['kind']}",  # type: ignore[arg-type]
            issuer=case.get("issuer"),
        )
    token_posts: list[dict[str, Any]] = []

    async def on_response(response: httpx.Response) -> None:
        request = response.request
        if request.method == "POST" and not request.url.path.endswith("/mcp"):
            await response.aread()
            token_posts.append(
                {
                    "url": str(request.url),
                    "status": response.status_code,
                    "form": dict(httpx.QueryParams(request.content.decode())),
                    "body": response.text[:300],
                }
            )

    try:
        async with (
            httpx.AsyncClient(auth=provider, event_hooks={"response": [on_response]}, timeout=60) as http,
            streamable_http_client(url, http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            exp = session.experimental
            created = await exp.call_tool_as_task(
                "slow_compute", {"seconds": 0, "label": case["name"]}, ttl=60_000
            )
            task_id = created.task.taskId
            out["polled"] = [status.status async for status in exp.poll_task(task_id)]
            result = await exp.get_task_result(task_id, types.CallToolResult)
            out["texts"] = [c.text for c in result.content if isinstance(c, types.TextContent)]
            out["taskId"] = task_id
    except BaseException as exc:  # reported: a refusal is what some cases expect
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]  # the SDK's task groups wrap the one error
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["tokenPosts"] = [{k: v for k, v in p.items() if k != "form"} for p in token_posts]
    out["tokenForms"] = [
        {
            k: v
            for k, v in p["form"].items()
            if k in ("grant_type", "resource", "scope", "client_assertion_type")
        }
        for p in token_posts
    ]
    if storage.tokens is not None:
        claims = _claims(storage.tokens.access_token)
        out["token"] = {
            k: claims.get(k) for k in ("iss", "sub", "aud", "scope", "client_id", "idp", "token_use")
        }
    if case.get("replay") and assertions and token_posts:
        # The same assertion again, as someone who saw it would send it.
        form = {**token_posts[-1]["form"], "client_assertion": assertions[-1]}
        async with httpx.AsyncClient(timeout=30) as http:
            again = await http.post(token_posts[-1]["url"], data=form)
        out["replay"] = {"status": again.status_code, "body": again.json()}
    return out


async def run(config: dict[str, Any]) -> dict[str, Any]:
    results = [await run_case(config["url"], case) for case in config["cases"]]
    return {"client": "mcp-python-machine", "version": version("mcp"), "cases": results}


def main() -> int:
    started = time.monotonic()
    try:
        with open(sys.argv[1]) as file:
            out = asyncio.run(run(json.load(file)))
    except BaseException as exc:
        out = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-4000:]}
    out["elapsed"] = round(time.monotonic() - started, 2)
    print(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
