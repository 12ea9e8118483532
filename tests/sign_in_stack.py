"""The stack's sign-in in one process, without a socket: the app (its authorization server
and /mcp, over whatever MCP server the test gives), the Cognito-shaped development identity
provider on an origin of its own, and a person at a browser (tests/sign_in_user.py) reaching
both through one in-memory transport. The app's own calls to the provider (discovery, keys,
the code exchange) take the same way. The unit tier runs it on the fakes, the integration
tier on moto.

``streaming=True`` adds the streaming endpoint (StreamingApi) on an origin of its own, as
StreamFunction serves it behind the REST API's stage ``/stream``: the same app with
OAUTH_RESOURCE its own /mcp, reached through ``Stage``, which hands it the path below the stage
as API Gateway does.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from starlette.testclient import TestClient
from starlette.types import ASGIApp, Receive, Scope, Send

from taskgate.auth.build import SignInPorts, build_sign_in
from taskgate.auth.resource import SignIn
from taskgate.auth.signing import KeySource, ephemeral_source
from taskgate.auth.state import SignInStore
from taskgate.config import Settings
from taskgate.http_app import create_app
from taskgate.local.dev_idp import (
    AGENT_CLIENT,
    AGENT_SECRET,
    SIGN_IN_CLIENT,
    DevIdentityProvider,
    local_provider,
)
from taskgate.protocol.server import McpServer
from taskgate.protocol.wire.transport_security import TransportSecurity
from tests.mcp_client import envelope, headers_for
from tests.oauth_server import dev_key
from tests.sign_in_user import Person

STACK = "https://taskgate.example"
RESOURCE = f"{STACK}/mcp"
STREAM_HOST = "stream.taskgate.example"
STREAM = f"https://{STREAM_HOST}/stream"
STREAM_RESOURCE = f"{STREAM}/mcp"
IDP = "https://idp.example"
CLIENT_REDIRECT = "http://127.0.0.1:33418/callback"
SCOPE = "taskgate/tasks"


def sign_in_env(**overrides: str) -> dict[str, str]:
    """What the template gives ApiFunction with the stack's own user pool, here the
    development provider's."""
    return {
        "TASK_TABLE": "tasks",
        "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:taskgate-task",
        "AUTH_MODE": "USER,CLIENT,IAM",
        "PUBLIC_URL": STACK,
        "OAUTH_ISSUER": f"{IDP}/us-east-1_LocalPool",
        "OAUTH_UPSTREAM_CLIENT_ID": SIGN_IN_CLIENT,
        "OAUTH_CLIENT_IDS": AGENT_CLIENT,
        "OAUTH_TOKEN_USE": "access",
        **overrides,
    }


def stream_env(env: Mapping[str, str]) -> dict[str, str]:
    """StreamFunction's settings beside ApiFunction's ``env`` (template.yaml): its front, and
    its own /mcp as the resource it serves."""
    return {
        **env,
        "STREAM_PUBLIC_URL": STREAM,
        "OAUTH_RESOURCE": STREAM_RESOURCE,
        "FRONT_STREAMING": "true",
        "FRONT_TIMEOUT_SECONDS": "900",
    }


