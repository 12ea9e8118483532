"""The 2026-07-28 era: its registry of methods and their handlers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ...codes import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from ...domain.calls import STATELESS_RETRY_MS, stateless_call_key
from ...tools.context import NeedsTask
from ...tools.input import ClientCapabilities, declared_view
from ...tools.peer import Peer
from .. import sse
from ..era import Call, Era, HttpReply, Method, MethodRegistry, Result
from ..errors import RpcError
from ..handle_tools import HandleTools, handed
from ..headers import check_param_headers
from ..hidden import start_hidden
from ..params import NoParams, TaskAnswers, TaskRef, ToolCall
from ..plain_calls import Decision, Plan, decide, decide_job, refusal
from ..request_state import Carried
from ..services import Services, server_info
from ..tool_calls import (
    ToolRequest,
    create_task,
    fetched,
    handles_listed,
    listed_tools,
    open_state,
    resolve_tool,
    run_prepare,
    run_round,
)
from . import envelope
from . import wire as w
from .held import HeldCalls

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
        self, services: Services, catalog: Callable[[], list[Method]], held: HeldCalls | None = None
    ) -> None:
        """``catalog`` makes the resource, prompt and completion methods (``CATALOG_METHODS``);
        ``held`` serves plain calls of long tools held on a streaming front."""
        self._s = services
        self._held = held or HeldCalls(
            services.tasks,
            services.inline,
            watch_ms=services.policy.hang_up_ms,
            refresh_seconds=services.policy.piece_seconds,
        )
        super().__init__(
            MethodRegistry(
                [
                    # Removed in this era (SEP-2575) and so absent, answering 404 + -32601:
                    # initialize, ping, logging/setLevel, resources/(un)subscribe, tasks/result, tasks/list.
                    Method("server/discover", self._discover, NoParams),
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

    def before(self, call: Call) -> Call:
        assert call.request is not None
        method = self.methods.get(call.request.method)
        envelope.check_envelope(call.headers, call.request, method.name_field if method else None)
        return call

    def shape(self, method: Method, result: Result) -> Result:
        # Every result of this era says what kind it is.
        if isinstance(result, dict) and "resultType" not in result:
            return {"resultType": "complete", **result}
        return result

    # -- methods ------------------------------------------------------------------

    def _discover(self, call: Call, params: NoParams) -> dict[str, Any]:
        return {
            "supportedVersions": [w.PROTOCOL_VERSION],
            "capabilities": {
                "tools": {},
                "logging": {},
                # No subscribe / listChanged: this era has no stream to push them on.
                "resources": {},
                "prompts": {},
                "completions": {},
                "extensions": {w.EXTENSION: {}},
            },
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {w.META_SERVER_INFO: server_info()},
        }

    def _tools_list(self, call: Call, params: NoParams) -> dict[str, Any]:
        return {
            "tools": listed_tools(self._s, with_task_support=True),
            "ttlMs": 0,
            "cacheScope": "private",
        }

    def _tools_call(self, call: Call, params: ToolCall) -> dict[str, Any] | HttpReply:
        if HandleTools.owns(params.name) and handles_listed(self._s):
            return HandleTools(self._s.tasks).call(call.owner, params.name, params.arguments)
        request = resolve_tool(self._s, params.name, params.arguments)
        found = request.tool
        check_param_headers(call.headers, found.input_schema(), request.arguments)
        declares = w.declares_tasks(params.meta or {})
        if found.task_support == "required" and not declares:
            raise RpcError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: tool {found.name} runs only as a task",
                w.missing_capability_data(),
            )
        carried = open_state(self._s, call, request, params.requestState)
        answers = self._answers(params, carried)
        meta = params.meta or {}
        declared = meta.get(w.META_CLIENT_CAPABILITIES)
        peer = Peer(
            capabilities=ClientCapabilities(declared if isinstance(declared, dict) else {}),
            notify=call.emit,
            log_level=meta.get(w.META_LOG_LEVEL),
            progress_token=params.progress_token(),
        )
        if declares and found.task_support != "forbidden":
            # Questions asked before the task exists are a plain input round (MRTR).
            prepared = run_prepare(request, answers, peer)
            if prepared.questions is not None:
                return {"resultType": "input_required", "inputRequests": prepared.questions}
            record = create_task(
                self._s, call, request, answers=prepared.carried, client_capabilities=declared_view(declared)
            )
            return w.create_task_result(record)
        plan_args = {"resumable": False, "accepts_sse": sse.accepts(call.headers)}
        decision = decide(self._s.policy, request, call.headers, **plan_args)
        if decision.plan is Plan.INLINE:
            try:
                return run_round(self._s, call, request, answers, carried, peer)
            except NeedsTask:
                # It handed a job off: only a (hidden) task can wait for one.
                decision = decide_job(self._s.policy, request, call.headers, **plan_args)
        if decision.plan is Plan.REFUSE:
            raise RpcError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                refusal(found, decision, self._s.policy),
                w.missing_capability_data(),
            )
        return self._long_call(call, request, answers, peer, decision)

    def _long_call(
        self, call: Call, request: ToolRequest, answers: dict[str, Any], peer: Peer, decision: Decision
    ) -> dict[str, Any] | HttpReply:
        """A plain call of a long tool: a hidden task the caller never sees as one, held on
        a streaming front (``HOLD``) or handed to the model as a task handle (``HANDLE``)."""
        assert call.request is not None
        prepared = run_prepare(request, answers, peer)
        if prepared.questions is not None:
            return {"resultType": "input_required", "inputRequests": prepared.questions}
        hold = decision.plan is Plan.HOLD
        started = start_hidden(
            self._s,
            call,
            request,
            stateless_call_key(call.owner, call.request.id, request.name, request.arguments),
            remember_ms=STATELESS_RETRY_MS,
            answers=prepared.carried,
            progress_token=peer.progress_token,
            client_capabilities=declared_view(peer.capabilities.declared),
            log_level=peer.log_level,
            watch_ms=self._s.policy.hang_up_ms if hold else None,
        )
        record = started.record
        if not hold:
            return handed(record, decision.expected)
        after = decision.hand_over_after_ms
        stream = self._held.stream(
            call.owner,
            record,
            call.request.id,
            log_level=peer.log_level,
            hand_over_at_ms=record.created_at_ms + after if after is not None else None,
            expected_seconds=decision.expected,
        )
        return HttpReply(200, headers=dict(sse.HEADERS), stream=stream)

    def _answers(self, params: ToolCall, carried: Carried) -> dict[str, Any]:
        """The answers of every round so far: this round's ``inputResponses`` (an object of
        answers, or -32602) and those its ``requestState`` carries, within their bound
        together (what the task inherits is some of them: checked here, once)."""
        if "inputResponses" in params.model_fields_set and params.inputResponses is None:
            raise RpcError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        answers = {**(params.inputResponses or {}), **carried.answers}
        self._s.tasks.limits.check_answers(answers)
        return answers

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
