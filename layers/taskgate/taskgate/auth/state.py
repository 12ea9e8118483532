"""What the authorization server keeps between requests, and the port it keeps it through.

Every item expires (``expires_at``, epoch seconds: the task table's TTL attribute), and a
read treats an expired item as gone, since DynamoDB deletes late. Secrets are never stored:
authorization codes and refresh tokens by their SHA-256, client secrets likewise. Every
decision that two requests could race on is taken from a conditional write (a code used
once, a refresh token rotated once, a sign-in step taken once), never from a read.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import Enum
from typing import Protocol


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class ClientRecord:
    """A registered client (RFC 7591), or one described by its metadata document (CIMD)."""

    client_id: str
    redirect_uris: tuple[str, ...]
    token_endpoint_auth_method: str = "none"
    client_secret_digest: str | None = None
    client_name: str | None = None
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    scope: str | None = None
    issued_at: int = 0
    metadata_document: bool = False


@dataclass(frozen=True)
class PendingSignIn:
    """One authorization request between the client's /authorize and the code it is given:
    the upstream sign-in in between (``upstream``), then the consent page (``consent``)."""

    pending_id: str
    request_query: str  # the client's authorization request, validated again at the end
    client_id: str
    nonce: str
    upstream_verifier: str  # PKCE towards the upstream issuer
    expires_at: int
    stage: str = "upstream"
    identity_issuer: str | None = None
    subject: str | None = None
    display_name: str | None = None
    csrf: str | None = None


@dataclass(frozen=True)
class CodeRecord:
    code_digest: str
    client_id: str
    redirect_uri: str
    scope: str
    resource: str
    code_challenge: str
    code_challenge_method: str
    identity_issuer: str
    subject: str
    family: str  # the refresh-token family the exchange starts; revoked if the code is replayed
    expires_at: int


@dataclass(frozen=True)
class GrantRecord:
    """A refresh-token family: one live refresh token (``current_digest``) at a time."""

    family: str
    current_digest: str
    client_id: str
    scope: str
    resource: str
    identity_issuer: str
    subject: str
    expires_at: int


class CodeUse(Enum):
    FIRST = "first"
    REPLAYED = "replayed"  # used before: the tokens it gave are revoked
    UNKNOWN = "unknown"  # never issued, or expired


class SignInStore(Protocol):
    def add_client(self, client: ClientRecord, *, expires_at: int) -> None: ...

    def get_client(self, client_id: str, now: int) -> ClientRecord | None: ...

    def keep_client(self, client_id: str, *, expires_at: int) -> None:
        """A client that is used lives on (one never used expires a day after registering)."""

    def count(self, key: str, *, limit: int, expires_at: int) -> bool:
        """Add one to the counter ``key`` (which expires at ``expires_at``); False once it
        would pass ``limit`` (nothing is counted then)."""

    def start_sign_in(self, pending: PendingSignIn) -> None: ...

    def advance_sign_in(
        self,
        pending_id: str,
        *,
        stage: str,
        to: str,
        now: int,
        expect_csrf: str | None = None,
        **changes: str,
    ) -> PendingSignIn | None:
        """Move a pending sign-in from ``stage`` to ``to`` (with ``changes``), once: the
        record as it is after the move, or None if it was not at that stage (used, expired,
        unknown, or the CSRF token given does not match)."""

    def add_code(self, code: CodeRecord) -> None: ...

    def use_code(self, code_digest: str, now: int) -> tuple[CodeUse, CodeRecord | None]: ...

    def add_grant(self, grant: GrantRecord) -> None: ...

    def get_grant(self, family: str, now: int) -> GrantRecord | None: ...

    def rotate_grant(
        self, family: str, *, old_digest: str, new_digest: str, expires_at: int, now: int
    ) -> bool:
        """Replace the family's refresh token if ``old_digest`` is still the current one."""

    def revoke_grant(self, family: str) -> None: ...

    def has_consent(self, owner: str, client_id: str, redirect_host: str, now: int) -> bool:
        """Whether the person approved this client sending them back to this host (a client
        that can register a second redirect URI must not inherit the first one's consent)."""

    def add_consent(self, owner: str, client_id: str, redirect_host: str, *, expires_at: int) -> None: ...

    def cached_document(self, url: str, now: int) -> str | None: ...

    def cache_document(self, url: str, document: str, *, expires_at: int) -> None: ...
