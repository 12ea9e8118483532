"""taskgate as an OAuth 2.1 protected resource (MCP authorization, RFC 9728, RFC 6750).

- ``ProtectedResource``: this server's identity for clients (the canonical ``resource`` URL
  of /mcp, its authorization servers and scopes) and the ``WWW-Authenticate`` challenges;
- ``metadata_routes()``: the Protected Resource Metadata at
  ``/.well-known/oauth-protected-resource/mcp`` (what the 401 points at) and at
  ``/.well-known/oauth-protected-resource`` (clients' last fallback);
- ``BearerAuthMiddleware``: pure ASGI in front of /mcp (every method but OPTIONS). No token:
  401 with ``Bearer resource_metadata="…", scope="…"``; a bad one: 401 ``invalid_token``; one
  without the required scopes: 403 ``insufficient_scope``. A good token's claims go where API
  Gateway's JWT authorizer puts them (``requestContext.authorizer.jwt.claims`` of the
  ``aws.event``), so the owner is ``iss#sub`` exactly as before (protocol/wire/identity.py), the
  issuer being the one that signed the person in (tokens.AccessToken.owner_claims). On
  ``/iam/mcp`` (AuthMode IAM beside tokens) the caller is the IAM principal API Gateway names.

The token verifier is built on the first request that carries a token: the 401 path and a
deployment without sign-in never import joserfc or ``cryptography``.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..lazy import Lazy
from .tokens import AccessToken, InsufficientScope, SigningKeysUnavailable, TokenError, Verifier

WELL_KNOWN_PRM = "/.well-known/oauth-protected-resource"
UNAVAILABLE = "Service temporarily unavailable; please retry"
logger = logging.getLogger(__name__)


def _quoted(value: str) -> str:
    """An RFC 9110 quoted-string; RFC 6750 §3 limits these parameters to printable ASCII."""
    clean = "".join(ch for ch in value if 0x20 <= ord(ch) <= 0x7E)
    return '"' + clean.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class ProtectedResource:
    """``resource`` is the canonical URL clients connect to (``https://…/mcp``). It is
    configured, never taken from the request's Host header: it is also the audience a token
    must carry, and a Host-derived audience would accept tokens minted for other servers.

    ``base_url`` is where the app's own root is reached, when that is not the resource's
    origin: the streaming endpoint is a REST API stage (``https://…/stream``), whose front
    hands the app ``/mcp`` for ``…/stream/mcp`` and routes nothing outside the stage. Its
    metadata is then served under the stage (``…/stream/.well-known/oauth-protected-resource/mcp``),
    where the 401 points: the RFC 9728 §3.1 location at the host's root is not this API's."""

    resource: str
    authorization_servers: list[str]
    scopes_supported: list[str] = field(default_factory=list)
    required_scopes: list[str] = field(default_factory=list)
    resource_name: str = "taskgate"
    base_url: str = ""

    def __post_init__(self) -> None:
        parts = urlsplit(self.resource)
        if not (parts.scheme and parts.netloc) or parts.fragment or parts.query:
            raise ValueError("the resource must be an absolute URL without query or fragment (RFC 8707)")
        if not self.authorization_servers:
            raise ValueError("MCP requires at least one authorization server in the metadata")
        if not self.resource.startswith(self.base + "/"):
            raise ValueError("the resource must be under its base URL")

    @property
    def origin(self) -> str:
        parts = urlsplit(self.resource)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def base(self) -> str:
        """Where the app's ``/`` is reached: ``base_url``, or the resource's origin."""
        return self.base_url.rstrip("/") or self.origin

    @property
    def path(self) -> str:
        """The resource's path as the app sees it (below its base)."""
        return self.resource.removeprefix(self.base).rstrip("/") or "/"

    @property
    def metadata_path(self) -> str:
        """RFC 9728 §3.1: the well-known segment inserted before the resource's path."""
        return WELL_KNOWN_PRM + self.path.rstrip("/")

    @property
    def metadata_url(self) -> str:
        return self.base + self.metadata_path

    def metadata(self) -> dict[str, Any]:
        return {
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "scopes_supported": self.scopes_supported,
            "bearer_methods_supported": ["header"],
            "resource_name": self.resource_name,
        }

    def challenge(
        self, *, error: str | None = None, description: str | None = None, scope: Iterable[str] | None = None
    ) -> str:
        """A ``WWW-Authenticate`` value; RFC 6750 §3.1: no ``error`` when there was no token."""
        params: list[str] = []
        if error:
            params.append(f"error={_quoted(error)}")
        if description:
            params.append(f"error_description={_quoted(description)}")
        scopes = list(scope) if scope is not None else self.required_scopes
        if scopes:
            params.append(f"scope={_quoted(' '.join(scopes))}")
        params.append(f"resource_metadata={_quoted(self.metadata_url)}")
        return "Bearer " + ", ".join(params)


def metadata_routes(resource: ProtectedResource) -> list[Route]:
    """GET routes for the metadata at the path-suffixed and at the root well-known URL. Both
    name /mcp as the resource: MCP clients reach the root one only as a last fallback and
    accept a resource that equals or contains the URL they connect to."""

    async def document(request: Request) -> Response:
        return JSONResponse(
            resource.metadata(),
            headers={"Cache-Control": "public, max-age=3600", "Access-Control-Allow-Origin": "*"},
        )

    return [
        Route(path, document, methods=["GET"])
        for path in dict.fromkeys([resource.metadata_path, WELL_KNOWN_PRM])
    ]


def _rpc_error_body(message: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()


def auth_error_response(resource: ProtectedResource, error: TokenError | None) -> Response:
    """401 (no token, or a bad one) or 403 (insufficient scope) with the matching challenge."""
    headers = {"Access-Control-Expose-Headers": "WWW-Authenticate"}
    if error is None:
        headers["WWW-Authenticate"] = resource.challenge()
        return Response(_rpc_error_body("Unauthorized"), 401, headers, media_type="application/json")
    scope = error.required if isinstance(error, InsufficientScope) else None
    headers["WWW-Authenticate"] = resource.challenge(
        error=error.error, description=error.description, scope=scope
    )
    message = "Forbidden" if error.status == 403 else "Unauthorized"
    return Response(_rpc_error_body(message), error.status, headers, media_type="application/json")


def _with_claims(scope: Scope, claims: dict[str, Any]) -> dict[str, Any]:
    """The ``aws.event`` with the claims where an HTTP API JWT authorizer would have put them."""
    event = dict(scope.get("aws.event") or {})
    context = dict(event.get("requestContext") or {})
    authorizer = dict(context.get("authorizer") or {})
    authorizer["jwt"] = {"claims": claims, "scopes": None}
    context["authorizer"] = authorizer
    event["requestContext"] = context
    return event


IAM_PATH = "/iam/mcp"
# The route create_app serves MCP on: always behind a token, whatever path the resource's URL
# has (a front may strip a stage or a base path before the app sees the request).
MCP_PATH = "/mcp"


def _iam_caller(scope: Scope) -> bool:
    """API Gateway checked this request's SigV4 signature (the route is AWS_IAM) and named the
    caller; only API Gateway writes ``requestContext``, never the client. An HTTP API names
    it in ``authorizer.iam``, a REST API (the streaming endpoint) in ``identity``."""
    event = scope.get("aws.event")
    context = event.get("requestContext") if isinstance(event, dict) else None
    if not isinstance(context, dict):
        return False
    authorizer = context.get("authorizer")
    iam = authorizer.get("iam") if isinstance(authorizer, dict) else None
    identity = context.get("identity")
    return any(isinstance(named, dict) and bool(named.get("userArn")) for named in (iam, identity))


@dataclass(frozen=True)
class SignIn:
    """What create_app needs to let callers in (AuthMode): the protected resource and how to
    build its token check (called on the first request that carries a token), the
    authorization server's routes (USER), and whether SigV4 callers come in on /iam/mcp (IAM).
    ``resource`` is None when no bearer token is accepted (IAM alone)."""

    resource: ProtectedResource | None
    verifier: Callable[[], Verifier] | None = None
    routes: Callable[[bool], list[Route]] = lambda inline: []
    iam: bool = False

    @property
    def paths(self) -> list[str]:
        return [IAM_PATH] if self.iam else []

    def all_routes(self, *, inline: bool = False) -> list[Route]:
        found = metadata_routes(self.resource) if self.resource is not None else []
        return [*found, *self.routes(inline)]

    def protect(self, routes: Sequence[BaseRoute], *, inline: bool = False) -> ASGIApp:
        """An app serving ``routes``, the metadata and the authorization server, with a token
        required on /mcp and an IAM caller on /iam/mcp."""
        app = Starlette(routes=[*routes, *self.all_routes(inline=inline)])
        return BearerAuthMiddleware(
            app, resource=self.resource, verifier=self.verifier, iam=self.iam, inline=inline
        )


_BEARER = re.compile(r"^Bearer +([A-Za-z0-9\-._~+/]+=*) *$", re.IGNORECASE)


class BearerAuthMiddleware:
    """Requires a valid bearer access token on /mcp (all methods but OPTIONS) when tokens are
    accepted, and an IAM caller named by API Gateway on /iam/mcp. The check runs in a worker
    thread unless ``inline`` (Lambda): fetching an issuer's keys must not hold up the local
    server's other requests."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        resource: ProtectedResource | None,
        verifier: Callable[[], Verifier] | None,
        iam: bool = False,
        inline: bool = False,
    ) -> None:
        self._app = app
        self._resource = resource
        # Built by the first request that carries a token.
        self._verifier: Lazy[Verifier] | None = Lazy(verifier) if verifier is not None else None
        self._iam = iam
        self._inline = inline
        self._protected = {MCP_PATH, resource.path} if resource is not None else set()

    def _check(self, token: str) -> AccessToken:
        assert self._verifier is not None and self._resource is not None
        checked = self._verifier().verify(token)  # ~0.1 ms once keys are in memory
        checked.require_scopes(self._resource.required_scopes)
        return checked

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] == "OPTIONS":
            await self._app(scope, receive, send)
            return
        path = scope["path"]
        if path == IAM_PATH:
            if self._iam and _iam_caller(scope):
                await self._app(scope, receive, send)
            else:
                body = _rpc_error_body("Forbidden: /iam/mcp takes SigV4-signed requests through API Gateway")
                await Response(body, 403, media_type="application/json")(scope, receive, send)
            return
        if self._resource is None:
            # IAM alone: API Gateway checks SigV4 on /mcp too, and the function checks that it did,
            # so a front whose authorization lags (a stage not yet redeployed) lets no one in.
            if self._iam and path == MCP_PATH and not _iam_caller(scope):
                body = _rpc_error_body("Forbidden: /mcp takes SigV4-signed requests through API Gateway")
                await Response(body, 403, media_type="application/json")(scope, receive, send)
                return
            await self._app(scope, receive, send)
            return
        if path not in self._protected:
            await self._app(scope, receive, send)
            return
        authorization = [v for k, v in scope.get("headers", []) if k == b"authorization"]
        if not authorization:
            await auth_error_response(self._resource, None)(scope, receive, send)
            return
        match = _BEARER.match(authorization[0].decode("latin-1")) if len(authorization) == 1 else None
        try:
            if match is None:
                raise TokenError("expected one Authorization: Bearer <token> header")
            token = match.group(1)
            checked = self._check(token) if self._inline else await run_in_threadpool(self._check, token)
        except TokenError as error:
            await auth_error_response(self._resource, error)(scope, receive, send)
            return
        except SigningKeysUnavailable:
            logger.warning("cannot check tokens: the issuer's signing keys are unavailable", exc_info=True)
            body = json.dumps(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": UNAVAILABLE}}
            ).encode()
            await Response(body, 503, {"Retry-After": "5"}, media_type="application/json")(
                scope, receive, send
            )
            return
        scope = {**scope, "auth.token": checked, "aws.event": _with_claims(scope, checked.owner_claims)}
        await self._app(scope, receive, send)
