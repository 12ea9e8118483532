"""``tasks/list`` cursors, sealed like ``requestState``.

The store's own position (a DynamoDB key, base64 JSON) was handed out as the cursor:
garbage and another caller's cursors were refused, but a well-formed one the server
never issued was accepted. A cursor is now the store's position sealed under the same
key and scheme as ``requestState`` (AES-256-GCM, bound to the caller and to this use,
with an expiry), so only a cursor this server issued to this caller, unchanged, opens.
"""

from __future__ import annotations

from ...domain.errors import InvalidCursor
from .errors import RpcError
from .request_state import Carried, RequestStates

# Long enough to walk a list page by page at any pace a client keeps.
CURSOR_TTL_MS = 3_600_000
# What a sealed cursor is for: neither a requestState nor another list's cursor opens here.
_METHOD = "tasks/list"
_TARGET = "cursor"


class Cursors:
    def __init__(self, states: RequestStates) -> None:
        self._states = states

    def seal(self, position: str, owner: str) -> str:
        return self._states.seal(
            Carried({}, position),
            owner=owner,
            method=_METHOD,
            target=_TARGET,
            arguments=None,
            ttl_ms=CURSOR_TTL_MS,
        )

    def open(self, cursor: str, owner: str) -> str:
        """The store's position, or InvalidCursor (-32602) for anything this server did not
        issue to ``owner``, altered, or issued over an hour ago."""
        try:
            carried = self._states.open(cursor, owner=owner, method=_METHOD, target=_TARGET, arguments=None)
        except RpcError:
            raise InvalidCursor("not one this server issued to you, or it has expired") from None
        if not isinstance(carried.state, str):
            raise InvalidCursor("not one this server issued to you, or it has expired")
        return carried.state
