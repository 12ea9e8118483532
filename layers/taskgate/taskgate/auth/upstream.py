"""Signing a person in at the upstream issuer (the stack's Cognito user pool, or any OpenID
Connect provider), with the one static client the stack has there.

An ordinary OpenID Connect authorization-code flow with PKCE (S256) and a nonce: the person
is sent to the issuer's authorization endpoint with this stack's callback; the code that
comes back is exchanged at its token endpoint; the ID token says who signed in (jwt.IdTokens
checks it is for this client and this sign-in). The upstream tokens themselves are used for
nothing else and kept nowhere: what a client gets is this stack's own tokens.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from .jwks import Throttled
from .jwt import IdTokens
from .outbound import OutboundError, Transport, post_form, urllib_transport
from .tokens import SigningKeysUnavailable, TokenError


@dataclass(frozen=True)
class Identity:
    """Who signed in: ``issuer``#``subject`` owns their tasks; ``name`` is for the consent page."""

    issuer: str
    subject: str
    name: str

    @property
    def owner(self) -> str:
        return f"{self.issuer}#{self.subject}"


class UpstreamError(Exception):
    """The issuer did not sign the person in (an error, an unusable answer, unreachable)."""


@dataclass(frozen=True)
class UpstreamClient:
    issuer: str
    client_id: str
    callback_url: str
    scopes: Sequence[str] = ("openid", "email")
    authorization_endpoint: str = ""
    token_endpoint: str = ""
    # The client's secret, read when first needed (None: a public client, PKCE alone).
    client_secret: Callable[[], str | None] = lambda: None


class Upstream:
    def __init__(
        self,
        client: UpstreamClient,
        *,
        metadata: Throttled[dict[str, Any]],
        id_tokens: IdTokens,
        transport: Transport = urllib_transport,
    ) -> None:
        self.client = client
        self._metadata = metadata
        self._id_tokens = id_tokens
        self._transport = transport

    def _endpoint(self, name: str, configured: str) -> str:
        if configured:
            return configured
        document = self._metadata.get()
        if document is None or not isinstance(document.get(name), str):
            raise UpstreamError(f"the issuer's metadata (its {name}) is unavailable; try again shortly")
        return str(document[name])

    def authorization_url(self, *, state: str, nonce: str, verifier: str) -> str:
        from authlib.common.urls import add_params_to_uri
        from authlib.oauth2.rfc7636 import create_s256_code_challenge

        endpoint = self._endpoint("authorization_endpoint", self.client.authorization_endpoint)
        params = {
            "response_type": "code",
            "client_id": self.client.client_id,
            "redirect_uri": self.client.callback_url,
            "scope": " ".join(self.client.scopes),
            "state": state,
            "nonce": nonce,
            "code_challenge": create_s256_code_challenge(verifier),
            "code_challenge_method": "S256",
        }
        return str(add_params_to_uri(endpoint, list(params.items())))

    def sign_in(self, *, code: str, verifier: str, nonce: str) -> Identity:
        endpoint = self._endpoint("token_endpoint", self.client.token_endpoint)
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.client.callback_url,
            "client_id": self.client.client_id,
            "code_verifier": verifier,
        }
        headers: dict[str, str] = {}
        secret = self.client.client_secret()
        if secret:  # client_secret_basic (RFC 6749 §2.3.1: each part form-encoded)
            pair = f"{urlencode({'': self.client.client_id})[1:]}:{urlencode({'': secret})[1:]}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        try:
            status, answer = post_form(self._transport, endpoint, form, headers)
        except OutboundError as error:
            raise UpstreamError(f"the issuer's token endpoint could not be reached: {error}") from error
        if status != 200 or not isinstance(answer.get("id_token"), str):
            raise UpstreamError(f"the issuer refused the sign-in: {answer.get('error', status)}")
        try:
            claims = self._id_tokens.verify(answer["id_token"], nonce)
        except (TokenError, SigningKeysUnavailable) as error:
            raise UpstreamError(f"the issuer's ID token is not usable: {error}") from error
        name = next(
            (
                claims[k]
                for k in ("email", "preferred_username", "cognito:username", "name")
                if isinstance(claims.get(k), str)
            ),
            claims["sub"],
        )
        return Identity(issuer=str(claims["iss"]), subject=str(claims["sub"]), name=str(name))

    def client_credentials(self, client_id: str, secret: str, scopes: Sequence[str]) -> bool:
        """Whether the issuer takes ``client_id`` and ``secret`` for a client-credentials grant
        (its token endpoint, client_secret_basic): how the stack checks the secret of a
        machine client the issuer keeps (the stack's AgentClient). Its token is not used: the
        stack mints its own, bound to the endpoint asked for. UpstreamError when the issuer
        cannot say (unreachable, an answer that is neither a token nor a refusal)."""
        endpoint = self._endpoint("token_endpoint", self.client.token_endpoint)
        form = {"grant_type": "client_credentials", "scope": " ".join(scopes)}
        pair = f"{urlencode({'': client_id})[1:]}:{urlencode({'': secret})[1:]}"
        headers = {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
        try:
            status, answer = post_form(self._transport, endpoint, form, headers)
        except OutboundError as error:
            raise UpstreamError(f"the issuer's token endpoint could not be reached: {error}") from error
        if status == 200 and isinstance(answer.get("access_token"), str):
            return True
        if status in (400, 401) and answer.get("error") in (
            "invalid_client",
            "unauthorized_client",
            "invalid_scope",
        ):
            return False
        raise UpstreamError(
            f"the issuer answered the client-credentials check with {answer.get('error', status)}"
        )
