"""Where moto 5.2 differs from AWS in ways that matter to taskgate, made to behave like AWS.

Each fix is scoped to the embedded runtime and tests; product code talks to
moto exactly as it talks to AWS.

1. ``start_execution`` deep-copies the state machine including its past
   executions, whose worker threads hold locks: the second execution of a
   machine fails with "cannot pickle '_thread.RLock'". We copy it without them.
2. ``stop_execution`` on an execution parked on a task token leaves it RUNNING
   (the callback keeps waiting). AWS stops it at once; we wake the callback.
   On an execution that already ended, moto raises; AWS does not, nor do we.
   A stop that lands while a step runs can leave moto's program in an error
   state, reported FAILED; AWS reports every stopped execution ABORTED, and so
   do we.
3. Lambda invocation needs a Docker engine. We run the real worker handler
   in-process instead, through the one method every invocation passes (or hand it
   to ``sam local invoke``: taskgate.local.endpoint). ``invoked_version()`` says which
   published version the state machine invoked, as Lambda's context does.
4. A Catch whose ``Next`` is the state that failed (RunTool's continue loop) ends
   the execution in moto: it decides "Next was overridden" by comparing names.
   We mark a caught error explicitly so the state honours the Catch, as AWS does.
5. moto is not thread-safe where AWS is atomic: its DynamoDB applies an update one
   attribute at a time on the live item (a concurrent read can see "completed"
   without the result) and iterates tables while other threads write; its ASL
   parser keeps a class-level stack, so two executions starting at once corrupt
   each other. Each DynamoDB request and each parse runs under a lock here. The
   locks never nest into other moto calls, so they cannot deadlock.
6. The ``.sync`` integrations with Step Functions, Batch and ECS call those services
   with the state's parameters as the ASL names them (``StateMachineArn``) and read
   the answers as Step Functions reports them (``ExecutionArn``), but moto 5.2 ships
   the step that maps one spelling to the other as a no-op (the port of LocalStack's
   parser left out its two bodies), so every such state fails. We put them back: the
   parameters are matched to the service's own member names, the answers renamed the
   way Step Functions does.
7. ``glue:startJobRun.sync`` fails every run as it ends: the wait's clean-up stops the
   task-token listener that every other ``.sync`` service sets up and Glue's does not
   (``None.interrupt_all()``). We give Glue's integration the same listener.
8. moto leaves a service's timestamps in the execution's data as Python datetimes (AWS's
   state data is JSON), and ``States.JsonToString`` then fails on them. We encode them
   as moto's own execution history does (ISO 8601).
9. ``GetExecutionHistory`` ignores ``reverseOrder`` and ``maxResults``: every page is the
   whole history, oldest first, so "the latest event" reads the first. We honour both
   (one page: the events are already in memory; no ``nextToken``).
10. A task state whose heartbeat did not come in time fails with ``States.Timeout``
    (moto treats every timeout alike); AWS fails it with ``States.HeartbeatTimeout``,
    and so do we.
"""

from __future__ import annotations

import copy
import json
import logging
import threading
import traceback
from collections.abc import Callable
from typing import Any

from ..domain.worker import SIGNALS


class LambdaError(Exception):
    """Raised by an ``invoke`` that ran the worker elsewhere (``sam local invoke``) and got
    Lambda's error payload back: passed on as it is, as AWS passes it to the state machine."""

    def __init__(self, payload: dict[str, Any], logs: str = "") -> None:
        super().__init__(payload.get("errorMessage", ""))
        self.payload = payload
        self.logs = logs


_applied = False
# Held for every DynamoDB request (fix 5). Tests that read moto's backend directly
# take it too, so they never see an update half-applied.
DYNAMODB_LOCK = threading.RLock()
_invoke: Callable[[dict[str, Any]], dict[str, Any]] | None = None
logger = logging.getLogger(__name__)
_invocation = threading.local()


def invoked_version() -> str:
    """The version of the function this thread's invocation runs ("$LATEST" unpublished)."""
    return str(getattr(_invocation, "version", "$LATEST"))


def _deepcopy_without_executions(self: Any, memo: dict[int, Any]) -> Any:
    cls = self.__class__
    clone = cls.__new__(cls)
    memo[id(self)] = clone
    for key, value in self.__dict__.items():
        setattr(clone, key, [] if key == "executions" else copy.deepcopy(value, memo))
    return clone


