"""The client-credentials grant at this stack's authorization server, on Authlib: the machine
clients (machines.py says who they are), their ``private_key_jwt`` assertions checked with
Authlib's RFC 7523 client assertion and joserfc, their keys, and the grant that mints a token
for the one resource asked for. Loaded with the authorization server, never at a cold start.
"""

from __future__ import annotations

import json
import pathlib
import time
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, ClassVar

from authlib.oauth2.rfc6749 import InvalidClientError, grants
from authlib.oauth2.rfc7523 import JWTBearerClientAssertion

from .authorization import BoundTokens, Client
from .jwks import ACCEPTED_ALGORITHMS, IssuerKeys, parse_key_set
from .machines import KEY_METHOD, SECRET_METHODS, MachineClients, is_url
from .outbound import Transport
from .state import ClientRecord, digest
from .tokens import SigningKeysUnavailable, TokenError
from .upstream import Identity

if TYPE_CHECKING:
    from joserfc.jwk import Key

    from .authorization import Request, Server

MAX_ASSERTION_SECONDS = 300
LEEWAY_SECONDS = 60
_KID: ContextVar[str | None] = ContextVar("taskgate_assertion_kid", default=None)


class ClientKeys:
    """Each key client's public keys: fetched from its JWKS URL (kept, fetched again at most
    once per interval, and when an assertion names a key id not seen yet) or read once from its
    file."""

    def __init__(
        self,
        locations: Mapping[str, str],
        *,
        transport: Transport,
        interval: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._locations = dict(locations)
        self._fetched = {
            client_id: IssuerKeys(
                client_id,
                jwks_uri=location,
                transport=transport,
                interval=interval,
                max_age=3600.0,
                clock=clock,
            )
            for client_id, location in self._locations.items()
            if is_url(location)
        }
        self._files: dict[str, dict[str, Key]] = {}

    def __contains__(self, client_id: object) -> bool:
        return client_id in self._locations

    def key(self, client_id: str, kid: str | None) -> Key:
        """The key an assertion names (``kid``), or the client's only one when it names none."""
        fetched = self._fetched.get(client_id)
        if fetched is not None:
            if kid is not None:
                try:
                    return fetched.key(kid)
                except (TokenError, SigningKeysUnavailable) as error:
                    raise InvalidClientError(description=f"no usable key {kid!r} for this client") from error
            keys = fetched.keys.get() or {}
        else:
            keys = self._file_keys(client_id)
        if kid is not None:
            if kid not in keys:
                raise InvalidClientError(description=f"no usable key {kid!r} for this client")
            return keys[kid]
        if len(keys) != 1:
            raise InvalidClientError(description="this client has several keys: name one (kid)")
        return next(iter(keys.values()))

    def _file_keys(self, client_id: str) -> dict[str, Key]:
        if client_id not in self._files:
            path = pathlib.Path(self._locations[client_id])
            self._files[client_id] = parse_key_set(json.loads(path.read_text()))
        return self._files[client_id]


class MachineClient(Client):
    """A client the deployer created: client_credentials only, no redirect URI, no person."""

    machine = True

    def __init__(self, client_id: str, method: str, scopes: Iterable[str], machines: MachineClients) -> None:
        record = ClientRecord(
            client_id=client_id,
            redirect_uris=(),
            token_endpoint_auth_method=method,
            grant_types=("client_credentials",),
        )
        super().__init__(record, tuple(scopes))
        self._machines = machines

    def check_client_secret(self, client_secret: str) -> bool:
        if self.record.token_endpoint_auth_method == KEY_METHOD or not client_secret:
            return False
        if not self._machines.may_check():
            raise InvalidClientError(
                status_code=429,
                description="too many client authentications from your address; try again later",
            )
        return self._machines.check_secret(self.get_client_id(), client_secret, self._scopes)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if self.record.token_endpoint_auth_method == KEY_METHOD:
            return method == KEY_METHOD
        return method in SECRET_METHODS

    def check_response_type(self, response_type: str) -> bool:
        return False  # no person signs in through a machine client

    def get_default_redirect_uri(self) -> str | None:
        return None

    def resolve_redirect_uri(self, requested: str | None) -> str | None:
        return None


def machine_client(client_id: str, machines: MachineClients, scopes: Iterable[str]) -> MachineClient | None:
    if client_id in machines.key_locations:
        return MachineClient(client_id, KEY_METHOD, scopes, machines)
    if client_id in machines.secret_ids:
        return MachineClient(client_id, "client_secret_basic", scopes, machines)
    return None


def secret_post(machines: MachineClients) -> Callable[[Any, Any], Client | None]:
    """client_secret_post, and for the client_credentials grant the same without client_id
    when the deployer has one secret client: mcp 1.30.0's ClientCredentialsOAuthProvider sends
    client_secret alone in the body (modelcontextprotocol/python-sdk#2128, fixed after 1.30.0).
    With several secret clients such a request names none of them and is refused."""
    from authlib.oauth2.rfc6749.authenticate_client import authenticate_client_secret_post

    only = next(iter(machines.secret_ids)) if len(machines.secret_ids) == 1 else None

    def authenticate(query_client: Any, request: Any) -> Client | None:
        form = request.form
        secret = form.get("client_secret")
        if (
            form.get("client_id")
            or not secret
            or form.get("grant_type") != "client_credentials"
            or only is None
        ):
            return authenticate_client_secret_post(query_client, request)  # type: ignore[no-any-return]
        client = query_client(only)
        return client if client is not None and client.check_client_secret(secret) else None

    return authenticate


class KeyAssertion(JWTBearerClientAssertion):  # type: ignore[misc]
    """``private_key_jwt`` (RFC 7523 §2.2) on Authlib's client assertion, with this server's
    audiences, a 5-minute ceiling on ``exp``, and each ``jti`` used once (the task table)."""

    CLIENT_AUTH_METHOD = KEY_METHOD

    def __init__(
        self,
        *,
        audiences: Iterable[str],
        keys: ClientKeys,
        first_use: Callable[[str, int], bool],
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(validate_jti=True, leeway=LEEWAY_SECONDS)
        self._audiences = list(audiences)
        self._keys = keys
        self._first_use = first_use
        self._clock = clock

    def get_audiences(self) -> list[str]:
        return self._audiences

    def extract_assertion(self, assertion: str) -> tuple[dict[str, Any], dict[str, Any]]:
        headers, claims = super().extract_assertion(assertion)
        # The key the assertion names, for resolve_client_public_key (Authlib passes only the client).
        kid = headers.get("kid")
        _KID.set(kid if isinstance(kid, str) else None)
        if headers.get("alg") not in ACCEPTED_ALGORITHMS:
            raise InvalidClientError(description="the assertion must be signed with an asymmetric key")
        return headers, claims

    def resolve_client_public_key(self, client: Client) -> Key:
        if client.get_client_id() not in self._keys:
            raise InvalidClientError(description="this client has no public key registered")
        return self._keys.key(client.get_client_id(), _KID.get())

    def verify_claims(self, claims: Any) -> None:
        aud = claims.get("aud")
        if isinstance(aud, list) and len(aud) != 1:
            raise InvalidClientError(description="the assertion's aud must be one value: this server")
        exp = claims.get("exp")
        now = int(self._clock())
        if not isinstance(exp, int) or exp > now + MAX_ASSERTION_SECONDS + LEEWAY_SECONDS:
            raise InvalidClientError(
                description=f"the assertion's exp must be at most {MAX_ASSERTION_SECONDS} s ahead"
            )
        super().verify_claims(claims)  # iss, sub, aud, exp, iss == sub, then validate_jti

    def validate_jti(self, claims: Any, jti: Any) -> bool:
        if not isinstance(jti, str) or not 0 < len(jti) <= 256:
            return False
        return self._first_use(digest(f"{claims['sub']}\0{jti}"), int(claims["exp"]) + LEEWAY_SECONDS)


class MachineGrant(BoundTokens, grants.ClientCredentialsGrant):  # type: ignore[misc]
    """The client-credentials grant for machine clients: a token for the resource asked for."""

    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = [*SECRET_METHODS, KEY_METHOD]
    server: Server
    request: Request

    def authenticate_token_endpoint_client(self) -> Client:
        # The methods this deployment's machine clients have (no private_key_jwt without keys).
        machines = self.server.machines
        assert machines is not None
        return self.server.authenticate_client(self.request, list(machines.methods))  # type: ignore[no-any-return]

    def validate_token_request(self) -> None:
        super().validate_token_request()
        self.request.resource = self.server.resource_for(self.request)
        if not isinstance(self.request.client, MachineClient):  # never reached: check_grant_type
            raise InvalidClientError(description="client_credentials is for the deployer's clients")

    def audience(self) -> str:
        return str(self.request.resource)

    def generate_token(
        self,
        user: Identity | None = None,
        scope: str | None = None,
        grant_type: str | None = None,
        expires_in: int | None = None,
        include_refresh_token: bool = True,
    ) -> dict[str, Any]:
        client: MachineClient = self.request.client
        client_id = client.get_client_id()
        machines = self.server.machines
        assert machines is not None  # the grant is registered only with machine clients
        named_by = (
            self.server.endpoints.issuer
            if client.record.token_endpoint_auth_method == KEY_METHOD
            else machines.secret_issuer
        )
        return super().generate_token(
            user=Identity(issuer=named_by, subject=client_id, name=client_id),
            scope=client.get_allowed_scope(scope),
            include_refresh_token=False,
        )


def install(
    server: Server, machines: MachineClients, client_keys: ClientKeys | None, *, clock: Callable[[], float]
) -> None:
    """Machine callers on ``server``: the client_credentials grant, client_secret_post and, for
    clients with a registered key, private_key_jwt; and their clients found by id."""
    store = server.store
    server.machines = machines
    server.find_machine = lambda client_id: machine_client(client_id, machines, server.endpoints.scopes)
    server.register_grant(MachineGrant)
    server.register_client_auth_method("client_secret_post", secret_post(machines))
    if client_keys is not None:
        server.register_client_auth_method(
            "private_key_jwt",
            KeyAssertion(
                audiences=server.endpoints.assertion_audiences,
                keys=client_keys,
                # A jti is kept until its assertion expires: used again, it is refused.
                first_use=lambda key, until: store.count(f"jti#{key}", limit=1, expires_at=until),
                clock=clock,
            ),
        )