class Stage:
    """A REST API stage in front of an app: the app sees the path below the stage; nothing
    outside the stage reaches it (API Gateway answers 403 there)."""

    def __init__(self, app: ASGIApp, stage: str) -> None:
        self._app = app
        self._prefix = stage.rstrip("/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith(self._prefix + "/"):
            from starlette.responses import JSONResponse

            await JSONResponse({"message": "Forbidden"}, 403)(scope, receive, send)
            return
        inner = path.removeprefix(self._prefix)
        await self._app({**scope, "path": inner, "raw_path": inner.encode()}, receive, send)


class Clock:
    """Starts at the real time: the development provider's tokens are stamped with it."""

    def __init__(self, start: float | None = None) -> None:
        self.now = time.time() if start is None else start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class ByHost:
    """One ASGI app per origin, as separate servers would be."""

    def __init__(self, apps: Mapping[str, ASGIApp]) -> None:
        self._apps = dict(apps)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        host = dict(scope.get("headers") or []).get(b"host", b"").decode()
        await self._apps[host](scope, receive, send)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


@dataclass
class Authorization:
    client_id: str
    redirect_uri: str
    verifier: str
    url: str
    resource: str = RESOURCE
    person: Person = field(default_factory=Person)
    landed: str = ""

    @property
    def params(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(urlsplit(self.landed).query).items()}


@dataclass
class SignInStack:
    settings: Settings
    sign_in: SignIn
    idp: DevIdentityProvider
    http: TestClient
    calls_to_idp: list[str]
    keys: KeySource
    app: ASGIApp
    stream_settings: Settings | None = None
    stream_sign_in: SignIn | None = None
    stream_app: ASGIApp | None = None  # as the function has it: below the stage

    # ---- what a client does ------------------------------------------------------------

    def register(self, redirect_uris: list[str] | None = None, **metadata: Any) -> str:
        body = {
            "client_name": "test client",
            "redirect_uris": redirect_uris or [CLIENT_REDIRECT],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            **metadata,
        }
        reply = self.http.post(f"{STACK}/oauth/register", json=body)
        assert reply.status_code == 201, reply.text
        return str(reply.json()["client_id"])

    def authorization(
        self, client_id: str, redirect_uri: str = CLIENT_REDIRECT, **params: str
    ) -> Authorization:
        verifier, challenge = pkce()
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "state": secrets.token_urlsafe(8),
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "scope": SCOPE,
            "resource": RESOURCE,
            **params,
        }
        query = {k: v for k, v in query.items() if v != ""}
        url = f"{STACK}/oauth/authorize?{urlencode(query)}"
        return Authorization(client_id, redirect_uri, verifier, url, query.get("resource", RESOURCE))

    def sign_in_as_person(self, authorization: Authorization, **person: Any) -> Authorization:
        authorization.person = Person(**person)
        authorization.landed = authorization.person.sign_in(
            authorization.url, stop_at=authorization.redirect_uri.split("?")[0], client=self.http
        )
        return authorization

    def exchange(self, authorization: Authorization, **overrides: str) -> Any:
        form = {
            "grant_type": "authorization_code",
            "code": authorization.params.get("code", ""),
            "redirect_uri": authorization.redirect_uri,
            "client_id": authorization.client_id,
            "code_verifier": authorization.verifier,
            "resource": authorization.resource,
            **overrides,
        }
        return self.http.post(f"{STACK}/oauth/token", data={k: v for k, v in form.items() if v != ""})

    def tokens(self, client_id: str | None = None, resource: str = RESOURCE) -> dict[str, Any]:
        """A whole sign-in of the development user with a new (or given) client, for one of
        the stack's endpoints (``resource``): its tokens."""
        authorization = self.sign_in_as_person(
            self.authorization(client_id or self.register(), resource=resource)
        )
        reply = self.exchange(authorization)
        assert reply.status_code == 200, reply.text
        return dict(reply.json())

    def agent_token(self) -> str:
        """A machine client's access token: client credentials at the identity provider."""
        reply = self.http.post(
            f"{IDP}/oauth2/token",
            data={"grant_type": "client_credentials", "scope": SCOPE},
            auth=(AGENT_CLIENT, AGENT_SECRET),
        )
        assert reply.status_code == 200, reply.text
        return str(reply.json()["access_token"])

    def mcp(
        self, token: str | None, method: str, params: dict[str, Any], path: str = "/mcp", at: str = STACK
    ) -> Any:
        """A JSON-RPC request to ``at`` (the HTTP API's origin, or STREAM)."""
        headers = headers_for(method, params)
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        return self.http.post(f"{at}{path}", content=json.dumps(envelope(method, params, 1)), headers=headers)


def build_stack(
    server: Callable[[], McpServer],
    store: SignInStore,
    *,
    clock: Clock | None = None,
    env: Mapping[str, str] | None = None,
    documents_fetch: Callable[[str], tuple[bytes, int | None]] | None = None,
    wrap: Callable[[ASGIApp], ASGIApp] = lambda app: app,
    keys: KeySource | None = None,
    streaming: bool = False,
    stream_server: Callable[[], McpServer] | None = None,
    client_keys: str = "",
) -> SignInStack:
    """``client_keys``: OAUTH_CLIENT_KEYS (machine clients with a key)."""
    clock = clock or Clock()
    keys = keys or ephemeral_source()
    env = dict(env or sign_in_env())
    if client_keys:
        env["OAUTH_CLIENT_KEYS"] = client_keys
    if streaming:
        env["STREAM_PUBLIC_URL"] = STREAM  # ApiFunction's: the authorization server's second resource
    settings = Settings.from_env(env)
    idp = local_provider(IDP, f"{STACK}/oauth/callback", make_key=dev_key)
    idp_http = TestClient(idp.app(), base_url=IDP)
    calls_to_idp: list[str] = []

    def transport(
        method: str, url: str, form: Mapping[str, str] | None, headers: Mapping[str, str], timeout: float
    ) -> tuple[int, bytes]:
        calls_to_idp.append(f"{method} {urlsplit(url).path}")
        reply = idp_http.request(
            method, url, data=dict(form) if form is not None else None, headers=dict(headers)
        )
        return reply.status_code, reply.content

    ports = SignInPorts(
        store=lambda: store,
        signing_keys=keys,
        transport=transport,
        documents_fetch=documents_fetch,
        clock=clock,
        monotonic=clock,
    )
    sign_in = build_sign_in(settings.sign_in, ports)
    assert sign_in is not None
    app = create_app(
        server,
        anonymous_owner="anonymous",
        max_body_bytes=1_048_576,
        security=TransportSecurity(("taskgate.example",), (STACK,)),
        sign_in=sign_in,
    )
    hosts = {"taskgate.example": wrap(app), "idp.example": idp.app()}
    stream_settings = stream_sign_in = stream_app = None
    if streaming:
        stream_settings = Settings.from_env(stream_env(env))
        stream_sign_in = build_sign_in(stream_settings.sign_in, ports)
        stream_app = create_app(
            stream_server or server,
            anonymous_owner="anonymous",
            max_body_bytes=1_048_576,
            security=TransportSecurity(stream_settings.served_hosts, ()),
            sign_in=stream_sign_in,
        )
        hosts[STREAM_HOST] = Stage(wrap(stream_app), "/stream")
    http = TestClient(ByHost(hosts), base_url=STACK)
    return SignInStack(
        settings, sign_in, idp, http, calls_to_idp, keys, app, stream_settings, stream_sign_in, stream_app
    )