def apply(invoke: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Patch moto once per process; ``invoke(event)`` runs the worker and returns its result."""
    global _applied, _invoke
    _invoke = invoke
    if _applied:
        return
    from moto.awslambda.models import LambdaFunction
    from moto.stepfunctions.models import StateMachineInstance
    from moto.stepfunctions.parser.backend.execution import Execution

    StateMachineInstance.__deepcopy__ = _deepcopy_without_executions  # type: ignore[attr-defined]

    original_stop = Execution.stop

    def stop(self: Any, stop_date: Any, error: str | None, cause: str | None) -> None:
        worker = getattr(self, "exec_worker", None)
        env = getattr(worker, "env", None)
        if env is None:
            # Already finished: AWS answers a stop of an ended execution quietly;
            # moto 5.2 raises AttributeError.
            return
        self.taskgate_stopped = True
        original_stop(self, stop_date, error, cause)
        pool = getattr(env, "callback_pool_manager", None)
        for endpoint in list(getattr(pool, "_pool", {}).values()):
            endpoint.interrupt_all()

    Execution.stop = stop  # type: ignore[method-assign]

    from moto.stepfunctions.parser.api import ExecutionStatus
    from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication

    original_reflect = BaseExecutionWorkerCommunication._reflect_execution_status

    def reflect(self: Any) -> None:
        original_reflect(self)  # type: ignore[no-untyped-call]
        if getattr(self.execution, "taskgate_stopped", False):
            self.execution.exec_status = ExecutionStatus.ABORTED

    BaseExecutionWorkerCommunication._reflect_execution_status = reflect  # type: ignore[method-assign]

    def invoke_in_process(self: Any, event: Any = None) -> tuple[str, bool, str]:
        payload = json.loads(event) if isinstance(event, (str, bytes)) else (event or {})
        _invocation.version = str(getattr(self, "version", "$LATEST"))
        try:
            if _invoke is None:
                raise RuntimeError("moto_fixes.apply() was not called")
            return json.dumps(_invoke(payload)), False, ""
        except LambdaError as exc:
            return json.dumps(exc.payload), True, exc.logs
        except Exception as exc:
            # Parking and continuing are signalled as errors by design (see task.asl.json).
            if not isinstance(exc, SIGNALS):
                logger.exception("worker invocation failed")
            # Shaped like Lambda's own error payload, so Catch/Retry see what AWS would send.
            body = {"errorType": type(exc).__name__, "errorMessage": str(exc)}
            return json.dumps(body), True, traceback.format_exc()

    LambdaFunction._invoke_lambda = invoke_in_process  # type: ignore[method-assign]

    from moto.stepfunctions.parser.asl.component.common.catch.catcher_decl import CatcherDecl
    from moto.stepfunctions.parser.asl.component.state.state import CommonStateField

    original_catch = CatcherDecl._eval_body
    original_set_next = CommonStateField._set_next

    def catch(self: Any, env: Any) -> None:
        original_catch(self, env)
        if (
            env.next_state_name == self.next_decl.name
            and env.stack
            and type(env.stack[-1]).__name__ == "CatcherOutcomeCaught"
        ):
            env.taskgate_caught_next = self.next_decl.name

    def set_next(self: Any, env: Any) -> None:
        caught = getattr(env, "taskgate_caught_next", None)
        if caught is not None:
            env.taskgate_caught_next = None
            env.next_state_name = caught
            return
        original_set_next(self, env)

    CatcherDecl._eval_body = catch  # type: ignore[method-assign]
    CommonStateField._set_next = set_next  # type: ignore[method-assign]

    from moto.dynamodb.responses import DynamoHandler
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    original_call_action = DynamoHandler.call_action

    def call_action(self: Any) -> Any:
        with DYNAMODB_LOCK:
            return original_call_action(self)

    DynamoHandler.call_action = call_action  # type: ignore[method-assign]

    parse_lock = threading.Lock()
    original_parse = AmazonStateLanguageParser.parse

    def parse(definition: str) -> Any:
        with parse_lock:
            return original_parse(definition)

    AmazonStateLanguageParser.parse = staticmethod(parse)  # type: ignore[method-assign]
    _normalise_sync_integrations()
    _applied = True


def _normalise_sync_integrations() -> None:
    """Fix 6: the request and response mapping of the .sync services taskgate hands jobs to."""
    import botocore.session
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service import (
        StateTaskService,
    )
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_batch import (
        StateTaskServiceBatch,
    )
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_ecs import (
        StateTaskServiceEcs,
    )
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sfn import (
        StateTaskServiceSfn,
    )
    from moto.stepfunctions.parser.utils import camel_to_snake_case

    services = (StateTaskServiceSfn, StateTaskServiceBatch, StateTaskServiceEcs)
    models: dict[str, Any] = {}
    lock = threading.Lock()

    def operation(self: Any, service: str | None, action: str | None) -> Any:
        name = self._get_boto_service_name(boto_service_name=service)
        with lock:
            if name not in models:
                models[name] = botocore.session.get_session().get_service_model(name)
        model = models[name]
        wanted = self._get_boto_service_action(service_action_name=action)
        found = next((op for op in model.operation_names if camel_to_snake_case(op) == wanted), None)
        return model.operation_model(found) if found else None

    def normalise_parameters(
        self: Any,
        parameters: dict[str, Any],
        boto_service_name: str | None = None,
        service_action_name: str | None = None,
    ) -> None:
        if not isinstance(self, services):
            return
        op = operation(self, boto_service_name, service_action_name)
        if op is not None and op.input_shape is not None:
            self._to_boto_request(parameters, op.input_shape)

    def normalise_response(
        self: Any, response: Any, boto_service_name: str | None = None, service_action_name: str | None = None
    ) -> None:
        if not isinstance(self, services):
            return
        op = operation(self, boto_service_name, service_action_name)
        if op is not None and op.output_shape is not None:
            self._from_boto_response(response, op.output_shape)

    StateTaskService._normalise_parameters = normalise_parameters  # type: ignore[method-assign]
    StateTaskService._normalise_response = normalise_response  # type: ignore[method-assign]

    # Fix 7: every instance shares the module's set, so adding to it reaches them all.
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import state_task_service_glue
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.resource import (
        ResourceCondition,
    )

    patterns: set[Any] = state_task_service_glue._SUPPORTED_INTEGRATION_PATTERNS
    patterns.add(ResourceCondition.WaitForTaskToken)

    # Fix 8.
    from moto.stepfunctions.parser.asl.component.intrinsic.function.statesfunction.json_manipulation import (
        json_to_string,
    )
    from moto.stepfunctions.parser.asl.utils.encoding import to_json_str

    def json_to_string_body(self: Any, env: Any) -> None:
        self.argument_list.eval(env=env)
        args = env.stack.pop()
        env.stack.append(to_json_str(args.pop(), separators=(",", ":")))

    json_to_string.JsonToString._eval_body = json_to_string_body  # type: ignore[method-assign]

    # Fix 9.
    from moto.stepfunctions.responses import StepFunctionResponse

    original_history = StepFunctionResponse.get_execution_history

    def get_execution_history(self: Any) -> Any:
        result = original_history(self)
        body = getattr(result, "result", None)
        events = body.get("events") if isinstance(body, dict) else None
        if isinstance(events, list) and isinstance(body, dict):
            # A copy: the list may be the execution's own.
            ordered = events[::-1] if self._get_param("reverseOrder") else list(events)
            limit = self._get_param("maxResults")
            body["events"] = ordered[: int(limit)] if limit else ordered
        return result

    StepFunctionResponse.get_execution_history = get_execution_history  # type: ignore[method-assign]

    # Fix 10.
    from moto.stepfunctions.parser.api import HistoryEventType, TaskTimedOutEventDetails
    from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import FailureEvent
    from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import StatesErrorName
    from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import (
        StatesErrorNameType,
    )
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.state_task import StateTask
    from moto.stepfunctions.parser.asl.eval.callback.callback import HeartbeatTimeoutError
    from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails

    original_from_error = StateTask._from_error

    def from_error(self: Any, env: Any, ex: Exception) -> Any:
        if not isinstance(ex, HeartbeatTimeoutError):
            return original_from_error(self, env, ex)
        heartbeat = StatesErrorNameType.StatesHeartbeatTimeout
        return FailureEvent(
            env=env,
            error_name=StatesErrorName(typ=heartbeat),
            event_type=HistoryEventType.TaskTimedOut,
            event_details=EventDetails(  # type: ignore[typeddict-item]  # moto's TypedDict is total
                taskTimedOutEventDetails=TaskTimedOutEventDetails(
                    resourceType=self._get_sfn_resource_type(),
                    resource=self._get_sfn_resource(),
                    error=heartbeat.to_name(),
                )
            ),
        )

    StateTask._from_error = from_error  # type: ignore[method-assign]
