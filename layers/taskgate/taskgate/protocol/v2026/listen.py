"""``subscriptions/listen`` (2026-07-28, SEP-2575; ``taskIds`` from the tasks extension).

The client names what it wants (``notifications``); the server acknowledges the part it
honours (``notifications/subscriptions/acknowledged``, naming exactly that), sends the
notifications on the same response stream, and ends it with the request's result.

What is honoured, and where:

- ``taskIds``: the caller's own live tasks among them (at most ``MAX_WATCHED_TASKS``). Another
  owner's id, an expired task and an unknown id are left out alike. Each watched task is read
  in one batch per ``interval`` (eventually consistent, as a poll at ``pollIntervalMs`` would
  cost) and sent as ``notifications/tasks`` whenever what ``tasks/get`` shows of it changed,
  first as it is when the stream opens (so a re-listen misses nothing), last when it ends.
- ``resourceSubscriptions``, ``resourcesListChanged``: see ``catalog/watch.py``.
- ``toolsListChanged``, ``promptsListChanged``: never (the lists change only with a deploy).

Only a front that passes bytes on as they are written can carry such a stream (the streaming
endpoint: a REST API with response streaming, up to 15 minutes). Behind one that buffers (the
HTTP API) nothing can be pushed: the answer is an empty acknowledgement and the result at
once, and ``server/discover`` there declares no subscriptions, so clients poll.

A stream sends a comment line when it has sent nothing for ``HEARTBEAT_SECONDS`` (API
Gateway closes a stream idle for 5 minutes), and ends with its result after ``seconds``, well
before the front's 15-minute cut: the client re-listens (no replay; the tasks it names are
sent as they are then, and it re-reads the resources and lists it depends on). Nothing tells
a streaming function that its client left, so an abandoned stream runs to its end: each open
stream holds one of its owner's places, the ones held calls take too (domain/holds.py: leases
in the table, renewed while the stream lasts).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ...codes import INTERNAL_ERROR, MISSING_REQUIRED_CLIENT_CAPABILITY
from ...domain.errors import TaskgateError
from ...domain.model import TaskRecord
from ...domain.service import TaskService
from ..calls.policy import Front, ListenPolicy
from ..wire import sse
from ..wire.errors import RpcError
from ..wire.exchange import Call, HttpReply
from ..wire.params import Key, Params
from . import wire as w

if TYPE_CHECKING:
    from ...domain.holds import Hold, Holds
    from ..catalog.watch import ResourceWatch

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
# A comment line after this long with nothing sent: well inside API Gateway's 5-minute idle
# timeout, and inside the read timeouts clients put on a stream.
HEARTBEAT_SECONDS = 30.0
# One BatchGetItem reads at most 100 keys; more than that is another stream.
MAX_WATCHED_TASKS = 100
MAX_RESOURCE_SUBSCRIPTIONS = 100

Uri = Annotated[str, Field(min_length=1, max_length=8192)]


class ListenFilter(BaseModel):
    # Extensions add keys; the ones this server does not know are not honoured (left out).
    model_config = ConfigDict(strict=True, extra="allow", defer_build=True)

    toolsListChanged: bool | None = None
    promptsListChanged: bool | None = None
    resourcesListChanged: bool | None = None
    resourceSubscriptions: Annotated[list[Uri], Field(max_length=MAX_RESOURCE_SUBSCRIPTIONS)] | None = None
    taskIds: Annotated[list[Key], Field(max_length=MAX_WATCHED_TASKS)] | None = None


class Listen(Params):
    notifications: ListenFilter


def _tagged(message: dict[str, Any], subscription: Any) -> dict[str, Any]:
    params = dict(message.get("params") or {})
    params["_meta"] = {**(params.get("_meta") or {}), SUBSCRIPTION_ID: subscription}
    return {**message, "params": params}


def acknowledged(subscription: Any, honoured: dict[str, Any]) -> dict[str, Any]:
    return _tagged(
        {"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": {"notifications": honoured}}, subscription
    )


def ended(subscription: Any) -> dict[str, Any]:
    """The request's result: the stream ended on purpose (``SubscriptionsListenResult``)."""
    return {
        "jsonrpc": "2.0",
        "id": subscription,
        "result": {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: subscription}},
    }


def task_notification(record: TaskRecord, subscription: Any) -> dict[str, Any]:
    """``notifications/tasks``: the task as ``tasks/get`` shows it (a ``DetailedTask``)."""
    params = w.detailed_task(record)
    params.pop("resultType", None)  # the result's own field, not the task's
    return _tagged({"jsonrpc": "2.0", "method": "notifications/tasks", "params": params}, subscription)


def _shown(record: TaskRecord) -> str:
    """What a client sees of the task, without its result: equal exactly when nothing changed."""
    view = w.detailed_task(record)
    view.pop("result", None)
    return json.dumps(view, sort_keys=True, default=str)


def _check(call: Call, params: Listen) -> None:
    if params.notifications.taskIds is not None and not w.declares_tasks(call.meta):
        raise RpcError(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Missing required client capability",
            w.missing_capability_data(),
        )


def _nothing(call: Call) -> dict[str, Any]:
    assert call.request is not None
    call.emit(acknowledged(call.request.id, {}))
    result: dict[str, Any] = ended(call.request.id)["result"]
    return result


def answered_at_once(call: Call, params: Listen) -> dict[str, Any]:
    """The answer where nothing can be pushed (a front that buffers): an empty
    acknowledgement and the result, at once. The client polls instead (server/discover
    there declares no subscriptions)."""
    _check(call, params)
    return _nothing(call)


