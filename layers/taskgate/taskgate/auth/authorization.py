"""This stack's OAuth 2.1 authorization server, on Authlib: what MCP clients sign in with.

Authlib does the protocol (request validation, the authorization-code grant, PKCE, the
refresh-token grant, client authentication, RFC 7591 registration, RFC 9207's ``iss``);
this module gives it a store (state.py), the clients (registered, or described by a
metadata document), the tokens (jwt.OwnTokens) and the few rules MCP adds:

- PKCE with S256 on every authorization request (Authlib's ``CodeChallenge`` makes it
  optional at the authorization endpoint; ``RequiredS256`` does not);
- the ``resource`` parameter (RFC 8707): absent (the HTTP API's /mcp) or exactly one of the
  stack's endpoints (that /mcp, and the streaming endpoint's with StreamingApi) at the
  authorization request, and nothing else at the token endpoint; the grant is for that one
  resource, and every token it gives (codes, refreshes) has it alone as its audience;
- codes single-use (a conditional write) and a minute long; a replayed code revokes the
  refresh tokens it gave; refresh tokens rotated on every use, a reused one revokes its family;
- registration bounded: body size, number of redirect URIs, and a rate (routes.py).

The person is signed in upstream (upstream.py) and asked to consent per client (routes.py)
between the client's authorization request and the code it receives.
"""

from __future__ import annotations

import secrets
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import parse_qsl

from authlib.oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import (
    AuthorizationCodeMixin,
    ClientMixin,
    InvalidClientError,
    InvalidGrantError,
    InvalidRequestError,
    JsonPayload,
    JsonRequest,
    OAuth2Error,
    OAuth2Payload,
    OAuth2Request,
    TokenMixin,
    grants,
)
from authlib.oauth2.rfc7591 import (
    ClientRegistrationEndpoint,
    InvalidClientMetadataError,
    InvalidRedirectURIError,
)
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc9207 import IssuerParameter

from .cimd import ClientDocumentError, MetadataDocuments, is_document_url
from .endpoints import AUTH_METHODS, Endpoints
from .jwt import OwnTokens
from .redirects import refusal, resolve
from .state import ClientRecord, CodeRecord, CodeUse, GrantRecord, SignInStore, digest
from .upstream import Identity

if TYPE_CHECKING:
    from .machines import MachineClients

CODE_SECONDS = 60
UNUSED_CLIENT_SECONDS = 24 * 3600
MAX_REDIRECT_URIS = 10
MAX_CLIENT_ID_LENGTH = 2000


class InvalidTargetError(OAuth2Error):  # type: ignore[misc]
    """RFC 8707 §2: the ``resource`` is not one this server issues tokens for."""

    error = "invalid_target"


class RegistrationsExhausted(OAuth2Error):  # type: ignore[misc]
    """The hour's registrations, from everyone, are used up."""

    error = "slow_down"
    status_code = 429

    def get_headers(self) -> list[tuple[str, str]]:
        return [*super().get_headers(), ("Retry-After", "3600")]


def error_description(text: str) -> str:
    """``text`` as an ``error_description`` may carry it (RFC 6749 §5.2: printable ASCII but
    ``"`` and ``\\``; Authlib raises on anything else): a caller's URL or host in it must not
    turn a refusal into a 503."""
    return "".join(ch if 0x20 <= ord(ch) <= 0x7E and ch not in '"\\' else "?" for ch in text)[:300]


# ---- Authlib's models over the store's records -----------------------------------------


