"""The authorization server's HTTP face (AuthMode USER), on the endpoint's own origin:

    GET  /.well-known/oauth-authorization-server   RFC 8414 metadata (S256, registration, CIMD)
    POST /oauth/register                           RFC 7591 dynamic client registration
    GET  /oauth/authorize                          a client's authorization request -> the issuer's sign-in
    GET  /oauth/callback                           back from the issuer -> the consent page, or the code
    POST /oauth/consent                            the person's decision -> the client's redirect URI
    POST /oauth/token                              codes and refresh tokens -> this stack's tokens

Every error before a person has seen this stack's consent page (an unknown client, a redirect
URI it did not register, no PKCE, a bad scope or resource, a sign-in cancelled at the issuer)
is answered here with an error page, never redirected: registration is open, so a registered
redirect URI is no reason to trust it (RFC 6749 §4.1.2.1, RFC 9700 §4.11.2). Only the
person's own decision on that page (which names where they will be sent) sends them back. A person is asked
once per client (per ``consent_days``) whether that client may use their tasks: the stack
signs everyone in upstream with one static client, so the issuer's own consent (if any)
cannot tell one MCP client from another (the confused-deputy problem of MCP's security best
practices). The upstream code only ever returns to this stack's callback; no code reaches a
client before its person approved it.

Handlers read the request, then run the work (DynamoDB, the issuer) in a worker thread, or
inline in Lambda, where an instance serves one request at a time.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, parse_qsl

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from . import callers, pages
from .endpoints import WELL_KNOWN_AS, Endpoints
from .redirects import redirect_host
from .state import PendingSignIn, SignInStore

if TYPE_CHECKING:
    from .authorization import Answer, Client, Server
    from .upstream import Upstream

logger = logging.getLogger(__name__)
MAX_FORM_BYTES = 16 * 1024
PENDING_SECONDS = 600
CORS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "Authorization, Content-Type, MCP-Protocol-Version",
    "Access-Control-Max-Age": "86400",
}


@dataclass(frozen=True)
class Limits:
    registrations_per_address_per_hour: int = 20
    consent_days: int = 90


def _problem(status: int, title: str, detail: str) -> Response:
    return HTMLResponse(pages.problem_page(title, detail), status, headers=pages.headers())


def _answer(answer: Answer, cors: bool = False) -> Response:
    headers = dict(answer.headers)
    headers.pop("Content-Type", None)
    if cors:
        headers.update(CORS)
    if isinstance(answer.body, dict):
        return JSONResponse(answer.body, answer.status, headers=headers)
    return Response(answer.body or b"", answer.status, headers=headers)


async def _small_body(request: Request) -> bytes | None:
    """The body, or None once it passes MAX_FORM_BYTES (read no further than that)."""
    from ..request_body import bounded_body

    return await bounded_body(request, MAX_FORM_BYTES)


class SignInRoutes:
    def __init__(
        self,
        *,
        endpoints: Endpoints,
        store: Callable[[], SignInStore],
        server: Callable[[], Server],
        upstream: Callable[[], Upstream],
        limits: Limits = Limits(),
        inline: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.endpoints = endpoints
        self._make_store = store
        self._server = server
        self._upstream = upstream
        self._limits = limits
        self._inline = inline
        self._clock = clock

    def now(self) -> int:
        return int(self._clock())

    @property
    def _store(self) -> SignInStore:
        return self._make_store()  # made on first use: building the routes makes no AWS client

    async def _run(
        self, fn: Callable[..., Response], request: Request, *args: Any, for_client: bool = False
    ) -> Response:
        address = callers.source_address(request.scope)

        def work() -> Response:
            with callers.acting_for(address):  # whose count a metadata-document fetch goes to
                return fn(*args)

        try:
            return work() if self._inline else await run_in_threadpool(work)
        except Exception:
            logger.exception("sign-in failed")
            if for_client:  # a client's own call (registration, token): an OAuth error body
                return JSONResponse(
                    {"error": "temporarily_unavailable", "error_description": "try again shortly"},
                    503,
                    headers={**CORS, "Retry-After": "5"},
                )
            return _problem(
                503, "Sign-in is unavailable", "Something this server depends on failed; try again shortly."
            )

    def routes(self) -> list[Route]:
        return [
            Route(WELL_KNOWN_AS, self.metadata, methods=["GET", "OPTIONS"]),
            Route("/oauth/register", self.register, methods=["POST", "OPTIONS"]),
            Route("/oauth/authorize", self.authorize, methods=["GET"]),
            Route("/oauth/callback", self.callback, methods=["GET"]),
            Route("/oauth/consent", self.consent, methods=["POST"]),
            Route("/oauth/token", self.token, methods=["POST", "OPTIONS"]),
        ]

    # ---- metadata, registration, token: called by clients' code (CORS open, no cookies) -------

    async def metadata(self, request: Request) -> Response:
        if request.method == "OPTIONS":
            return Response(status_code=204, headers=CORS)
        return JSONResponse(
            self.endpoints.metadata(), headers={**CORS, "Cache-Control": "public, max-age=3600"}
        )

    async def register(self, request: Request) -> Response:
        if request.method == "OPTIONS":
            return Response(status_code=204, headers=CORS)
        body = await _small_body(request)
        if body is None:
            return JSONResponse(
                {"error": "invalid_client_metadata", "error_description": f"at most {MAX_FORM_BYTES} bytes"},
                413,
                headers={**CORS, "Connection": "close"},
            )
        return await self._run(
            self._register,
            request,
            body,
            dict(request.headers),
            callers.source_address(request.scope),
            for_client=True,
        )

    def _register(self, body: bytes, headers: Mapping[str, str], address: str) -> Response:
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return JSONResponse(
                {"error": "invalid_client_metadata", "error_description": "the body is not a JSON object"},
                400,
                headers=CORS,
            )
        hour = self.now() // 3600
        # Every request counts against its own address; only a valid one against everyone's
        # hour (authorization.Registration), which junk would otherwise use up for all.
        if not self._store.count(
            f"register#{address}#{hour}",
            limit=self._limits.registrations_per_address_per_hour,
            expires_at=(hour + 2) * 3600,
        ):
            return JSONResponse(
                {"error": "slow_down", "error_description": "too many registrations; try again later"},
                429,
                headers={**CORS, "Retry-After": "3600"},
            )
        return _answer(self._server().register(data, headers), cors=True)

    async def token(self, request: Request) -> Response:
        if request.method == "OPTIONS":
            return Response(status_code=204, headers=CORS)
        body = await _small_body(request)
        if body is None:
            return JSONResponse({"error": "invalid_request"}, 413, headers={**CORS, "Connection": "close"})
        try:
            pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
        except UnicodeDecodeError:
            return JSONResponse({"error": "invalid_request"}, 400, headers=CORS)
        return await self._run(self._token, request, pairs, dict(request.headers), for_client=True)

    def _token(self, pairs: list[tuple[str, str]], headers: Mapping[str, str]) -> Response:
        return _answer(self._server().token("POST", pairs, headers), cors=True)

    # ---- authorize, callback, consent: the person's browser --------------------------------

    async def authorize(self, request: Request) -> Response:
        return await self._run(self._authorize, request, request.url.query)

    def _authorize(self, query: str) -> Response:
        from authlib.oauth2.rfc6749 import OAuth2Error

        from .upstream import UpstreamError

        server = self._server()
        try:
            grant = server.check_authorization(query)
        except OAuth2Error as error:
            # A page, never a redirect, even to a redirect URI the client registered: anyone
            # can register one, so redirecting a request no person has seen yet would make
            # this origin an open redirector (RFC 9700 §4.11.2).
            return _problem(
                400,
                "This sign-in request is not valid",
                f"{error.error}: {error.description or ''}".rstrip(": "),
            )
        pending = PendingSignIn(
            pending_id=secrets.token_urlsafe(24),
            request_query=query,
            client_id=grant.client.get_client_id(),
            nonce=secrets.token_urlsafe(24),
            upstream_verifier=secrets.token_urlsafe(48),
            expires_at=self.now() + PENDING_SECONDS,
        )
        try:
            url = self._upstream().authorization_url(
                state=pending.pending_id, nonce=pending.nonce, verifier=pending.upstream_verifier
            )
        except UpstreamError as error:
            return _problem(503, "Sign-in is unavailable", str(error))
        self._store.start_sign_in(pending)
        return Response(status_code=302, headers={"Location": url, "Cache-Control": "no-store"})

    async def callback(self, request: Request) -> Response:
        return await self._run(self._callback, request, dict(request.query_params))

    def _callback(self, params: dict[str, str]) -> Response:
        from .upstream import UpstreamError

        pending = self._store.advance_sign_in(
            params.get("state", ""), stage="upstream", to="exchanging", now=self.now()
        )
        if pending is None:
            return _problem(
                400, "This sign-in has expired", "It was used already, or took longer than ten minutes."
            )
        if "error" in params or not params.get("code"):
            # The person cancelled at the issuer, or someone sends the browser here with an
            # error and a pending sign-in they started: no person saw this stack's page, so
            # nothing is redirected to the client (RFC 9700 §4.11.2).
            return _problem(
                400, "The sign-in was cancelled", "The sign-in did not complete at the identity provider."
            )
        server = self._server()
        try:
            identity = self._upstream().sign_in(
                code=params["code"], verifier=pending.upstream_verifier, nonce=pending.nonce
            )
        except UpstreamError as error:
            logger.warning("upstream sign-in failed: %s", error)
            return _problem(502, "The sign-in did not complete", str(error))
        client = server.query_client(pending.client_id)
        redirect_uri = self._redirect_of(client, pending.request_query)
        if redirect_uri is None or client is None:
            return _problem(
                400, "This sign-in request is not valid", "The application is no longer registered."
            )
        consent = (identity.owner, pending.client_id, redirect_host(redirect_uri))
        if self._store.has_consent(*consent, self.now()):
            return _answer(server.approve(pending.request_query, identity))
        csrf = secrets.token_urlsafe(24)
        asked = self._store.advance_sign_in(
            pending.pending_id,
            stage="exchanging",
            to="consent",
            now=self.now(),
            identity_issuer=identity.issuer,
            subject=identity.subject,
            display_name=identity.name,
            csrf=csrf,
        )
        if asked is None:
            return _problem(400, "This sign-in has expired", "It took longer than ten minutes.")
        query = {k: v[0] for k, v in parse_qs(pending.request_query).items()}
        return HTMLResponse(
            pages.consent_page(
                action=self.endpoints.consent,
                pending_id=pending.pending_id,
                csrf=csrf,
                client_name=client.record.client_name,
                client_id=client.get_client_id(),
                redirect_uri=redirect_uri,
                scopes=client.get_allowed_scope(query.get("scope")).split(),
                # The endpoint this client asked for (checked at /oauth/authorize: one of ours).
                resource=query.get("resource") or self.endpoints.resource,
                signed_in_as=identity.name,
            ),
            headers=pages.headers(redirect_uri),
        )

    @staticmethod
    def _redirect_of(client: Client | None, request_query: str) -> str | None:
        """Where this sign-in sends the person back to, as the client registered it."""
        if client is None:
            return None
        return client.resolve_redirect_uri(dict(parse_qsl(request_query)).get("redirect_uri"))

    async def consent(self, request: Request) -> Response:
        origin = request.headers.get("origin")
        if origin is not None and origin != self.endpoints.issuer:
            # The consent form posts only from this origin's own page (CSP form-action, and
            # the CSRF token below); a post from elsewhere is someone else's doing.
            return _problem(
                403, "This request came from another site", "The decision must come from this page."
            )
        body = await _small_body(request)
        if body is None:
            return _problem(413, "This request is too large", "")
        form = dict(parse_qsl(body.decode("utf-8", "replace")))
        return await self._run(self._consent, request, form)

    def _consent(self, form: dict[str, str]) -> Response:
        from .upstream import Identity

        pending = self._store.advance_sign_in(
            form.get("pending", ""),
            stage="consent",
            to="done",
            now=self.now(),
            expect_csrf=form.get("csrf") or "-",
        )
        if pending is None or pending.identity_issuer is None or pending.subject is None:
            return _problem(
                400, "This sign-in has expired", "It was used already, or took longer than ten minutes."
            )
        server = self._server()
        if form.get("decision") != "approve":
            return _answer(server.deny(pending.request_query))
        identity = Identity(pending.identity_issuer, pending.subject, pending.display_name or pending.subject)
        redirect_uri = self._redirect_of(server.query_client(pending.client_id), pending.request_query)
        if redirect_uri is None:
            return _problem(
                400, "This sign-in request is not valid", "The application is no longer registered."
            )
        self._store.add_consent(
            identity.owner,
            pending.client_id,
            redirect_host(redirect_uri),
            expires_at=self.now() + self._limits.consent_days * 86_400,
        )
        return _answer(server.approve(pending.request_query, identity))