class TaskWatch:
    """The caller's watched tasks and what each last looked like."""

    def __init__(self, tasks: TaskService, owner: str, found: dict[str, TaskRecord]) -> None:
        self._tasks = tasks
        self._owner = owner
        self._found = found
        self._shown: dict[str, str] = {}

    @property
    def ids(self) -> list[str]:
        return list(self._found)

    def __bool__(self) -> bool:
        return bool(self._found)

    def first(self) -> list[TaskRecord]:
        """Every watched task as it is now (the stream's first notifications)."""
        return self._settle(list(self._found.values()))

    def changes(self) -> list[TaskRecord]:
        """The watched tasks that changed since they were last sent, read in one batch. A
        finished one is sent once, with its result, and no longer read."""
        if not self._found:
            return []
        fresh = self._tasks.get_many(self._owner, list(self._found))
        for gone in set(self._found) - set(fresh):
            del self._found[gone]  # expired under us: nothing more to say about it
        self._found = {task_id: fresh[task_id] for task_id in self._found}
        return self._settle([r for r in self._found.values() if _shown(r) != self._shown.get(r.task_id)])

    def _settle(self, records: list[TaskRecord]) -> list[TaskRecord]:
        out = []
        for record in records:
            self._shown[record.task_id] = _shown(record)
            if record.status.terminal:
                del self._found[record.task_id]
                record = self._tasks.with_result(record)
            out.append(record)
        return out


class Listens:
    """Serves ``subscriptions/listen`` for one era's handler."""

    def __init__(
        self,
        tasks: TaskService,
        holds: Holds,
        policy: ListenPolicy,
        front: Front,
        resources: Callable[[Call, list[str], bool], ResourceWatch] | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        audit: Callable[[str, dict[str, Any]], None] = lambda event, fields: None,
    ) -> None:
        """``resources`` makes the watch of the catalogue (None: no resources are honoured)."""
        self._tasks = tasks
        self._holds = holds
        # Only a front that passes a response on as it is written can carry a stream; one
        # lasts no longer than the front holds a response.
        self.streams = front.streams
        self.seconds = min(policy.seconds, front.hold_seconds)
        self.interval = policy.interval_seconds
        self._resources = resources
        self._sleep = sleep
        self._monotonic = monotonic
        self._audit = audit

    def answer(self, call: Call, params: Listen) -> dict[str, Any] | HttpReply:
        if not self.streams:
            return answered_at_once(call, params)
        _check(call, params)
        assert call.request is not None
        subscription = call.request.id
        wanted = params.notifications
        tasks = TaskWatch(
            self._tasks,
            call.owner,
            self._tasks.get_many(call.owner, wanted.taskIds) if wanted.taskIds else {},
        )
        catalog = None
        if self._resources is not None and (wanted.resourceSubscriptions or wanted.resourcesListChanged):
            catalog = self._resources(
                call, wanted.resourceSubscriptions or [], bool(wanted.resourcesListChanged)
            )
        honoured: dict[str, Any] = {}
        if tasks:
            honoured["taskIds"] = tasks.ids
        if catalog is not None and catalog.uris:
            honoured["resourceSubscriptions"] = catalog.uris
        if catalog is not None and catalog.lists:
            honoured["resourcesListChanged"] = True
        if not honoured:
            # Nothing to watch: no stream to hold (and no lease taken).
            return _nothing(call)
        hold = self._holds.take(call.owner)
        if hold is None:
            # Before anything is sent: the request's error, no stream (clients do not re-listen).
            places = self._holds.places
            raise RpcError(
                INTERNAL_ERROR,
                f"Server busy: you already have {places} calls and listen streams held open; "
                "try again when one ends",
                {"limit": places},
            )
        self._audit("listen_opened", {"owner": call.owner, "honoured": sorted(honoured)})
        stream = self._stream(subscription, honoured, tasks, catalog, hold)
        return HttpReply(200, headers=dict(sse.HEADERS), stream=stream)

    def _stream(
        self,
        subscription: Any,
        honoured: dict[str, Any],
        tasks: TaskWatch,
        catalog: ResourceWatch | None,
        hold: Hold,
    ) -> Iterator[str]:
        try:
            yield sse.event(acknowledged(subscription, honoured))
            for record in tasks.first():
                yield sse.event(task_notification(record, subscription))
            started = sent = renewed = self._monotonic()
            while self._monotonic() - started < self.seconds and (tasks or catalog):
                self._sleep(min(self.interval, max(0.0, self.seconds - (self._monotonic() - started))))
                news = [task_notification(r, subscription) for r in tasks.changes()]
                if catalog is not None:
                    news += [_tagged(n, subscription) for n in catalog.changes()]
                for message in news:
                    yield sse.event(message)
                if news:
                    sent = self._monotonic()
                elif self._monotonic() - sent >= HEARTBEAT_SECONDS:
                    sent = self._monotonic()
                    yield ": keep-alive\n\n"
                if self._monotonic() - renewed >= self._holds.lease_ms / 3000:
                    # Still open: if this instance dies, its place frees when the lease runs out.
                    renewed = self._monotonic()
                    hold.renew()
            yield sse.event(ended(subscription))
        except TaskgateError:
            # A read failed for good (the table is unreachable): end on purpose; the client
            # re-listens, and the tasks it names are sent as they are then.
            yield sse.event(ended(subscription))
        finally:
            with contextlib.suppress(TaskgateError):
                hold.release()  # else its lease runs out
