"""Where this stack's authorization server answers, and its RFC 8414 metadata. Light on
purpose (no Authlib): the metadata is served without loading the server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
WELL_KNOWN_AS = "/.well-known/oauth-authorization-server"


@dataclass(frozen=True)
class Endpoints:
    """``resources``: what tokens are issued for (RFC 8707), the default (a client that names
    none) first: the HTTP API's /mcp and, with StreamingApi, the streaming endpoint's."""

    issuer: str
    resources: tuple[str, ...]
    scopes: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.resources:
            raise ValueError("an authorization server issues tokens for at least one resource")

    @property
    def resource(self) -> str:
        """The default resource: a client that names none gets a token for it."""
        return self.resources[0]

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

    def metadata(self, *, registration: bool = True, documents: bool = True) -> dict[str, Any]:
        """RFC 8414 metadata; MCP clients refuse to go on without S256 in it."""
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
        if registration:
            document["registration_endpoint"] = self.register
        return document
