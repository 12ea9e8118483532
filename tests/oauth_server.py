"""A small OAuth 2.1 authorization server for tests: discovery, registration, PKCE, JWTs.

(From the sign-in research in /work/explore/oauth, kept for the tests of taskgate/auth: the
unit tier calls it in-process, tests/e2e/test_oauth.py serves it on a loopback port for a
released MCP client.)

Not for production. It auto-approves every authorization request as one configured user
(``subject``), so a test can drive the whole authorization-code flow over HTTP without a
browser. What it implements, and checks:

- RFC 8414 metadata at ``/.well-known/oauth-authorization-server{path}`` and OpenID Connect
  discovery at ``/.well-known/openid-configuration{path}`` and ``{path}/.well-known/openid-configuration``
  (``{path}`` is the issuer's path, empty by default);
- RFC 7591 dynamic client registration at ``/register`` (public clients, ``token_endpoint_auth_method
  none``, or confidential ones with a generated secret), plus pre-registered clients;
- ``/authorize``: ``response_type=code``, a known client, an exactly registered ``redirect_uri``,
  PKCE ``S256`` required, scopes within ``scopes_supported``, an RFC 8707 ``resource`` (absolute
  URI, no fragment; optionally from an allow-list); redirects with ``code``, ``state`` and ``iss``;
- ``/token``: ``authorization_code`` (one-time code, 60 s, client and redirect_uri bound, PKCE
  verified, ``resource`` consistent with the authorization request) and ``refresh_token``
  (rotated on every use; scope may only narrow), client authentication ``none``,
  ``client_secret_basic`` or ``client_secret_post``;
- RS256 JWT access tokens (RFC 9068 shape: ``typ: at+jwt``; ``iss sub aud exp iat nbf jti
  scope client_id``; ``aud`` is the requested resource), signed with a 2048-bit key generated at
  start (``rotate_key()`` adds another), JWKS at ``{path}/.well-known/jwks.json``.

``cognito_style=True`` imitates an Amazon Cognito user pool instead, as far as an MCP client can
see: the issuer has a path (``/<region>_<id>``), only OIDC discovery at the path-appended URL is
served (no RFC 8414 document), the discovery document has no ``registration_endpoint`` and no
``code_challenge_methods_supported``, endpoints live under ``/oauth2/``, ``resource`` is ignored,
and access tokens carry no ``aud`` but ``client_id`` and ``token_use: "access"``.

    auth_server = LocalAuthorizationServer(subject="alice", scopes_supported=["tasks"])
    with serve_in_thread(auth_server.app_for) as issuer_base:
        ...
    auth_server.app_for("https://as.example")   # in-process (TestClient), no socket
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

# Making an RSA key takes about 40 ms, and the unit tier starts well over a hundred of these
# servers (5 s of it): a run makes at most this many and hands them round, so servers made one
# after another (a test's two issuers, a rotation) never share one.
_KEY_POOL = 16
_keys_made: list[rsa.RSAPrivateKey] = []
_keys_handed = 0
_keys_lock = threading.Lock()


def signing_key() -> rsa.RSAPrivateKey:
    global _keys_handed
    with _keys_lock:
        index = _keys_handed % _KEY_POOL
        _keys_handed += 1
        if index == len(_keys_made):
            _keys_made.append(rsa.generate_private_key(public_exponent=65537, key_size=2048))
        return _keys_made[index]


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


PKCE_VERIFIER = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")
CODE_TTL = 60


@dataclass
class RegisteredClient:
    client_id: str
    redirect_uris: list[str]
    client_secret: str | None = None  # None: a public client (token_endpoint_auth_method "none")
    token_endpoint_auth_method: str = "none"
    grant_types: list[str] = field(default_factory=lambda: ["authorization_code", "refresh_token"])
    client_name: str | None = None
    scope: str | None = None

    def registration_response(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "client_id": self.client_id,
            "client_id_issued_at": int(time.time()),
            "redirect_uris": self.redirect_uris,
            "token_endpoint_auth_method": self.token_endpoint_auth_method,
            "grant_types": self.grant_types,
            "response_types": ["code"],
        }
        if self.client_secret is not None:
            body["client_secret"] = self.client_secret
            body["client_secret_expires_at"] = 0
        if self.client_name:
            body["client_name"] = self.client_name
        if self.scope:
            body["scope"] = self.scope
        return body


@dataclass
class _Grant:
    """What an authorization code or a refresh token stands for."""

    client_id: str
    subject: str
    scope: list[str]
    resource: str | None
    expires_at: float
    redirect_uri: str | None = None
    code_challenge: str | None = None


class OAuthError(Exception):
    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error, self.description, self.status = error, description, status

    def response(self) -> JSONResponse:
        headers = {"Cache-Control": "no-store"}
        if self.status == 401:
            headers["WWW-Authenticate"] = 'Basic realm="token"'
        return JSONResponse(
            {"error": self.error, "error_description": self.description}, self.status, headers
        )


class LocalAuthorizationServer:
    def __init__(
        self,
        *,
        subject: str = "alice",
        scopes_supported: list[str] | None = None,
        access_token_ttl: int = 300,
        refresh_token_ttl: int = 3600,
        clients: list[RegisteredClient] | None = None,
        allow_dynamic_registration: bool = True,
        allowed_resources: list[str] | None = None,
        issuer_path: str = "",
        cognito_style: bool = False,
    ) -> None:
        self.subject = subject
        self.scopes_supported = scopes_supported or ["tasks"]
        self.access_token_ttl = access_token_ttl
        self.refresh_token_ttl = refresh_token_ttl
        self.clients = {client.client_id: client for client in clients or []}
        self.cognito_style = cognito_style
        self.allow_dynamic_registration = allow_dynamic_registration and not cognito_style
        self.allowed_resources = allowed_resources
        self.issuer_path = issuer_path or ("/us-east-1_LocalPool" if cognito_style else "")
        self.issuer = ""  # set by app_for once the port is known
        self.base_url = ""
        self._codes: dict[str, _Grant] = {}
        self._refresh_tokens: dict[str, _Grant] = {}
        self._keys: list[tuple[str, rsa.RSAPrivateKey]] = []
        self._lock = threading.Lock()
        self.issued_tokens: list[dict[str, Any]] = []  # claims of every access token issued
        self.rotate_key()

    # ---- keys and tokens -------------------------------------------------------------

    def rotate_key(self) -> str:
        """Start signing with a new key (the old ones stay in the JWKS). Returns its kid."""
        kid = f"local-{len(self._keys) + 1}-{secrets.token_hex(4)}"
        self._keys.append((kid, signing_key()))
        return kid

    def transport(self, method: str, url: str, form: Any, headers: Any, timeout: float) -> tuple[int, bytes]:
        """What an HTTP request to this server answers, without a socket (the ``transport``
        of taskgate/auth's outbound calls, in the unit tier)."""
        from starlette.testclient import TestClient

        with TestClient(self.app_for(self.base_url or "https://as.example")) as client:
            response = client.request(method, url, data=form, headers=headers)
        return response.status_code, response.content

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid, private_key in self._keys:
            numbers = private_key.public_key().public_numbers()
            keys.append(
                {
                    "kty": "RSA",
                    "use": "sig",
                    "alg": "RS256",
                    "kid": kid,
                    "n": b64url_encode(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
                    "e": b64url_encode(numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big")),
                }
            )
        return {"keys": keys}

    def sign(self, claims: dict[str, Any], *, header: dict[str, Any] | None = None) -> str:
        """A compact JWS (RS256) with the current key; ``header`` entries override the defaults."""
        kid, private_key = self._keys[-1]
        jose_header = {"alg": "RS256", "typ": "JWT" if self.cognito_style else "at+jwt", "kid": kid}
        jose_header.update(header or {})
        signing_input = ".".join(
            b64url_encode(json.dumps(part, separators=(",", ":")).encode()) for part in (jose_header, claims)
        )
        signature = private_key.sign(signing_input.encode("ascii"), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing_input}.{b64url_encode(signature)}"

    def access_token_claims(
        self, *, subject: str, client_id: str, scope: list[str], resource: str | None
    ) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": subject,
            "client_id": client_id,
            "scope": " ".join(scope),
            "iat": now,
            "exp": now + self.access_token_ttl,
            "jti": secrets.token_hex(16),
        }
        if self.cognito_style:  # what a Cognito user-pool access token carries instead of aud
            claims.update(token_use="access", auth_time=now, username=subject)
        else:
            claims["nbf"] = now
            if resource is not None:
                claims["aud"] = resource
        return claims

    def mint_token(self, **overrides: Any) -> str:
        """A token as this server would issue it to ``subject``, with claims overridden
        (``None`` removes a claim): for negative tests at a resource server."""
        claims = self.access_token_claims(
            subject=self.subject, client_id="test-client", scope=list(self.scopes_supported), resource=None
        )
        for name, value in overrides.items():
            if value is None:
                claims.pop(name, None)
            else:
                claims[name] = value
        return self.sign(claims)

    # ---- metadata --------------------------------------------------------------------

    def _endpoint(self, name: str) -> str:
        prefix = "/oauth2" if self.cognito_style else ""
        return f"{self.base_url}{prefix}/{name}"

    @property
    def jwks_uri(self) -> str:
        return f"{self.issuer}/.well-known/jwks.json"

    def metadata(self) -> dict[str, Any]:
        """RFC 8414 authorization server metadata (also served as OIDC discovery)."""
        if self.cognito_style:
            # The shape of a Cognito user pool's openid-configuration: no registration_endpoint,
            # no code_challenge_methods_supported, only the standard OIDC scopes listed.
            return {
                "authorization_endpoint": self._endpoint("authorize"),
                "id_token_signing_alg_values_supported": ["RS256"],
                "issuer": self.issuer,
                "jwks_uri": self.jwks_uri,
                "response_types_supported": ["code", "token"],
                "scopes_supported": ["openid", "email", "phone", "profile"],
                "subject_types_supported": ["public"],
                "token_endpoint": self._endpoint("token"),
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
                "userinfo_endpoint": self._endpoint("userInfo"),
            }
        document: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": self._endpoint("authorize"),
            "token_endpoint": self._endpoint("token"),
            "jwks_uri": self.jwks_uri,
            "scopes_supported": self.scopes_supported,
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
        }
        if self.allow_dynamic_registration:
            document["registration_endpoint"] = self._endpoint("register")
        return document

    # ---- the app ---------------------------------------------------------------------

    def app_for(self, base_url: str) -> ASGIApp:
        """The Starlette app, once the server knows the URL it is reachable at."""
        self.base_url = base_url.rstrip("/")
        self.issuer = self.base_url + self.issuer_path
        path = self.issuer_path

        async def metadata(request: Request) -> Response:
            return JSONResponse(self.metadata())

        async def jwks(request: Request) -> Response:
            return JSONResponse(self.jwks(), headers={"Cache-Control": "public, max-age=300"})

        routes = [
            Route(f"{path}/.well-known/openid-configuration", metadata, methods=["GET"]),
            Route(f"{path}/.well-known/jwks.json", jwks, methods=["GET"]),
        ]
        if not self.cognito_style:
            routes += [
                Route(f"/.well-known/oauth-authorization-server{path}", metadata, methods=["GET"]),
                Route(f"/.well-known/openid-configuration{path}", metadata, methods=["GET"]),
            ]
        prefix = "/oauth2" if self.cognito_style else ""
        routes += [
            Route(f"{prefix}/authorize", self._authorize, methods=["GET"]),
            Route(f"{prefix}/token", self._token, methods=["POST"]),
        ]
        if self.allow_dynamic_registration:
            routes.append(Route(f"{prefix}/register", self._register, methods=["POST"]))
        return Starlette(routes=routes)

    # ---- RFC 7591 registration -------------------------------------------------------

    async def _register(self, request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return OAuthError("invalid_client_metadata", "body is not JSON").response()
        if not isinstance(body, dict):
            return OAuthError("invalid_client_metadata", "body is not a JSON object").response()
        redirect_uris = body.get("redirect_uris")
        if (
            not isinstance(redirect_uris, list)
            or not redirect_uris
            or not all(isinstance(uri, str) and _acceptable_redirect_uri(uri) for uri in redirect_uris)
        ):
            return OAuthError("invalid_redirect_uri", "redirect_uris: https or loopback http URLs").response()
        method = body.get("token_endpoint_auth_method", "client_secret_basic")  # RFC 7591 §2 default
        if method not in ("none", "client_secret_basic", "client_secret_post"):
            return OAuthError(
                "invalid_client_metadata", f"unsupported token_endpoint_auth_method {method}"
            ).response()
        grant_types = body.get("grant_types", ["authorization_code"])
        if not isinstance(grant_types, list) or not set(grant_types) <= {
            "authorization_code",
            "refresh_token",
        }:
            return OAuthError("invalid_client_metadata", "unsupported grant_types").response()
        client = RegisteredClient(
            client_id=f"dyn-{secrets.token_urlsafe(12)}",
            redirect_uris=redirect_uris,
            client_secret=None if method == "none" else secrets.token_urlsafe(32),
            token_endpoint_auth_method=method,
            grant_types=grant_types,
            client_name=body.get("client_name") if isinstance(body.get("client_name"), str) else None,
            scope=body.get("scope") if isinstance(body.get("scope"), str) else None,
        )
        with self._lock:
            self.clients[client.client_id] = client
        return JSONResponse(client.registration_response(), 201, {"Cache-Control": "no-store"})

    # ---- /authorize ------------------------------------------------------------------

    async def _authorize(self, request: Request) -> Response:
        params = request.query_params
        client = self.clients.get(params.get("client_id", ""))
        redirect_uri = params.get("redirect_uri", "")
        # Errors before the client and redirect_uri are known good must not redirect (RFC 6749 §4.1.2.1).
        if client is None:
            return OAuthError("invalid_client", "unknown client_id").response()
        if redirect_uri not in client.redirect_uris:
            return OAuthError("invalid_request", "redirect_uri is not registered for this client").response()
        state = params.get("state")

        def fail(error: str, description: str) -> Response:
            query = {"error": error, "error_description": description, "iss": self.issuer}
            if state is not None:
                query["state"] = state
            return RedirectResponse(_with_query(redirect_uri, query), 302)

        if params.get("response_type") != "code":
            return fail("unsupported_response_type", "only response_type=code")
        if params.get("code_challenge_method") != "S256" or not params.get("code_challenge"):
            return fail("invalid_request", "PKCE with code_challenge_method=S256 is required")
        requested = params.get("scope", "").split()
        if self.cognito_style:
            scope = requested  # Cognito checks the app client's allowed scopes; here all are allowed
        else:
            if not set(requested) <= set(self.scopes_supported):
                return fail(
                    "invalid_scope",
                    f"unknown scope(s): {' '.join(set(requested) - set(self.scopes_supported))}",
                )
            scope = requested or list(self.scopes_supported)
        resources = params.getlist("resource")
        resource: str | None = None
        if resources and not self.cognito_style:  # Cognito-style: the parameter is ignored
            if len(resources) > 1:
                return fail("invalid_target", "one resource per request here")
            resource = resources[0]
            if not _valid_resource(resource) or (
                self.allowed_resources is not None and resource not in self.allowed_resources
            ):
                return fail("invalid_target", f"resource {resource!r} is not acceptable")
        code = secrets.token_urlsafe(32)
        with self._lock:
            self._codes[code] = _Grant(
                client_id=client.client_id,
                subject=self.subject,  # auto-approved as the configured user
                scope=scope,
                resource=resource,
                expires_at=time.time() + CODE_TTL,
                redirect_uri=redirect_uri,
                code_challenge=params["code_challenge"],
            )
        query = {"code": code, "iss": self.issuer}
        if state is not None:
            query["state"] = state
        return RedirectResponse(_with_query(redirect_uri, query), 302)

    # ---- /token ----------------------------------------------------------------------

    async def _token(self, request: Request) -> Response:
        # An urlencoded body, parsed here (Starlette's form parser needs python-multipart).
        data = {key: values[0] for key, values in parse_qs((await request.body()).decode()).items()}
        try:
            client = self._authenticate_client(request, data)
            grant_type = data.get("grant_type")
            if grant_type == "client_credentials":
                return self._client_credentials(client, data)
            if grant_type == "authorization_code":
                grant = self._redeem_code(client, data)
            elif grant_type == "refresh_token":
                grant = self._redeem_refresh_token(client, data)
            else:
                raise OAuthError("unsupported_grant_type", f"grant_type {grant_type!r}")
        except OAuthError as error:
            return error.response()
        claims = self.access_token_claims(
            subject=grant.subject, client_id=client.client_id, scope=grant.scope, resource=grant.resource
        )
        refresh_token = secrets.token_urlsafe(32)
        with self._lock:
            self.issued_tokens.append(claims)
            self._refresh_tokens[refresh_token] = _Grant(
                client_id=client.client_id,
                subject=grant.subject,
                scope=grant.scope,
                resource=grant.resource,
                expires_at=time.time() + self.refresh_token_ttl,
            )
        body = {
            "access_token": self.sign(claims),
            "token_type": "Bearer",
            "expires_in": self.access_token_ttl,
            "scope": " ".join(grant.scope),
            "refresh_token": refresh_token,
        }
        return JSONResponse(body, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})

    def _client_credentials(self, client: RegisteredClient, data: dict[str, str]) -> Response:
        """RFC 6749 §4.4, as Cognito's token endpoint serves an app client with a secret: the
        client is the subject, and no refresh token (§4.4.3)."""
        if client.client_secret is None or "client_credentials" not in client.grant_types:
            raise OAuthError("unauthorized_client", "client_credentials is not allowed for this client")
        asked = data.get("scope", "").split()
        scope = [s for s in asked if s in self.scopes_supported] if asked else list(self.scopes_supported)
        if asked and len(scope) != len(asked):
            raise OAuthError("invalid_scope", "unknown scope")
        claims = self.access_token_claims(
            subject=client.client_id, client_id=client.client_id, scope=scope, resource=data.get("resource")
        )
        with self._lock:
            self.issued_tokens.append(claims)
        body = {
            "access_token": self.sign(claims),
            "token_type": "Bearer",
            "expires_in": self.access_token_ttl,
        }
        return JSONResponse(body, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})

    def _authenticate_client(self, request: Request, data: dict[str, str]) -> RegisteredClient:
        client_id, secret = data.get("client_id"), data.get("client_secret")
        basic = request.headers.get("authorization", "")
        if basic.lower().startswith("basic "):
            try:
                decoded = base64.b64decode(basic[6:].strip()).decode()
                raw_id, _, raw_secret = decoded.partition(":")
                client_id, secret = unquote(raw_id), unquote(raw_secret)
            except (ValueError, UnicodeDecodeError) as exc:
                raise OAuthError("invalid_client", "bad Basic credentials", 401) from exc
        client = self.clients.get(client_id or "")
        if client is None:
            raise OAuthError("invalid_client", "unknown client", 401)
        if client.client_secret is not None and (
            secret is None or not secrets.compare_digest(secret, client.client_secret)
        ):
            raise OAuthError("invalid_client", "client authentication failed", 401)
        return client

    def _redeem_code(self, client: RegisteredClient, data: dict[str, str]) -> _Grant:
        with self._lock:
            grant = self._codes.pop(data.get("code", ""), None)  # one use only
        if grant is None or grant.expires_at < time.time() or grant.client_id != client.client_id:
            raise OAuthError("invalid_grant", "unknown, expired or used authorization code")
        if data.get("redirect_uri") != grant.redirect_uri:
            raise OAuthError("invalid_grant", "redirect_uri differs from the authorization request")
        verifier = data.get("code_verifier", "")
        if not PKCE_VERIFIER.match(verifier):
            raise OAuthError("invalid_grant", "code_verifier missing or malformed")
        challenge = b64url_encode(hashlib.sha256(verifier.encode("ascii")).digest())
        if not secrets.compare_digest(challenge, grant.code_challenge or ""):
            raise OAuthError("invalid_grant", "PKCE verification failed")
        grant.resource = self._token_resource(grant.resource, data)
        return grant

    def _redeem_refresh_token(self, client: RegisteredClient, data: dict[str, str]) -> _Grant:
        with self._lock:
            grant = self._refresh_tokens.pop(data.get("refresh_token", ""), None)  # rotated: one use
        if grant is None or grant.expires_at < time.time() or grant.client_id != client.client_id:
            raise OAuthError("invalid_grant", "unknown, expired or used refresh token")
        if "scope" in data:
            narrowed = data["scope"].split()
            if not set(narrowed) <= set(grant.scope):
                raise OAuthError("invalid_scope", "a refresh may only narrow the scope")
            grant.scope = narrowed
        grant.resource = self._token_resource(grant.resource, data)
        return grant

    def _token_resource(self, granted: str | None, data: dict[str, str]) -> str | None:
        requested = data.get("resource")
        if requested is None or self.cognito_style:
            return granted
        if granted is not None and requested != granted:
            raise OAuthError("invalid_target", "resource differs from the one authorized")
        if not _valid_resource(requested):
            raise OAuthError("invalid_target", f"resource {requested!r} is not acceptable")
        return requested