class Client(ClientMixin):  # type: ignore[misc]
    machine = False  # a client the deployer created for client_credentials (machines.py)

    def __init__(self, record: ClientRecord, scopes: Sequence[str]) -> None:
        self.record = record
        self._scopes = scopes

    def get_client_id(self) -> str:
        return self.record.client_id

    def get_default_redirect_uri(self) -> str | None:
        uris = self.record.redirect_uris
        return uris[0] if len(uris) == 1 and refusal(uris[0]) is None else None

    def resolve_redirect_uri(self, requested: str | None) -> str | None:
        """Where the person is sent for ``requested`` (redirects.resolve: built from what the
        client registered, never echoed), or the one registered URI when none is named."""
        if not requested:
            return self.get_default_redirect_uri()
        return resolve(self.record.redirect_uris, requested)

    def get_allowed_scope(self, scope: str | None) -> str:
        if not scope:
            return " ".join(self._scopes)  # RFC 6749 §3.3: the default is everything there is
        return " ".join(s for s in scope.split() if s in self._scopes)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return resolve(self.record.redirect_uris, redirect_uri) is not None

    def check_client_secret(self, client_secret: str) -> bool:
        expected = self.record.client_secret_digest
        return expected is not None and secrets.compare_digest(expected, digest(client_secret))

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return endpoint != "token" or method == self.record.token_endpoint_auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.record.grant_types


class AuthorizationCode(AuthorizationCodeMixin):  # type: ignore[misc]
    def __init__(self, record: CodeRecord) -> None:
        self.record = record
        self.code_challenge = record.code_challenge
        self.code_challenge_method = record.code_challenge_method

    def get_redirect_uri(self) -> str:
        return self.record.redirect_uri

    def get_scope(self) -> str:
        return self.record.scope


class RefreshCredential(TokenMixin):  # type: ignore[misc]
    def __init__(self, grant: GrantRecord, presented: str) -> None:
        self.grant = grant
        self.presented_digest = presented

    def check_client(self, client: Client) -> bool:
        return bool(client.get_client_id() == self.grant.client_id)

    def get_scope(self) -> str:
        return self.grant.scope

    def get_expires_in(self) -> int:
        return 0

    def is_expired(self) -> bool:
        return False

    def is_revoked(self) -> bool:
        return False


def _identity(issuer: str, subject: str) -> Identity:
    return Identity(issuer=issuer, subject=subject, name=subject)


# ---- requests and responses between Starlette and Authlib --------------------------------


class Payload(OAuth2Payload):  # type: ignore[misc]
    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self._datalist: defaultdict[str, list[str]] = defaultdict(list)
        for key, value in pairs:
            self._datalist[key].append(value)
        self._data = {key: values[0] for key, values in self._datalist.items()}

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> defaultdict[str, list[str]]:
        return self._datalist


class Request(OAuth2Request):  # type: ignore[misc]
    """A form or query request, read in full before Authlib sees it."""

    def __init__(
        self, method: str, uri: str, pairs: Iterable[tuple[str, str]], headers: Mapping[str, str]
    ) -> None:
        from starlette.datastructures import Headers

        # Case-insensitive, as HTTP's are: Authlib reads "Authorization" and Starlette hands
        # them over lowercased, so client_secret_basic was never seen.
        super().__init__(method, uri, headers=Headers(headers=dict(headers)))
        self.payload = Payload(pairs)

    @property
    def args(self) -> dict[str, str]:
        return dict(self.payload.data)

    @property
    def form(self) -> dict[str, str]:
        return dict(self.payload.data)


class JsonBody(JsonPayload):  # type: ignore[misc]
    def __init__(self, data: Any) -> None:
        self._data = data

    @property
    def data(self) -> Any:
        return self._data


@dataclass
class Answer:
    """What Authlib answers, before it becomes an HTTP response."""

    status: int
    body: Any
    headers: list[tuple[str, str]] = field(default_factory=list)

    @property
    def location(self) -> str | None:
        return next((v for k, v in self.headers if k.lower() == "location"), None)

    @location.setter
    def location(self, value: str) -> None:
        self.headers = [(k, v) for k, v in self.headers if k.lower() != "location"] + [("Location", value)]


# ---- the grants ----------------------------------------------------------------------------


class RequiredS256(CodeChallenge):  # type: ignore[misc]
    """PKCE on every authorization request, S256 only (OAuth 2.1, MCP)."""

    SUPPORTED_CODE_CHALLENGE_METHOD: ClassVar[list[str]] = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("PKCE is required: send code_challenge with code_challenge_method S256")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("code_challenge_method must be S256")
        super().validate_code_challenge(grant, redirect_uri)


