"""``prompts/list`` and ``prompts/get``, for both eras.

A prompt may ask the user something before its messages exist (``ctx.ask``). In
2026-07-28 that is a multi-round-trip ``prompts/get``: an ``InputRequiredResult``,
then the same request again with ``inputResponses``. 2025-11-25 has no way to ask
inside a ``prompts/get``, so such a prompt is refused there with -32602.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import StringConstraints

from ...codes import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY
from ...tools.context import InputNeeded
from ...tools.prompts import PromptArgumentsInvalid, PromptContext
from ..calls.services import Services
from ..era import Method
from ..wire.errors import RpcError
from ..wire.exchange import Call
from ..wire.params import Key, Params
from .callers import OwnerTasks
from .resources import SHARED_LIST_TTL_MS, ListPage

META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


class GetPrompt(Params):
    name: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    # Prompt arguments are strings on the wire; the prompt's model types them.
    arguments: dict[str, str] | None = None
    # 2026-07-28: answers to what an earlier round asked (MRTR).
    inputResponses: dict[Key, Any] | None = None


class PromptMethods:
    def __init__(self, services: Services, *, hints: bool, can_ask: bool) -> None:
        self._s = services
        self._hints = hints
        self._can_ask = can_ask

    def methods(self) -> list[Method]:
        return [
            Method("prompts/list", self.list, ListPage),
            Method("prompts/get", self.get, GetPrompt, name_field="name"),
        ]

    def list(self, call: Call, params: ListPage) -> dict[str, Any]:
        if params.cursor is not None:
            raise RpcError(INVALID_PARAMS, "Invalid cursor: this list has a single page")
        result: dict[str, Any] = {"prompts": [p.describe() for p in self._s.prompts]}
        if self._hints:
            # The same prompts for every caller.
            result.update(ttlMs=SHARED_LIST_TTL_MS, cacheScope="public")
        return result

    def get(self, call: Call, params: GetPrompt) -> dict[str, Any]:
        found = self._s.prompts.get(params.name)
        if found is None:
            raise RpcError(INVALID_PARAMS, f"Unknown prompt: {params.name}")
        answers = params.inputResponses or {}
        if answers:
            self._s.tasks.limits.check_answers(answers)
        ctx = PromptContext(
            owner=call.owner, tasks=OwnerTasks(self._s.tasks, call.owner), answers=dict(answers)
        )
        try:
            return found.get(params.arguments or {}, ctx)
        except PromptArgumentsInvalid as exc:
            raise RpcError(INVALID_PARAMS, str(exc), {"errors": exc.errors}) from exc
        except InputNeeded as need:
            if not self._can_ask:
                raise RpcError(
                    INVALID_PARAMS, f"Prompt {found.name} asks the user first; get it in 2026-07-28"
                ) from need
            self._require_elicitation(call, found.name)
            return {"resultType": "input_required", "inputRequests": need.requests}

    @staticmethod
    def _require_elicitation(call: Call, name: str) -> None:
        caps = call.meta.get(META_CLIENT_CAPABILITIES)
        if not (isinstance(caps, dict) and isinstance(caps.get("elicitation"), dict)):
            raise RpcError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: prompt {name} asks the user (elicitation)",
                {"requiredCapabilities": {"elicitation": {}}},
            )
