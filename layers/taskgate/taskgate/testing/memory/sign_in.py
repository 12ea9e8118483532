"""``SignInStore`` (taskgate/auth) over a dict."""

from __future__ import annotations

import dataclasses
import threading
from typing import TYPE_CHECKING, Any

from ...auth.state import ClientRecord, CodeRecord, CodeUse, GrantRecord, PendingSignIn, digest

if TYPE_CHECKING:
    pass


class MemorySignInStore:
    """``SignInStore`` (taskgate/auth) over a dict, with the DynamoDB adapter's semantics:
    expired items are gone to reads, and every conditional write decides once."""

    def __init__(self) -> None:
        self.items: dict[str, tuple[Any, int]] = {}
        self.counters: dict[str, int] = {}
        self.used_codes: set[str] = set()
        self._lock = threading.Lock()

    def _live(self, key: str, now: int) -> Any:
        found = self.items.get(key)
        return found[0] if found and found[1] > now else None

    def add_client(self, client: ClientRecord, *, expires_at: int) -> None:
        with self._lock:
            assert f"client#{client.client_id}" not in self.items
            self.items[f"client#{client.client_id}"] = (client, expires_at)

    def get_client(self, client_id: str, now: int) -> ClientRecord | None:
        found: ClientRecord | None = self._live(f"client#{client_id}", now)
        return found

    def keep_client(self, client_id: str, *, expires_at: int) -> None:
        with self._lock:
            found = self.items.get(f"client#{client_id}")
            if found and found[1] < expires_at:
                self.items[f"client#{client_id}"] = (found[0], expires_at)

    def count(self, key: str, *, limit: int, expires_at: int) -> bool:
        with self._lock:
            if self.counters.get(key, 0) >= limit:
                return False
            self.counters[key] = self.counters.get(key, 0) + 1
            return True

    def start_sign_in(self, pending: PendingSignIn) -> None:
        with self._lock:
            self.items[f"pending#{pending.pending_id}"] = (pending, pending.expires_at)

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
        with self._lock:
            found: PendingSignIn | None = self._live(f"pending#{pending_id}", now)
            if found is None or found.stage != stage:
                return None
            if expect_csrf is not None and found.csrf != expect_csrf:
                return None
            after = dataclasses.replace(found, stage=to, **changes)  # type: ignore[arg-type]
            self.items[f"pending#{pending_id}"] = (after, found.expires_at)
            return after

    def add_code(self, code: CodeRecord) -> None:
        with self._lock:
            self.items[f"code#{code.code_digest}"] = (code, code.expires_at)

    def use_code(self, code_digest: str, now: int) -> tuple[CodeUse, CodeRecord | None]:
        with self._lock:
            record: CodeRecord | None = self._live(f"code#{code_digest}", now)
            if record is None:
                return CodeUse.UNKNOWN, None
            if code_digest in self.used_codes:
                return CodeUse.REPLAYED, record
            self.used_codes.add(code_digest)
            return CodeUse.FIRST, record

    def add_grant(self, grant: GrantRecord) -> None:
        with self._lock:
            assert f"grant#{grant.family}" not in self.items
            self.items[f"grant#{grant.family}"] = (grant, grant.expires_at)

    def get_grant(self, family: str, now: int) -> GrantRecord | None:
        found: GrantRecord | None = self._live(f"grant#{family}", now)
        return found

    def rotate_grant(
        self, family: str, *, old_digest: str, new_digest: str, expires_at: int, now: int
    ) -> bool:
        with self._lock:
            found: GrantRecord | None = self._live(f"grant#{family}", now)
            if found is None or found.current_digest != old_digest:
                return False
            self.items[f"grant#{family}"] = (
                dataclasses.replace(found, current_digest=new_digest),
                expires_at,
            )
            return True

    def revoke_grant(self, family: str) -> None:
        with self._lock:
            self.items.pop(f"grant#{family}", None)

    def has_consent(self, owner: str, client_id: str, redirect_host: str, now: int) -> bool:
        return (
            self._live(f"consent#{digest(chr(0).join((owner, client_id, redirect_host)))}", now) is not None
        )

    def add_consent(self, owner: str, client_id: str, redirect_host: str, *, expires_at: int) -> None:
        with self._lock:
            self.items[f"consent#{digest(chr(0).join((owner, client_id, redirect_host)))}"] = (
                True,
                expires_at,
            )

    def cached_document(self, url: str, now: int) -> str | None:
        found: str | None = self._live(f"cimd#{url}", now)
        return found

    def cache_document(self, url: str, document: str, *, expires_at: int) -> None:
        with self._lock:
            self.items[f"cimd#{url}"] = (document, expires_at)