class ResourceIndicator:
    """RFC 8707: the resource a client asks for is one of the stack's MCP endpoints, or
    nothing (meaning the first). One per grant: a token is good at one endpoint only, so a
    token leaked from one is no key to the other."""

    def __init__(self, resources: Sequence[str]) -> None:
        self.resources = tuple(resources)

    def __call__(self, grant: Any) -> None:
        grant.register_hook("after_validate_authorization_request_payload", self.at_authorization)
        grant.register_hook("after_validate_token_request", self.at_token)

    def requested(self, request: Request) -> str | None:
        values = request.payload.datalist.get("resource", [])
        if len(values) > 1:
            raise InvalidTargetError("one resource only: the MCP endpoint the token is for")
        if values and values[0] not in self.resources:
            raise InvalidTargetError(f"this server issues tokens for {' and '.join(self.resources)} only")
        return values[0] if values else None

    def at_authorization(self, grant: Any, redirect_uri: str) -> None:
        grant.request.resource = self.requested(grant.request) or self.resources[0]

    def at_token(self, grant: Any, result: Any) -> None:
        # RFC 8707 §2.2: the resource at the token endpoint must be one the grant is for.
        asked, granted = self.requested(grant.request), grant.request.authorization_code.record.resource
        if asked is not None and asked != granted:
            raise InvalidTargetError(f"this code is for {granted}")


class BoundTokens:
    """A grant whose tokens name its one resource as their audience (RFC 8707): Authlib's
    token generator is told the client, the person and the scope, not the resource."""

    server: Server
    request: Request

    def audience(self) -> str:
        raise NotImplementedError

    def generate_token(
        self,
        user: Identity | None = None,
        scope: str | None = None,
        grant_type: str | None = None,
        expires_in: int | None = None,
        include_refresh_token: bool = True,
    ) -> dict[str, Any]:
        assert user is not None
        return self.server.issue(
            client=self.request.client,
            user=user,
            scope=scope,
            audience=self.audience(),
            include_refresh_token=include_refresh_token,
        )


