"""A development identity provider shaped like an Amazon Cognito user pool, for ``make
serve-signin`` and the tests: what the stack's authorization server signs people in with
locally. Development only (taskgate/local never ships in the layer).

What makes it Cognito-shaped, as far as the stack and an MCP client can see:

- the issuer has a path (``/<region>_<id>``), and only OpenID Connect discovery is served,
  under it; the document has no ``registration_endpoint`` and no
  ``code_challenge_methods_supported`` (PKCE works all the same);
- the endpoints live under ``/oauth2/``; redirect URIs are matched exactly, port included;
- access tokens carry ``client_id``, ``token_use: access`` and ``scope``, and no ``aud``; ID
  tokens carry ``aud`` (the client), ``token_use: id``, the ``nonce`` and ``email``;
- ``/oauth2/authorize`` shows a sign-in form; one development user (``DEV_USER`` /
  ``DEV_PASSWORD``, printed by ``make serve-signin``);
- client credentials for a machine client with a secret and the ``taskgate/tasks`` scope of a
  resource server.

Tokens are signed with joserfc (RS256, a 2048-bit key made at start; ``rotate_key()`` adds one).
"""

from __future__ import annotations

import base64
import html
import secrets
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from joserfc import jwt
from joserfc.jwk import RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

POOL_PATH = "/us-east-1_LocalPool"
DEV_USER = "dev@example.com"
DEV_PASSWORD = "taskgate-dev-password"  # development only: the local pool's one user
SIGN_IN_CLIENT = "local-sign-in"  # the stack's static client (the template's McpClient)
AGENT_CLIENT = "local-agent"  # a machine client (the template's AgentClient)
AGENT_SECRET = "local-agent-secret"
RESOURCE_SCOPE = "taskgate/tasks"


@dataclass
class DevClient:
    client_id: str
    redirect_uris: list[str] = field(default_factory=list)
    secret: str | None = None
    flows: tuple[str, ...] = ("code",)
    scopes: tuple[str, ...] = ("openid", "email", "profile", RESOURCE_SCOPE)


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    subject: str
    email: str
    scope: list[str]
    nonce: str | None
    challenge: str | None
    expires_at: float


def new_key(kid: str) -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": kid})


