"""Where this stack's authorization server answers, and its RFC 8414 metadata. Light on
purpose (no Authlib): the metadata is served without loading the server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
# What a private_key_jwt assertion may be signed with (jwks.ACCEPTED_ALGORITHMS).
SIGNING_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
WELL_KNOWN_AS = "/.well-known/oauth-authorization-server"


@dataclass(frozen=True)
class Endpoints:
    """``resources``: what tokens are issued for (RFC 8707), the default (a client that names
    none) first: the HTTP API's /mcp and, with StreamingApi, the streaming endpoint's."""

    issuer: str
    resources: tuple[str, ...]
    scopes: tuple[str, ...]
    # How the deployer's machine clients authenticate at the token endpoint (machines.py):
    # none, when there are none. client_credentials is advertised only where it works.
    machine_methods: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.resources:
            raise ValueError("an authorization server issues tokens for at least one resource")

    @property
    def resource(self) -> str:
        """The default resource: a client that names none gets a token for it."""
        return self.resources[0]

    @property
    def assertion_audiences(self) -> tuple[str, ...]:
        """What a private_key_jwt assertion's aud may be: this issuer (rfc7523bis; a root issuer
        with or without its trailing slash, as RFC 8414 clients render it: mcp 1.30.0 sends
        ``http://host/``) or the token endpoint (RFC 7523 §3)."""
        root = urlsplit(self.issuer).path in ("", "/")
        return tuple(
            dict.fromkeys([self.issuer, *([self.issuer.rstrip("/") + "/"] if root else []), self.token])
        )

    @property
    def authorize(self) -> str:
        return f"{self.issuer}/oauth/authorize"

    @property
    def token(self) -> str:
        return f"{self.issuer}/oauth/token"

    @property
    def register(self) -> str:
        return f"{self.issuer}/oauth/register"

    @property
    def callback(self) -> str:
        return f"{self.issuer}/oauth/callback"

    @property
    def consent(self) -> str:
        return f"{self.issuer}/oauth/consent"

    def metadata(
        self, *, registration: bool = True, documents: bool = True, for_registration: bool = False
    ) -> dict[str, Any]:
        """RFC 8414 metadata; MCP clients refuse to go on without S256 in it.
        ``for_registration``: what a client may register as (no machine grant or method)."""
        document: dict[str, Any] = {
            "issuer": self.issuer,
            "authorization_endpoint": self.authorize,
            "token_endpoint": self.token,
            "scopes_supported": list(self.scopes),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
            "client_id_metadata_document_supported": documents,
        }
        if self.machine_methods and not for_registration:
            document["grant_types_supported"].append("client_credentials")
            methods = document["token_endpoint_auth_methods_supported"]
            methods += [m for m in self.machine_methods if m not in methods]
            if "private_key_jwt" in methods:
                document["token_endpoint_auth_signing_alg_values_supported"] = list(SIGNING_ALGORITHMS)
        if registration:
            document["registration_endpoint"] = self.register
        return document