def _valid_resource(value: str) -> bool:
    """RFC 8707 §2: an absolute URI without a fragment."""
    parts = urlsplit(value)
    return bool(parts.scheme and parts.netloc) and not parts.fragment and "#" not in value


def _acceptable_redirect_uri(uri: str) -> bool:
    parts = urlsplit(uri)
    if parts.fragment or not parts.netloc:
        return False
    return parts.scheme == "https" or (
        parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")
    )


def _with_query(uri: str, params: dict[str, str]) -> str:
    return f"{uri}{'&' if urlsplit(uri).query else '?'}{urlencode(params)}"


@contextmanager
def serve_in_thread(make_app: Callable[[str], ASGIApp], host: str = "127.0.0.1") -> Iterator[str]:
    """uvicorn on a free loopback port in a daemon thread; the app is built once the URL is
    known (an authorization server must know its own issuer)."""
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    base_url = f"http://{host}:{sock.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(make_app(base_url), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"server at {base_url} did not start")
        time.sleep(0.01)
    try:
        yield base_url
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def dev_key(kid: str) -> Any:
    """A key for taskgate's development identity provider (local/dev_idp.py), from the pool."""
    from joserfc.jwk import RSAKey

    # The key object itself: a PEM round trip would check the key again, ~30 ms each.
    return RSAKey.import_key(signing_key(), parameters={"kid": kid})