class DevIdentityProvider:
    def __init__(
        self,
        *,
        users: dict[str, str] | None = None,
        clients: list[DevClient] | None = None,
        access_token_seconds: int = 3600,
        make_key: Callable[[str], RSAKey] = new_key,
    ) -> None:
        # A new key is ~40 ms of CPU: the test tier, which starts many providers, passes keys
        # it made once.
        self._make_key = make_key
        self.users = users if users is not None else {DEV_USER: DEV_PASSWORD}
        self.clients = {c.client_id: c for c in clients or []}
        self.access_token_seconds = access_token_seconds
        self.base_url = ""
        self.issuer = ""
        self._keys: list[RSAKey] = []
        self._codes: dict[str, _Code] = {}
        self._refresh: dict[str, _Code] = {}
        self._lock = threading.Lock()
        self.issued: list[dict[str, Any]] = []
        self.rotate_key()

    # ---- configuration -------------------------------------------------------------------

    def at(self, base_url: str) -> DevIdentityProvider:
        """The provider, once it knows the URL it is served at."""
        self.base_url = base_url.rstrip("/")
        self.issuer = self.base_url + POOL_PATH
        return self

    def add_client(self, client: DevClient) -> DevClient:
        self.clients[client.client_id] = client
        return client

    @staticmethod
    def subject_of(username: str) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"taskgate-dev-user:{username}"))

    def rotate_key(self) -> str:
        key = self._make_key(f"dev-{len(self._keys) + 1}-{secrets.token_hex(4)}")
        self._keys.append(key)
        return str(key.kid)

    def jwks(self) -> dict[str, Any]:
        return {"keys": [dict(k.as_dict(private=False), use="sig", alg="RS256") for k in self._keys]}

    def sign(self, claims: dict[str, Any], **header: Any) -> str:
        key = self._keys[-1]
        return jwt.encode({"alg": "RS256", "kid": key.kid, **header}, claims, key, default_type=None)

    def metadata(self) -> dict[str, Any]:
        """The shape of a Cognito user pool's openid-configuration."""
        return {
            "authorization_endpoint": f"{self.base_url}/oauth2/authorize",
            "end_session_endpoint": f"{self.base_url}/logout",
            "id_token_signing_alg_values_supported": ["RS256"],
            "issuer": self.issuer,
            "jwks_uri": f"{self.issuer}/.well-known/jwks.json",
            "response_types_supported": ["code", "token"],
            "revocation_endpoint": f"{self.base_url}/oauth2/revoke",
            "scopes_supported": ["openid", "email", "phone", "profile"],
            "subject_types_supported": ["public"],
            "token_endpoint": f"{self.base_url}/oauth2/token",
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "userinfo_endpoint": f"{self.base_url}/oauth2/userInfo",
        }

    # ---- tokens ----------------------------------------------------------------------------

    def access_token(self, *, client_id: str, subject: str, scope: list[str], username: str | None) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "sub": subject,
            "iss": self.issuer,
            "client_id": client_id,
            "token_use": "access",
            "scope": " ".join(scope),
            "auth_time": now,
            "iat": now,
            "exp": now + self.access_token_seconds,
            "jti": str(uuid.uuid4()),
        }
        if username:
            claims["username"] = username
        self.issued.append(claims)
        return self.sign(claims)

    def id_token(self, *, client_id: str, subject: str, email: str, nonce: str | None) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "sub": subject,
            "aud": client_id,
            "iss": self.issuer,
            "token_use": "id",
            "email": email,
            "email_verified": True,
            "cognito:username": subject,
            "auth_time": now,
            "iat": now,
            "exp": now + self.access_token_seconds,
        }
        if nonce:
            claims["nonce"] = nonce
        return self.sign(claims)

    def client_credentials_token(self, client_id: str, scope: list[str] | None = None) -> str:
        """What a machine client gets from /oauth2/token with client credentials."""
        return self.access_token(
            client_id=client_id, subject=client_id, scope=scope or [RESOURCE_SCOPE], username=None
        )

    # ---- the app ---------------------------------------------------------------------------

    def app(self) -> Starlette:
        async def discovery(request: Request) -> Response:
            return JSONResponse(self.metadata())

        async def jwks(request: Request) -> Response:
            return JSONResponse(self.jwks())

        return Starlette(
            routes=[
                Route(f"{POOL_PATH}/.well-known/openid-configuration", discovery, methods=["GET"]),
                Route(f"{POOL_PATH}/.well-known/jwks.json", jwks, methods=["GET"]),
                Route("/oauth2/authorize", self._authorize, methods=["GET"]),
                Route("/login", self._login, methods=["POST"]),
                Route("/oauth2/token", self._token, methods=["POST"]),
            ]
        )

    def _client_for(self, params: dict[str, str]) -> tuple[DevClient | None, str | None]:
        client = self.clients.get(params.get("client_id", ""))
        if client is None:
            return None, "unknown client_id"
        if params.get("redirect_uri") not in client.redirect_uris:  # exact, port included
            return None, "redirect_mismatch"
        if params.get("response_type") != "code" or "code" not in client.flows:
            return None, "unsupported_response_type"
        return client, None

    async def _authorize(self, request: Request) -> Response:
        params = dict(request.query_params)
        client, problem = self._client_for(params)
        if client is None:
            return HTMLResponse(f"<h1>An error was encountered</h1><p>{html.escape(str(problem))}</p>", 400)
        return HTMLResponse(self._login_form(params))

    def _login_form(self, params: dict[str, str], failed: bool = False) -> str:
        hidden = "".join(
            f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
            for k, v in params.items()
        )
        note = "<p>Incorrect username or password.</p>" if failed else ""
        return (
            "<!doctype html><html><head><title>Sign in</title></head><body>"
            "<h1>Sign in (taskgate development user pool)</h1>"
            f'{note}<form method="post" action="/login">{hidden}'
            '<label>Username <input name="username" type="text" autocomplete="username"></label> '
            '<label>Password <input name="password" type="password" autocomplete="current-password"></label> '
            '<button type="submit" name="signInSubmitButton" value="Sign in">Sign in</button>'
            "</form></body></html>"
        )

    async def _login(self, request: Request) -> Response:
        form = dict(parse_qsl((await request.body()).decode()))
        username, password = form.pop("username", ""), form.pop("password", "")
        form.pop("signInSubmitButton", None)
        client, problem = self._client_for(form)
        if client is None:
            return HTMLResponse(f"<h1>An error was encountered</h1><p>{html.escape(str(problem))}</p>", 400)
        if self.users.get(username) is None or not secrets.compare_digest(self.users[username], password):
            return HTMLResponse(self._login_form(form, failed=True), 200)
        requested = form.get("scope", "openid").split()
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._codes[code] = _Code(
                client_id=client.client_id,
                redirect_uri=form["redirect_uri"],
                subject=self.subject_of(username),
                email=username,
                scope=[s for s in requested if s in client.scopes],
                nonce=form.get("nonce"),
                challenge=form.get("code_challenge"),
                expires_at=time.time() + 300,
            )
        query = {"code": code, **({"state": form["state"]} if "state" in form else {})}
        return Response(status_code=302, headers={"Location": f"{form['redirect_uri']}?{urlencode(query)}"})

    def _authenticate(self, request: Request, form: dict[str, str]) -> DevClient | None:
        header = request.headers.get("authorization", "")
        if header.lower().startswith("basic "):
            from urllib.parse import unquote

            client_id, _, secret = base64.b64decode(header[6:]).decode().partition(":")
            client_id, secret = unquote(client_id), unquote(secret)
        else:
            client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        client = self.clients.get(client_id)
        if client is None:
            return None
        if client.secret is not None and not secrets.compare_digest(client.secret, secret or ""):
            return None
        return client

    async def _token(self, request: Request) -> Response:
        form = dict(parse_qsl((await request.body()).decode()))
        client = self._authenticate(request, form)
        if client is None:
            return JSONResponse({"error": "invalid_client"}, 400)
        grant = form.get("grant_type")
        if grant == "client_credentials":
            if "client_credentials" not in client.flows:
                return JSONResponse({"error": "unauthorized_client"}, 400)
            scope = form.get("scope", " ".join(s for s in client.scopes if "/" in s)).split()
            if not scope or not set(scope) <= set(client.scopes):
                return JSONResponse({"error": "invalid_scope"}, 400)
            token = self.client_credentials_token(client.client_id, scope)
            return JSONResponse(
                {"access_token": token, "expires_in": self.access_token_seconds, "token_type": "Bearer"}
            )
        if grant != "authorization_code":
            return JSONResponse({"error": "unsupported_grant_type"}, 400)
        with self._lock:
            code = self._codes.pop(form.get("code", ""), None)
        if code is None or code.expires_at < time.time() or code.client_id != client.client_id:
            return JSONResponse({"error": "invalid_grant"}, 400)
        if form.get("redirect_uri") != code.redirect_uri:
            return JSONResponse({"error": "invalid_grant"}, 400)
        if code.challenge is not None:
            from authlib.oauth2.rfc7636 import create_s256_code_challenge

            computed = create_s256_code_challenge(form.get("code_verifier", ""))
            if not secrets.compare_digest(computed, code.challenge):
                return JSONResponse({"error": "invalid_grant"}, 400)
        answer: dict[str, Any] = {
            "access_token": self.access_token(
                client_id=client.client_id, subject=code.subject, scope=code.scope, username=code.email
            ),
            "refresh_token": secrets.token_urlsafe(32),
            "expires_in": self.access_token_seconds,
            "token_type": "Bearer",
        }
        if "openid" in code.scope:
            answer["id_token"] = self.id_token(
                client_id=client.client_id, subject=code.subject, email=code.email, nonce=code.nonce
            )
        return JSONResponse(answer)


def local_provider(
    base_url: str, callback_url: str, *, make_key: Callable[[str], RSAKey] = new_key
) -> DevIdentityProvider:
    """The development pool ``make serve-signin`` runs: the stack's sign-in client (public,
    PKCE) whose only callback is the stack's, and one machine client."""
    provider = DevIdentityProvider(
        make_key=make_key,
        clients=[
            DevClient(SIGN_IN_CLIENT, redirect_uris=[callback_url]),
            DevClient(
                AGENT_CLIENT,
                secret=AGENT_SECRET,
                flows=("client_credentials",),
                scopes=(RESOURCE_SCOPE,),
            ),
        ],
    )
    return provider.at(base_url)