class CodeGrant(BoundTokens, grants.AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = list(AUTH_METHODS)
    server: Server

    @staticmethod
    def validate_authorization_redirect_uri(request: Request, client: Client) -> str:
        # Authlib would send the person to the requested string once the client's check
        # passes; the URI used from here on (the redirect, the code's record) is the one
        # resolved from the client's registration.
        requested = request.payload.redirect_uri
        resolved = client.resolve_redirect_uri(requested)
        if resolved is None:
            if requested:
                raise InvalidRequestError("Redirect URI is not supported by client.")
            raise InvalidRequestError("Missing 'redirect_uri' in request.", state=request.payload.state)
        return resolved

    def audience(self) -> str:
        record: CodeRecord = self.request.authorization_code.record
        return record.resource

    def save_authorization_code(self, code: str, request: Request) -> None:
        user: Identity = request.user
        data = request.payload.data
        self.server.store.add_code(
            CodeRecord(
                code_digest=digest(code),
                client_id=request.client.get_client_id(),
                redirect_uri=self.redirect_uri,
                scope=request.scope or "",
                resource=getattr(request, "resource", self.server.endpoints.resource),
                code_challenge=data["code_challenge"],
                code_challenge_method=data["code_challenge_method"],
                identity_issuer=user.issuer,
                subject=user.subject,
                family=secrets.token_urlsafe(18),
                expires_at=self.server.now() + CODE_SECONDS,
            )
        )

    def query_authorization_code(self, code: str, client: Client) -> AuthorizationCode | None:
        use, record = self.server.store.use_code(digest(code), self.server.now())
        if use is CodeUse.REPLAYED and record is not None:
            # RFC 6749 §4.1.2: a code used twice revokes what it gave the first time.
            self.server.store.revoke_grant(record.family)
            return None
        if record is None or record.client_id != client.get_client_id():
            return None
        return AuthorizationCode(record)

    def delete_authorization_code(self, authorization_code: AuthorizationCode) -> None:
        pass  # already used up by query_authorization_code's conditional write

    def authenticate_user(self, authorization_code: AuthorizationCode) -> Identity:
        record = authorization_code.record
        return _identity(record.identity_issuer, record.subject)


class RefreshGrant(BoundTokens, grants.RefreshTokenGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = list(AUTH_METHODS)
    INCLUDE_NEW_REFRESH_TOKEN = True
    server: Server

    def audience(self) -> str:
        credential: RefreshCredential = self.request.refresh_token
        return credential.grant.resource

    def authenticate_refresh_token(self, refresh_token: str) -> RefreshCredential | None:
        family, _, secret = refresh_token.partition(".")
        if not family or not secret or len(refresh_token) > 200:
            return None
        grant = self.server.store.get_grant(family, self.server.now())
        if grant is None:
            return None
        if grant.client_id != self.request.client.get_client_id():
            # Another client's token: refused, and nothing of that client's revoked (RFC 7009
            # §2.1's rule for revocation holds for the revocation reuse detection does).
            return None
        presented = digest(secret)
        if not secrets.compare_digest(presented, grant.current_digest):
            # A refresh token used again after it was rotated: someone else has a copy.
            self.server.store.revoke_grant(family)
            return None
        requested = self.request.payload.data.get("resource")
        if requested is not None and requested != grant.resource:
            raise InvalidTargetError(f"this refresh token is for {grant.resource}")
        return RefreshCredential(grant, presented)

    def authenticate_user(self, credential: RefreshCredential) -> Identity:
        return _identity(credential.grant.identity_issuer, credential.grant.subject)

    def revoke_old_credential(self, credential: RefreshCredential) -> None:
        pass  # the rotation in save_token replaced it


class Registration(ClientRegistrationEndpoint):  # type: ignore[misc]
    server: Server

    def authenticate_token(self, request: JsonRequest) -> bool:
        return True  # open registration (RFC 7591 §3), bounded by size and rate in routes.py

    def get_server_metadata(self) -> dict[str, Any]:
        # What a client may register as: never client_credentials or private_key_jwt, which
        # are for the deployer's own clients.
        metadata = self.server.endpoints.metadata(for_registration=True)
        metadata.pop("scopes_supported")  # a client asking for other scopes gets ours, not an error
        return metadata

    def generate_client_id(self, request: JsonRequest) -> str:
        return "tg-" + secrets.token_urlsafe(18)

    def generate_client_info(self, request: JsonRequest) -> dict[str, Any]:
        info: dict[str, Any] = super().generate_client_info(request)
        if request.payload.data.get("token_endpoint_auth_method", "client_secret_basic") == "none":
            info.pop("client_secret", None)  # a public client is issued no secret
            info.pop("client_secret_expires_at", None)
        return info

    def save_client(
        self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: JsonRequest
    ) -> Client:
        uris = client_metadata.get("redirect_uris")
        if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
            raise InvalidRedirectURIError(f"redirect_uris: one to {MAX_REDIRECT_URIS} URIs")
        for index, uri in enumerate(uris):
            problem = refusal(uri)
            if problem:
                # By position: the URI itself may hold what an error description must not.
                raise InvalidRedirectURIError(f"redirect_uris[{index}]: {problem}")
        grant_types = client_metadata.get("grant_types") or ["authorization_code"]
        if not set(grant_types) <= {"authorization_code", "refresh_token"}:
            raise InvalidClientMetadataError("grant_types: authorization_code and refresh_token only")
        response_types = client_metadata.get("response_types") or ["code"]
        if response_types != ["code"]:
            raise InvalidClientMetadataError("response_types: code only")
        name = client_metadata.get("client_name")
        if name is not None and (not isinstance(name, str) or len(name) > 200):
            raise InvalidClientMetadataError("client_name: at most 200 characters")
        method = client_metadata.get("token_endpoint_auth_method", "client_secret_basic")
        secret = client_info.get("client_secret")
        scopes = self.server.endpoints.scopes
        # Counted once the request is known good: refused ones count only against their own
        # address (routes.py), so no stranger can spend everyone's hour with junk.
        hour = self.server.now() // 3600
        if not self.server.store.count(
            f"register#{hour}", limit=self.server.registrations_per_hour, expires_at=(hour + 2) * 3600
        ):
            raise RegistrationsExhausted("too many registrations; try again later")
        record = ClientRecord(
            client_id=client_info["client_id"],
            redirect_uris=tuple(uris),
            token_endpoint_auth_method=method,
            client_secret_digest=digest(secret) if secret and method != "none" else None,
            client_name=name,
            grant_types=tuple(grant_types),
            scope=" ".join(s for s in str(client_metadata.get("scope") or "").split() if s in scopes) or None,
            issued_at=int(client_info["client_id_issued_at"]),
        )
        self.server.store.add_client(record, expires_at=self.server.now() + UNUSED_CLIENT_SECONDS)
        return Client(record, scopes)


class Issuer(IssuerParameter):  # type: ignore[misc]
    def __init__(self, issuer: str) -> None:
        self.issuer = issuer

    def get_issuer(self) -> str:
        return self.issuer


# ---- the server ------------------------------------------------------------------------------


class Server(AuthorizationServer):  # type: ignore[misc]
    def __init__(
        self,
        *,
        endpoints: Endpoints,
        store: SignInStore,
        tokens: OwnTokens,
        documents: MetadataDocuments | None,
        access_token_seconds: int = 3600,
        refresh_token_days: int = 30,
        registrations_per_hour: int = 200,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(scopes_supported=list(endpoints.scopes))
        self.registrations_per_hour = registrations_per_hour
        self.endpoints = endpoints
        self.store = store
        self.tokens = tokens
        self.documents = documents
        self.access_token_seconds = access_token_seconds
        self.refresh_token_seconds = refresh_token_days * 86_400
        self._clock = clock
        self.resource_indicator = ResourceIndicator(endpoints.resources)
        self.register_grant(CodeGrant, [RequiredS256(required=True), self.resource_indicator])
        self.register_grant(RefreshGrant)
        self.register_endpoint(Registration())
        self.register_extension(Issuer(endpoints.issuer))
        # Machine callers (client_credentials) are added by machine_grant.install, which sets
        # both: the server itself knows no grant beyond a person's.
        self.machines: MachineClients | None = None
        self.find_machine: Callable[[str], Client | None] | None = None

    def now(self) -> int:
        return int(self._clock())

    def resource_for(self, request: Request) -> str:
        """The resource a token request asks for (RFC 8707), or the default one."""
        return self.resource_indicator.requested(request) or self.endpoints.resource

    def query_client(self, client_id: str) -> Client | None:
        if not client_id or len(client_id) > MAX_CLIENT_ID_LENGTH:
            return None
        if self.find_machine is not None:
            found_machine = self.find_machine(client_id)
            if found_machine is not None:
                return found_machine
        if is_document_url(client_id):
            if self.documents is None:
                return None
            try:
                record = self.documents.client(client_id)
            except ClientDocumentError as error:
                # Said to whoever asked (a page, or the token endpoint's answer): why this URL
                # describes no client now, rather than as if it named nobody.
                raise InvalidClientError(
                    description=error_description(f"client metadata document: {error}")
                ) from error
        else:
            found = self.store.get_client(client_id, self.now())
            if found is None:
                return None
            record = found
        return Client(record, self.endpoints.scopes)

    def issue(
        self, *, client: Client, user: Identity, scope: str | None, audience: str, include_refresh_token: bool
    ) -> dict[str, Any]:
        """The token response of a grant (BoundTokens): an access token for ``audience``."""
        scopes = (scope or "").split()
        access, _ = self.tokens.mint(
            subject=user.subject,
            identity_issuer=user.issuer,
            client_id=client.get_client_id(),
            scope=scopes,
            ttl_seconds=self.access_token_seconds,
            audience=audience,
        )
        token: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.access_token_seconds,
            "scope": " ".join(scopes),
        }
        if include_refresh_token:
            token["refresh_token"] = secrets.token_urlsafe(32)  # its family is prefixed in save_token
        return token

    def save_token(self, token: dict[str, Any], request: Request) -> None:
        secret = token.get("refresh_token")
        client_id = request.client.get_client_id()
        if request.client.machine:
            return  # kept nowhere: the deployer's configuration names it
        # A client that is used lives on as long as its refresh tokens do.
        if not request.client.record.metadata_document:
            self.store.keep_client(client_id, expires_at=self.now() + self.refresh_token_seconds)
        if secret is None:
            return
        expires_at = self.now() + self.refresh_token_seconds
        if request.authorization_code is not None:
            code: CodeRecord = request.authorization_code.record
            self.store.add_grant(
                GrantRecord(
                    family=code.family,
                    current_digest=digest(secret),
                    client_id=client_id,
                    scope=token["scope"],
                    resource=code.resource,
                    identity_issuer=code.identity_issuer,
                    subject=code.subject,
                    expires_at=expires_at,
                )
            )
            token["refresh_token"] = f"{code.family}.{secret}"
            return
        credential: RefreshCredential = request.refresh_token
        family = credential.grant.family
        if not self.store.rotate_grant(
            family,
            old_digest=credential.presented_digest,
            new_digest=digest(secret),
            expires_at=expires_at,
            now=self.now(),
        ):
            raise InvalidGrantError("the refresh token was used already")
        token["refresh_token"] = f"{family}.{secret}"

    def create_oauth2_request(self, request: Request) -> Request:
        return request

    def create_json_request(self, request: JsonRequest) -> JsonRequest:
        return request

    def handle_response(self, status: int, body: Any, headers: Iterable[tuple[str, str]]) -> Answer:
        return Answer(status, body, list(headers))

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass

    # ---- what routes.py calls -----------------------------------------------------------

    def authorization_request(self, query: str) -> Request:
        return Request(
            "GET", f"{self.endpoints.authorize}?{query}", parse_qsl(query, keep_blank_values=True), {}
        )

    def check_authorization(self, query: str) -> Any:
        """The validated grant for a client's authorization request; an OAuth2Error otherwise
        (answered with a page: routes.py)."""
        return self.get_consent_grant(self.authorization_request(query))

    def approve(self, query: str, identity: Identity) -> Answer:
        """The code for an authorization request the person approved (checked again: the
        client may have gone in the meantime)."""
        request = self.authorization_request(query)
        try:
            grant = self.get_consent_grant(request, end_user=identity)
        except OAuth2Error as error:
            return self.handle_error_response(request, error)  # type: ignore[no-any-return]
        answer: Answer = self.create_authorization_response(request, grant_user=identity, grant=grant)
        return answer

    def deny(self, query: str) -> Answer:
        request = self.authorization_request(query)
        try:
            grant = self.get_consent_grant(request)
        except OAuth2Error as error:
            return self.handle_error_response(request, error)  # type: ignore[no-any-return]
        answer: Answer = self.create_authorization_response(request, grant_user=None, grant=grant)
        return answer

    def token(self, method: str, pairs: Sequence[tuple[str, str]], headers: Mapping[str, str]) -> Answer:
        answer: Answer = self.create_token_response(Request(method, self.endpoints.token, pairs, headers))
        return answer

    def register(self, body: Any, headers: Mapping[str, str]) -> Answer:
        request = JsonRequest("POST", self.endpoints.register, dict(headers))
        request.payload = JsonBody(body)
        answer: Answer = self.create_endpoint_response(Registration.ENDPOINT_NAME, request)
        return answer
