"""Builds sign-in (taskgate/auth) from its settings (config.SignInSettings) and its ports:
what AuthMode asks for, and nothing before it is used. At a cold start only the metadata, the
routes and the middleware exist; the authorization server (Authlib), the token checks (joserfc)
and the AWS calls they need are made on the first request that needs each."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..config import SignInSettings
from ..lazy import Lazy, once
from .endpoints import Endpoints
from .outbound import Transport, urllib_transport
from .resource import ProtectedResource, SignIn
from .signing import KeySource

if TYPE_CHECKING:
    from starlette.routing import Route

    from .authorization import Server
    from .jwks import IssuerKeys, Throttled
    from .jwt import OwnTokens
    from .machines import MachineClients
    from .signing import SigningKeys
    from .state import SignInStore
    from .tokens import Verifier
    from .upstream import Upstream


# Machine clients' secrets one address may have the issuer check, per window (each check is a
# token request at the issuer, which Cognito bills): far above an agent's one token an hour.
SECRET_CHECKS_PER_ADDRESS, SECRET_CHECK_WINDOW_SECONDS = 60, 600


@dataclass(frozen=True)
class SignInPorts:
    """What sign-in reaches outside itself. Production passes the AWS adapters (wiring.py);
    tests and the local runtime pass theirs. ``documents_fetch`` replaces the guarded fetch of
    Client ID Metadata Documents (tests only: see cimd.py)."""

    store: Callable[[], SignInStore]
    signing_keys: KeySource
    upstream_secret: Callable[[], str | None] = lambda: None
    transport: Transport = urllib_transport
    documents_fetch: Callable[[str], tuple[bytes, int | None]] | None = None
    clock: Callable[[], float] = time.time
    monotonic: Callable[[], float] = time.monotonic
    interval: float = 30.0


@dataclass
class _Parts:
    """Sign-in's pieces, each made once when first asked for (``@once``, as the composition
    root's: one way anything is built on first use)."""

    settings: SignInSettings
    ports: SignInPorts
    endpoints: Endpoints = field(init=False)

    def __post_init__(self) -> None:
        s = self.settings
        self.endpoints = Endpoints(
            issuer=s.issuer_url,
            resources=s.sign_in_resources,
            scopes=s.oauth_scopes,
            machine_methods=self.machines.methods,
        )

    @once
    def machines(self) -> MachineClients:
        """The deployer's machine clients (client_credentials at the stack's authorization
        server): with USER (the server) and CLIENT (machine callers accepted) only."""
        from ..config import parse_client_keys
        from .machines import MachineClients

        s = self.settings
        if not {"USER", "CLIENT"} <= s.auth_mode:
            return MachineClients()
        return MachineClients(
            secret_ids=frozenset(s.oauth_client_ids),
            key_locations=parse_client_keys(s.oauth_client_keys),
            check_secret=lambda client_id, secret, scopes: self.upstream.client_credentials(
                client_id, secret, list(scopes)
            ),
            secret_issuer=s.oauth_issuer,
            may_check=self._may_check_secret,
        )

    def _may_check_secret(self) -> bool:
        from . import callers

        window = int(self.ports.clock()) // SECRET_CHECK_WINDOW_SECONDS
        return self.store.count(
            f"secret-check#{callers.current()}#{window}",
            limit=SECRET_CHECKS_PER_ADDRESS,
            expires_at=(window + 2) * SECRET_CHECK_WINDOW_SECONDS,
        )

    @once
    def issuer_metadata(self) -> Throttled[dict[str, Any]]:
        from .jwks import Throttled, discover

        s, p = self.settings, self.ports
        return Throttled(
            lambda: discover(s.oauth_issuer, p.transport), interval=p.interval, clock=p.monotonic
        )

    @once
    def issuer_keys(self) -> IssuerKeys:
        from .jwks import IssuerKeys

        s, p = self.settings, self.ports
        return IssuerKeys(
            s.oauth_issuer,
            jwks_uri=s.oauth_jwks_uri,
            metadata=self.issuer_metadata,
            transport=p.transport,
            interval=p.interval,
            clock=p.monotonic,
        )

    @once
    def signing_keys(self) -> SigningKeys:
        from .signing import SigningKeys

        return SigningKeys(self.ports.signing_keys, clock=self.ports.monotonic)

    @once
    def own_tokens(self) -> OwnTokens:
        from .jwt import OwnTokens

        return OwnTokens(
            issuer=self.endpoints.issuer,
            resource=self.settings.resource_url,  # the one this server accepts
            keys=self.signing_keys,
            clock=self.ports.clock,
        )

    @once
    def store(self) -> SignInStore:
        return self.ports.store()

    def verifier(self) -> Verifier:
        from .jwt import IssuerTokens, TokenVerifier

        s = self.settings
        upstream = None
        if "CLIENT" in s.auth_mode:
            upstream = IssuerTokens(
                issuer=s.oauth_issuer,
                audiences=[s.resource_url, *s.oauth_audiences],
                client_ids=s.oauth_client_ids,
                keys=self.issuer_keys,
                token_use=s.oauth_token_use or None,
                clock=self.ports.clock,
            )
        return TokenVerifier(own=self.own_tokens if "USER" in s.auth_mode else None, upstream=upstream)

    @once
    def server(self) -> Server:
        from .authorization import Server
        from .cimd import GuardedFetch, MetadataDocuments

        s, p = self.settings, self.ports
        documents = MetadataDocuments(self.store, fetch=p.documents_fetch or GuardedFetch(), clock=p.clock)
        server = Server(
            endpoints=self.endpoints,
            store=self.store,
            tokens=self.own_tokens,
            documents=documents,
            access_token_seconds=s.oauth_access_token_ttl_seconds,
            refresh_token_days=s.oauth_refresh_token_ttl_days,
            registrations_per_hour=s.oauth_registrations_per_hour,
            clock=p.clock,
        )
        if self.machines:
            from .machine_grant import ClientKeys, install

            client_keys = None
            if self.machines.key_locations:
                client_keys = ClientKeys(
                    self.machines.key_locations, transport=p.transport, interval=p.interval, clock=p.monotonic
                )
            install(server, self.machines, client_keys, clock=p.clock)
        return server

    @once
    def upstream(self) -> Upstream:
        from .jwt import IdTokens
        from .upstream import Upstream, UpstreamClient

        s, p = self.settings, self.ports
        secret = Lazy(p.upstream_secret)
        client = UpstreamClient(
            issuer=s.oauth_issuer,
            client_id=s.oauth_upstream_client_id,
            callback_url=self.endpoints.callback,
            scopes=s.oauth_upstream_scopes,
            authorization_endpoint=s.oauth_authorization_endpoint,
            token_endpoint=s.oauth_token_endpoint,
            client_secret=secret,
        )
        id_tokens = IdTokens(
            issuer=s.oauth_issuer, client_id=s.oauth_upstream_client_id, keys=self.issuer_keys, clock=p.clock
        )
        return Upstream(client, metadata=self.issuer_metadata, id_tokens=id_tokens, transport=p.transport)

    def routes(self, inline: bool) -> list[Route]:
        from .routes import Limits, SignInRoutes

        s = self.settings
        limits = Limits(registrations_per_address_per_hour=s.oauth_registrations_per_address_per_hour)
        return SignInRoutes(
            endpoints=self.endpoints,
            store=lambda: self.store,
            server=lambda: self.server,
            upstream=lambda: self.upstream,
            limits=limits,
            inline=inline,
            clock=self.ports.clock,
        ).routes()


