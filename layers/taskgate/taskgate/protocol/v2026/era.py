"""The 2026-07-28 era: its registry of methods and their handlers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ...codes import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from ..calls.services import Services, fetched, server_info
from ..era import Era, Method, MethodRegistry
from ..wire import sse
from ..wire.errors import RpcError
from ..wire.exchange import Call, HttpReply, Result
from ..wire.params import NoParams, TaskAnswers, TaskRef, ToolCall
from . import envelope
from . import wire as w
from .listen import Listen, answered_at_once

if TYPE_CHECKING:
    from ..calls.flow import ToolCallFlow
    from ..calls.outcomes import Outcome
    from .held import HeldCalls
    from .listen import Listens

# What a refused tools/call says in this era (the flow's own words otherwise).
# Keyed by calls/outcomes.py's Refusal values (a StrEnum), loaded with the first tools/call.
_REFUSALS = {"task_required": "Missing required client capability: tool {tool} runs only as a task"}

# What resources.py, prompts.py and completion.py serve in this era, made on first use.
CATALOG_METHODS = (
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
)


class Era2026(Era):
    version = w.PROTOCOL_VERSION
    # The statuses SEP-2575's transport fixes; handler errors travel with 200.
    http_status: ClassVar[Mapping[int, int]] = {
        PARSE_ERROR: 400,
        INVALID_REQUEST: 400,
        INVALID_PARAMS: 400,
        HEADER_MISMATCH: 400,
        MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
        UNSUPPORTED_PROTOCOL_VERSION: 400,
        METHOD_NOT_FOUND: 404,
    }

    def __init__(
        self,
        services: Services,
        catalog: Callable[[], list[Method]],
        flow: Callable[[], ToolCallFlow],
        held: Callable[[], HeldCalls],
        listens: Callable[[], Listens] | None = None,
    ) -> None:
        """``catalog`` makes the resource, prompt and completion methods (``CATALOG_METHODS``);
        ``flow`` gives what decides what a tools/call becomes (both eras share it); ``held``
        what serves plain calls of long tools held on a streaming front; ``listens`` what
        serves subscriptions/listen (None: nothing is honoured, every listen is answered at
        once). Each is built by the first request that needs it, so that the cold start of
        any other request does not pay for it."""
        self._s = services
        self._listens = listens
        self._flow = flow
        self._held = held
        super().__init__(
            MethodRegistry(
                [
                    # Removed in this era (SEP-2575) and so absent, answering 404 + -32601:
                    # initialize, ping, logging/setLevel, resources/(un)subscribe, tasks/result, tasks/list.
                    Method("server/discover", self._discover, NoParams),
                    Method("subscriptions/listen", self._listen, Listen),
                    Method("tools/list", self._tools_list, NoParams),
                    Method("tools/call", self._tools_call, ToolCall, name_field="name"),
                    Method("tasks/get", self._tasks_get, TaskRef, name_field="taskId"),
                    Method("tasks/update", self._tasks_update, TaskAnswers, name_field="taskId"),
                    Method("tasks/cancel", self._tasks_cancel, TaskRef, name_field="taskId"),
                ]
            )
        )
        # Made by the first request for one of them, not at a cold start that serves another.
        self.methods.add_group(CATALOG_METHODS, catalog)

    def claims(self, headers: Mapping[str, str], meta: Mapping[str, Any]) -> bool:
        return envelope.claims(headers, meta)

    def before(self, call: Call, method: Method | None) -> Call:
        assert call.request is not None
        envelope.check_envelope(call.headers, call.request, method.name_field if method else None)
        return call

    def shape(self, method: Method, result: Result) -> Result:
        # Every result of this era says what kind it is.
        if isinstance(result, dict) and "resultType" not in result:
            return {"resultType": "complete", **result}
        return result

    # -- methods ------------------------------------------------------------------

    @property
    def _streams(self) -> bool:
        return self._listens is not None and self._s.policy.front.streams

    def _discover(self, call: Call, params: NoParams) -> dict[str, Any]:
        # What subscriptions/listen honours here: on a front that streams, resource updates
        # and the resource list (and, with the tasks extension, the caller's tasks); behind
        # one that buffers, nothing (a listen is answered at once), so clients poll. Tool and
        # prompt lists change only with a deploy: never declared.
        resources = {"subscribe": True, "listChanged": True} if self._streams else {}
        return {
            "supportedVersions": [w.PROTOCOL_VERSION],
            "capabilities": {
                "tools": {},
                "logging": {},
                "resources": resources,
                "prompts": {},
                "completions": {},
                "extensions": {w.EXTENSION: {}},
            },
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {w.META_SERVER_INFO: server_info()},
        }

    def _listen(self, call: Call, params: Listen) -> dict[str, Any] | HttpReply:
        if self._listens is None:
            return answered_at_once(call, params)
        return self._listens().answer(call, params)

    def _tools_list(self, call: Call, params: NoParams) -> dict[str, Any]:
        from ..calls import handle_tools  # with the first tools/list: a task's reads need none

        return {
            "tools": handle_tools.listed_tools(self._s, with_task_support=True),
            "ttlMs": 0,
            "cacheScope": "private",
        }

    def _tools_call(self, call: Call, params: ToolCall) -> dict[str, Any] | HttpReply:
        from ..calls.caller import caller_of  # with the first tools/call, as the flow is

        meta = params.meta or {}
        caller = caller_of(
            call,
            self._s.policy,
            resumable=False,  # this era's streams cannot be resumed
            answers_inline=True,  # an input_required result, then the call again with its answers
            capabilities=envelope.capabilities(meta),
            tasks=w.declares_tasks(meta),
        )
        return self._answer(call, self._flow().call(call, envelope.invocation(params), caller))

    def _answer(self, call: Call, outcome: Outcome) -> dict[str, Any] | HttpReply:
        """The flow's outcome as this era answers it."""
        from ..calls.outcomes import Answered, Asks, Created, HandedOver, Held, Refused, Streamed

        assert call.request is not None
        match outcome:
            case Created(record):
                return w.create_task_result(record)
            case Answered(result) | HandedOver(result=result):
                return result
            case Asks(requests, state):
                return w.input_required(requests, state)
            case Held(record, hand_over_at_ms, expected, rounds, round_after_ms):
                stream = self._held().stream(
                    call.owner,
                    record,
                    call.request.id,
                    log_level=call.meta.get(w.META_LOG_LEVEL),
                    hand_over_at_ms=hand_over_at_ms,
                    expected_seconds=expected,
                    rounds=rounds,
                    round_after_ms=round_after_ms,
                )
                return HttpReply(200, headers=dict(sse.HEADERS), stream=stream)
            case Refused(why, tool, message):
                text = _REFUSALS.get(why, "{message}").format(tool=tool, message=message)
                raise RpcError(MISSING_REQUIRED_CLIENT_CAPABILITY, text, w.missing_capability_data())
            case Streamed():
                raise AssertionError("a caller whose streams cannot resume is never streamed to")

    def _require_tasks(self, call: Call) -> None:
        if not w.declares_tasks(call.meta):
            raise RpcError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                "Missing required client capability",
                w.missing_capability_data(),
            )

    def _tasks_get(self, call: Call, params: TaskRef) -> dict[str, Any]:
        self._require_tasks(call)
        record = self._s.tasks.get(call.owner, params.taskId)
        if record.status.terminal:
            # In this era the result travels inline: this read is the fetch.
            record = fetched(self._s, call, record)
        return w.detailed_task(record)

    def _tasks_update(self, call: Call, params: TaskAnswers) -> dict[str, Any]:
        self._require_tasks(call)
        self._s.tasks.submit_input(call.owner, params.taskId, params.inputResponses)
        self._s.audit(
            "input_submitted",
            {"taskId": params.taskId, "owner": call.owner, "keys": sorted(params.inputResponses)},
        )
        return {}

    def _tasks_cancel(self, call: Call, params: TaskRef) -> dict[str, Any]:
        self._require_tasks(call)
        record = self._s.tasks.cancel(call.owner, params.taskId).record
        self._s.audit(
            "cancel_requested", {"taskId": params.taskId, "owner": call.owner, "status": record.status.value}
        )
        # Acknowledged either way: in this era a cancel of a finished task is not an error.
        return {}