def build_sign_in(settings: SignInSettings, ports: SignInPorts) -> SignIn | None:
    """AuthMode's callers, or None when every caller is anonymous (NONE)."""
    modes = settings.auth_mode
    if not modes:
        return None
    tokens = modes & {"USER", "CLIENT"}
    if not tokens:
        return SignIn(resource=None, iam=True)  # IAM alone: /mcp is AWS_IAM at API Gateway
    parts = _Parts(settings, ports)
    streaming = settings.is_streaming_endpoint
    resource = ProtectedResource(
        resource=settings.resource_url,
        # With USER, clients sign in at the stack's issuer (the HTTP API's origin, from the
        # streaming endpoint too), named first: hosts take the first. With CLIENT the upstream
        # issuer's own tokens are taken too, so it is named as well: a machine client told the
        # issuer its credentials belong to (mcp's issuer=) finds it there (RFC 9728 §2).
        authorization_servers=list(
            dict.fromkeys(
                ([parts.endpoints.issuer] if "USER" in tokens else [])
                + ([settings.oauth_issuer] if "CLIENT" in tokens else [])
            )
        ),
        scopes_supported=list(settings.oauth_scopes),
        required_scopes=list(settings.oauth_scopes),
        # The streaming endpoint is a REST API stage: the app's root is the stage's URL.
        base_url=settings.stream_public_url if streaming else "",
    )
    return SignIn(
        resource=resource,
        verifier=parts.verifier,
        # The authorization server lives at its issuer only: on the streaming endpoint's origin
        # its metadata would name an issuer that is not where it was found (RFC 8414 §3.3).
        routes=parts.routes if "USER" in tokens and not streaming else (lambda inline: []),
        iam="IAM" in modes,
    )
