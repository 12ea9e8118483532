"""``ToolTester``: run your tools as taskgate runs them, in a test, in a few lines.

A tester is taskgate's own composition root on in-memory ports (no AWS, no network, no
threads of its own): a call goes through the real MCP server (2026-07-28), a task through
the real worker and a stand-in of the state machine that runs each step at once. What a
tool reports is recorded as the tool reports it, so a test sees every progress update and
log line, whatever a task's row keeps of them (at most one write per poll interval).

    tester = ToolTester(resize_images)
    run = tester.start(resize_images, {"bucket": "photos"})        # as a task
    assert run.status == "input_required" and "confirm" in run.questions
    run.answer(confirm=accept(ok=True))                             # runs on to the end
    assert run.status == "completed" and run.text == "Resized 3 images"
    assert [p.message for p in run.progress][-1] == "3/3 resized"

    run = tester.call(resize_images, {"bucket": "photos"})          # a plain call

A tool that hands a job off (``ctx.hand_off``) waits with ``run.job`` set; the test ends the
job (``run.finish_job(output)``, or ``error=`` for a failed one), or calls back the URL the
tool's ``Callback`` sent (``tester.deliver(url, {"status": "succeeded", …})``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from taskgate_cli.protocol import Client2025, Client2026, expect_result, meta_2026, param_headers
from taskgate_cli.transport import Reply, RpcError, reply_of

from ..config import Settings
from ..domain.worker import Worker
from ..jobs.vocabulary import PendingJob
from ..root import Taskgate
from ..tools.context import TaskCancelled, ToolContext
from ..tools.input import ELICIT
from ..tools.registry import Tool, ToolRegistry, registry
from .memory import FakeClock, Memory

TERMINAL = ("completed", "failed", "cancelled")
ERAS = ("2026", "2025")
# What stands in front of the function (tools/long-tools.md): API Gateway's HTTP API buffers a
# response and cuts a request at 30 s; a REST API with response streaming passes bytes on.
FRONTS = ("buffering", "streaming")
# What a deployment did with a call (``Run.delivered``): tools/long-tools.md tells when each.
DELIVERIES = {
    "task": "a task the client asked for (params.task / the tasks extension)",
    "inline": "run inside the request, its result the response",
    "stream": "a hidden task whose result, progress and questions ride the call's own stream (2025), in pieces resumed with Last-Event-ID",
    "held": "a hidden task, the call held open on a streaming front until its result (2026)",
    "handle": "a hidden task handed to the model as a handle (status, result, cancel tools)",
    "multi-round": "an input_required result: the client answers and calls again with requestState (2026)",
}
CC = "io.modelcontextprotocol/clientCapabilities"
# What a tester's client declares unless told otherwise: every kind of question.
EVERYTHING: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}


# -- what a client answers ---------------------------------------------------------------


def accept(**content: Any) -> dict[str, Any]:
    """The user filled in the form (``ctx.ask``): ``accept(ok=True)``."""
    return {"action": "accept", "content": content}


def decline() -> dict[str, Any]:
    """The user said no."""
    return {"action": "decline"}


def dismiss() -> dict[str, Any]:
    """The user closed the form without answering (the ``cancel`` action)."""
    return {"action": "cancel"}


def sampled(text: str, *, model: str = "test-model") -> dict[str, Any]:
    """The client's LLM answered ``ctx.sample`` with ``text``."""
    return {
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": model,
        "stopReason": "endTurn",
    }


def roots(*uris: str) -> dict[str, Any]:
    """The client's answer to ``ctx.list_roots``."""
    return {"roots": [{"uri": uri} for uri in uris]}


# -- what a tool reported ----------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    """One ``ctx.progress`` call, as the tool made it."""

    progress: float
    total: float | None
    message: str | None


@dataclass(frozen=True)
class LogLine:
    """One ``ctx.log`` call, as the tool made it."""

    level: str
    message: str
    data: Any = None


@dataclass(frozen=True)
class Question:
    """One question the tool asked: ``method`` is ``elicitation/create``,
    ``sampling/createMessage`` or ``roots/list``; ``params`` are what the client gets."""

    key: str
    method: str
    params: dict[str, Any]

    @property
    def message(self) -> str | None:
        """An elicitation's message."""
        value = self.params.get("message")
        return value if isinstance(value, str) else None


class Run:
    """One tool call from a ``ToolTester``: a task (``start``) or a plain call (``call``),
    followed through every question until it ends. Everything is already settled when a
    method returns: there is nothing to wait for."""

    def __init__(
        self,
        tester: ToolTester,
        tool: Tool,
        arguments: dict[str, Any],
        *,
        as_task: bool,
        owner: str,
        capabilities: dict[str, Any],
    ) -> None:
        self._tester = tester
        self.tool = tool.name
        self.arguments = arguments
        self.as_task = as_task
        self.owner = owner
        self.capabilities = capabilities
        self.task_id: str | None = None
        self.status = "working"
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.status_message: str | None = None
        self.questions: dict[str, Question] = {}
        # Every report of every run of the tool, in order: a tool that asks runs again from
        # the top once answered, so what it reported before the question comes again.
        self.progress: list[Progress] = []
        self.logs: list[LogLine] = []
        # How many times the tool function was entered (once, plus once per answered round).
        self.runs = 0
        self._request_state: str | None = None
        self._cancel_after: int | None = None
        self._descriptor = tool.describe(with_task_support=False)
        self.era = tester.era
        # What the deployment did with the call (a key of DELIVERIES), once it was made.
        self.delivered: str | None = None
        self._session: Client2025 | None = None  # a 2025 run's session (initialize, Mcp-Session-Id)
        self._rpc_ids: dict[str, Any] = {}  # 2025: a question's key -> the JSON-RPC id it was asked with
        self._call_id: Any = None  # 2025 plain call: its JSON-RPC id, its stream's last event id
        self._last_event: str | None = None
        self._before: set[str] = set()

    def __repr__(self) -> str:
        detail = self.error or self.result or {k: q.params for k, q in self.questions.items()}
        return f"<Run {self.tool} {'task' if self.as_task else 'call'} {self.status}: {detail}>"

    # -- the outcome ---------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.status in TERMINAL

    @property
    def text(self) -> str:
        """The result's text blocks, joined ("" when there is no result)."""
        blocks = (self.result or {}).get("content") or []
        return "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")

    @property
    def structured(self) -> Any:
        """The result's ``structuredContent`` (a tool returning a model or a dict)."""
        return (self.result or {}).get("structuredContent")

    @property
    def is_error(self) -> bool:
        """The tool ended with an error result (``ToolError``): the call itself succeeded."""
        return bool((self.result or {}).get("isError"))

    # -- what a client does --------------------------------------------------------------

    def answer(self, answers: Mapping[str, Any] | None = None, /, **by_key: Any) -> Run:
        """Answer the open questions (by key: ``answer(confirm=accept(ok=True))``, or a dict
        for keys that are not names, ``answer({"sampling-1": sampled("Paris")})``), then run
        on to the next question or the end."""
        given = {**(answers or {}), **by_key}
        if self.status != "input_required":
            raise AssertionError(f"nothing to answer: the run is {self.status} ({self!r})")
        unknown = set(given) - set(self.questions)
        if unknown:
            raise AssertionError(f"no open question {sorted(unknown)}; open: {sorted(self.questions)}")
        if self.task_id is not None and self.era == "2025":
            # 2025: each answer is the client's JSON-RPC response to the server's request.
            with self._tester._acting(self):
                self._client2025().answer(
                    self.task_id, {self._rpc_ids.get(k, k): v for k, v in given.items()}
                )
            self._refresh()
        elif self.task_id is not None:
            self._tester._send(self, "tasks/update", {"taskId": self.task_id, "inputResponses": given})
            self._refresh()
        elif self.era == "2025":
            # Answered on the session (a JSON-RPC response), then the call's stream resumed.
            with self._tester._acting(self):
                self._client2025().answer("", {self._rpc_ids.get(k, k): v for k, v in given.items()})
            self.questions, self.status = {}, "working"
            self._resume_2025()
        else:
            self._call(given)
        return self

    @property
    def job(self) -> PendingJob | None:
        """The job the task waits on (``ctx.hand_off``), while it waits."""
        record = self._tester.memory.store.get(self.task_id) if self.task_id else None
        return record.job if record is not None and record.status.value == "working" else None

    def finish_job(self, output: Any = None, *, error: str | None = None, cause: str = "") -> Run:
        """The job the task waits on ends with ``output`` (the service's description of it,
        or a child execution's output), or fails with ``error`` and ``cause`` (as Step
        Functions reports it: ``error="States.TaskFailed"``); the tool runs on."""
        if self.task_id is None or self.task_id not in self._tester.memory.jobs.running:
            raise AssertionError(f"no job is running for this run ({self!r})")
        self._tester.memory.finish_job(self.task_id, output, error=error, cause=cause)
        self._refresh()
        return self

    def cancel(self) -> Run:
        """Cancel the task (``tasks/cancel``), as a client would."""
        if self.task_id is None:
            raise AssertionError("only a task can be cancelled; this run is a plain call")
        self._cancel(self.task_id)
        self._refresh()
        return self

    def _cancel(self, task_id: str) -> None:
        if self.era == "2025":
            with contextlib.suppress(RpcError):  # 2025 refuses to cancel an ended task
                self._client2025().cancel(task_id)
        else:
            self._tester._send(self, "tasks/cancel", {"taskId": task_id})

    def _client2025(self) -> Client2025:
        if self._session is None:
            # A 2025 client declares tasks in its initialize (what the tester's clients can do).
            capabilities = {"tasks": {}, **self.capabilities}
            self._session = Client2025(
                _ServerTransport(self._tester.root, self.owner), capabilities=capabilities
            )
            self._session.open()
        return self._session

    # -- inside ----------------------------------------------------------------------------

    def _call(self, answers: dict[str, Any] | None = None) -> None:
        if self.era == "2025":
            self._call_2025()
            return
        params: dict[str, Any] = {"name": self.tool, "arguments": self.arguments}
        if answers:
            params["inputResponses"] = answers
        if self._request_state is not None:
            params["requestState"] = self._request_state
        headers = param_headers(self._descriptor, self.arguments)
        before = set(self._tester.memory.store.records)
        message = self._tester._send(self, "tools/call", params, headers)
        self._saw(message.get("result"), before)
        if "error" in message:
            self._ended("failed", error=message["error"])
            return
        result = dict(message["result"])
        kind = result.pop("resultType", None)
        if kind == "task":
            self.task_id = str(result["taskId"])
            self._tester._tasks[self.task_id] = self
            self._refresh()
        elif kind == "input_required":
            self.status = "input_required"
            self.questions = _questions(result.get("inputRequests"))
            self._request_state = result.get("requestState")
        else:
            self._ended("completed", result=result)

    def _call_2025(self) -> None:
        """A 2025-11-25 tools/call in this run's session: as a task (``params.task``) or
        plainly, its response read from the call's stream, resumed with GET and
        Last-Event-ID wherever a piece ends before it (as behind API Gateway)."""
        params: dict[str, Any] = {
            "name": self.tool,
            "arguments": self.arguments,
            "_meta": {"progressToken": "kit"},
        }
        if self.as_task:
            params["task"] = {}
        before = set(self._tester.memory.store.records)
        client = self._client2025()
        if not self.as_task:
            body = client.message("tools/call", params)
            self._call_id, self._before = body["id"], before
            with self._tester._acting(self):
                self._read_call_stream(client.http.send("POST", client.headers(), body))
            return
        try:
            with self._tester._acting(self):
                result = client.request("tools/call", params)
                self._saw(result, before)
        except RpcError as exc:
            self._saw(None, before)
            self._failed(exc)
            return
        task = result.get("task")
        if isinstance(task, dict):
            self.task_id = str(task["taskId"])
            self._tester._tasks[self.task_id] = self
            self._refresh()
        else:
            self._ended("completed", result={k: v for k, v in result.items() if k != "_meta"})

    def _failed(self, exc: RpcError) -> None:
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        self._ended("failed", error=error)

    def _resume_2025(self) -> None:
        client = self._client2025()
        if self._last_event is None:
            raise AssertionError(f"the call's stream ended without an event id to resume from ({self!r})")
        with self._tester._acting(self):
            self._tester._settle()  # the hidden task's steps report to this run
            self._read_call_stream(
                client.http.send("GET", client.headers(**{"last-event-id": self._last_event}))
            )

    def _read_call_stream(self, reply: Reply) -> None:
        """A 2025 plain call's response stream, piece after piece (each whole, as a buffering
        front passes it on), resumed after its last event id, until the response; the
        questions it carries (elicitation/create) leave the run input_required."""
        for _ in range(10_000):  # pieces: the tester's clock moves only when the server waits
            with reply:
                if not reply.is_stream:
                    try:
                        result = expect_result(reply.body, reply.status)
                    except RpcError as exc:
                        self._saw(None, self._before)
                        self._failed(exc)
                        return
                    self._saw(result, self._before)
                    self._ended("completed", result={k: v for k, v in result.items() if k != "_meta"})
                    return
                for event in reply.events():
                    self._last_event = event.id or self._last_event
                    message = event.message() or {}
                    if message.get("method") == "elicitation/create" and "id" in message:
                        key = _tool_key(str(message["id"]))
                        self._rpc_ids[key] = message["id"]
                        self.questions[key] = Question(key, ELICIT, dict(message.get("params") or {}))
                    elif message.get("id") == self._call_id and ("result" in message or "error" in message):
                        self._saw(message.get("result"), self._before)
                        if "error" in message:
                            self._ended("failed", error=message["error"])
                        else:
                            self._ended(
                                "completed",
                                result={k: v for k, v in message["result"].items() if k != "_meta"},
                            )
                        return
            if self.questions:
                self.status = "input_required"
                self._saw(None, self._before)
                return
            client = self._client2025()
            self._tester._settle()
            if self._last_event is None:
                raise AssertionError(f"the call's stream ended without a response or an event id ({self!r})")
            reply = client.http.send("GET", client.headers(**{"last-event-id": self._last_event}))
        raise AssertionError(f"no response to the call after 10,000 pieces ({self!r})")

    def _saw(self, result: Any, before: set[str]) -> None:
        """Tell from the response and the tasks made while it was served what the deployment
        did with the call."""
        if self.as_task:
            self.delivered = "task"
            return
        made = set(self._tester.memory.store.records) - before
        result = result if isinstance(result, dict) else {}
        if result.get("resultType") == "input_required":
            self.delivered = "multi-round"
        elif (result.get("structuredContent") or {}).get("handle") in made:
            self.delivered = "handle"
        elif made:
            self.delivered = "stream" if self.era == "2025" else "held"
        elif self.delivered is None:
            self.delivered = "inline"

    def _refresh_2025(self) -> None:
        assert self.task_id is not None
        client = self._client2025()
        with self._tester._acting(self):
            view = client.get_task(self.task_id)
            self.status, self.status_message = view.status, view.message
            self.questions = {}
            if view.status == "input_required":
                # Delivered on the tasks/result stream the client waits on, as elicitation/create
                # requests: keyed by their JSON-RPC ids (answer with those, or a dict of them).
                asked = client.questions(view)
                self._rpc_ids = {_tool_key(q.key): q.key for q in asked}
                self.questions = {
                    _tool_key(q.key): Question(_tool_key(q.key), q.method, q.params) for q in asked
                }
            if view.terminal:
                outcome = client.outcome(view)
                self.result = {k: v for k, v in (outcome.result or {}).items() if k != "_meta"} or None
                self.error = outcome.error

    def _refresh(self) -> None:
        self._tester._settle()
        if self.era == "2025":
            self._refresh_2025()
            return
        assert self.task_id is not None
        message = self._tester._send(self, "tasks/get", {"taskId": self.task_id})
        if "error" in message:
            raise AssertionError(f"tasks/get {self.task_id} failed: {message['error']}")
        task = message["result"]
        self.status = str(task["status"])
        self.status_message = task.get("statusMessage")
        self.questions = _questions(task.get("inputRequests"))
        if self.status == "completed":
            self.result = {k: v for k, v in (task.get("result") or {}).items() if k != "resultType"}
        self.error = task.get("error")

    def _ended(self, status: str, *, result: dict[str, Any] | None = None, error: Any = None) -> None:
        self.status, self.result, self.error = status, result, error
        self.questions = {}

    def _heard_progress(self, ctx: ToolContext, report: Progress) -> None:
        if ctx.is_task and self._tester._is_over(ctx):
            # A cancel is seen at the tool's next report (in a deployment, at the next one
            # written: at most one per poll interval), which raises in the tool.
            raise TaskCancelled(ctx.task_id)
        self.progress.append(report)
        if self._cancel_after is not None and len(self.progress) == self._cancel_after:
            self._cancel_after = None
            self._cancel(str(ctx.task_id))


def _tool_key(request_id: str) -> str:
    """The key the tool asked with, from the id of a 2025 request (``tg-elicit:<task>:<key>``)."""
    parts = request_id.split(":", 2)
    return parts[2] if len(parts) == 3 and parts[0] == "tg-elicit" else request_id


def _questions(raw: Any) -> dict[str, Question]:
    if not isinstance(raw, dict):
        return {}
    return {
        key: Question(key, str(request.get("method")), dict(request.get("params") or {}))
        for key, request in raw.items()
        if isinstance(request, dict)
    }


class _Listener:
    """Tells the run a context belongs to what its tool reported."""

    def __init__(self, tester: ToolTester) -> None:
        self._tester = tester

    def progress(self, ctx: ToolContext, value: float, total: float | None, message: str | None) -> None:
        run = self._tester._run_of(ctx)
        if run is not None:
            run._heard_progress(ctx, Progress(value, total, message))

    def log(self, ctx: ToolContext, level: str, message: str, data: Any) -> None:
        run = self._tester._run_of(ctx)
        if run is not None:
            run.logs.append(LogLine(level, message, data))


ToolLike = Callable[..., Any] | Tool | ModuleType | str


class ToolTester:
    """Your tools, served as a deployment serves them, on in-memory ports.

    ``tools``: functions decorated with ``@tool``, ``Tool`` objects, or modules (objects or
    names) whose tools to serve. ``owner``: who calls (``ctx.owner``), unless a call says
    otherwise. ``capabilities``: what the client declares it can answer (default:
    every kind of question). ``era``: the protocol the client speaks, ``"2026"`` (2026-07-28,
    stateless) or ``"2025"`` (2025-11-25: a session, a task's questions on its tasks/result
    stream, a plain call's response on its own stream, resumed by Last-Event-ID where a piece
    ends). ``front``: what stands before the function, ``"buffering"`` (API Gateway's HTTP API,
    the default stack: whole responses, 30 s) or ``"streaming"`` (``StreamingApi``: a REST API
    that streams), which decides what a long plain call becomes (tools/long-tools.md).
    ``settings``: any ``taskgate.config.Settings`` field (``max_checkpoint_bytes=1024``)."""

    def __init__(
        self,
        *tools: ToolLike,
        owner: str = "tester",
        capabilities: Mapping[str, Any] | None = None,
        era: str = "2026",
        front: str = "buffering",
        **settings: Any,
    ) -> None:
        if era not in ERAS:
            raise ValueError(f"era={era!r}: one of {', '.join(ERAS)}")
        if front not in FRONTS:
            raise ValueError(f"front={front!r}: one of {', '.join(FRONTS)}")
        self.era, self.front = era, front
        # As the stack sets them: ApiFunction behind the HTTP API, StreamFunction behind the
        # streaming REST API (template.yaml, FRONT_STREAMING and FRONT_TIMEOUT_SECONDS).
        settings.setdefault("front_streaming", front == "streaming")
        settings.setdefault("front_timeout_seconds", 900.0 if front == "streaming" else 29.0)
        self.owner = owner
        self.capabilities = dict(EVERYTHING if capabilities is None else capabilities)
        self.clock = FakeClock()
        self.memory = Memory(clock=self.clock, on_wait=self._settle)
        self._listener = _Listener(self)
        self.tools = ToolRegistry()
        for found in _tools_of(tools):
            self.tools.add(self._watched(found))
        # Callback URLs (a tool's Callback) need a public URL; any will do in memory.
        values: dict[str, Any] = {
            "task_table": "memory",
            "tool_modules": (),
            "public_url": "https://taskgate.test",
            **settings,
        }
        self.root = Taskgate(Settings(**values), self.memory.ports(), tools=self.tools)
        self._tasks: dict[str, Run] = {}
        self._current: Run | None = None

    @property
    def worker(self) -> Worker:
        return self.root.worker

    def start(
        self,
        tool: ToolLike,
        arguments: Mapping[str, Any] | None = None,
        *,
        owner: str | None = None,
        capabilities: Mapping[str, Any] | None = None,
        cancel_after: int | None = None,
    ) -> Run:
        """Call ``tool`` as a task (a client that asks for one) and run it until it asks or
        ends. ``cancel_after=N``: the client cancels the task after the tool's Nth progress
        report; the tool's next ``ctx.progress`` raises ``TaskCancelled``."""
        run = self._run(tool, arguments, as_task=True, owner=owner, capabilities=capabilities)
        run._cancel_after = cancel_after
        run._call()
        return run

    def call(
        self,
        tool: ToolLike,
        arguments: Mapping[str, Any] | None = None,
        *,
        owner: str | None = None,
        capabilities: Mapping[str, Any] | None = None,
    ) -> Run:
        """Call ``tool`` plainly (a client that never asks for a task), as most hosts do."""
        run = self._run(tool, arguments, as_task=False, owner=owner, capabilities=capabilities)
        run._call()
        return run

    # -- inside ----------------------------------------------------------------------------

    def _run(
        self,
        tool: ToolLike,
        arguments: Mapping[str, Any] | None,
        *,
        as_task: bool,
        owner: str | None,
        capabilities: Mapping[str, Any] | None,
    ) -> Run:
        name = tool if isinstance(tool, str) else _name_of(tool)
        found = self.tools.get(name)
        if found is None:
            raise AssertionError(
                f"{name!r} is not one of this tester's tools: {[t.name for t in self.tools]}"
            )
        return Run(
            self,
            found,
            dict(arguments or {}),
            as_task=as_task,
            owner=owner or self.owner,
            capabilities=dict(self.capabilities if capabilities is None else capabilities),
        )

    def _send(
        self, run: Run, method: str, params: dict[str, Any], headers: dict[str, str] | None = None
    ) -> dict[str, Any]:
        meta = meta_2026(tasks=run.as_task, elicitation=False)
        meta[CC] = {**meta[CC], **run.capabilities}
        client = Client2026(_ServerTransport(self.root, run.owner), meta=meta)
        previous, self._current = self._current, run
        try:
            status, message = client.send(method, params, headers)
        finally:
            self._current = previous
        if not isinstance(message, dict):
            raise AssertionError(f"{method} answered HTTP {status} without a JSON-RPC message: {message!r}")
        return message

    @contextlib.contextmanager
    def _acting(self, run: Run) -> Iterator[None]:
        """What a tool reports while ``run``'s request is served belongs to it (a plain call
        has no task id to tell it by)."""
        previous, self._current = self._current, run
        try:
            yield
        finally:
            self._current = previous

    def deliver(self, url: str, body: Any) -> tuple[int, dict[str, Any]]:
        """POST ``body`` to a callback URL a tool's ``Callback`` sent, as the outside system
        would; then run on. Returns the HTTP status and body the system gets."""
        from urllib.parse import parse_qs, urlsplit

        parts = urlsplit(url)
        task_id = parts.path.rsplit("/", 1)[-1]
        reply = self.root.callbacks.deliver(task_id, parse_qs(parts.query).get("secret", [""])[0], body)
        self._settle()
        if task_id in self._tasks:
            self._tasks[task_id]._refresh()
        return reply.status, reply.body

    def _settle(self) -> None:
        self.memory.settle(self.root.worker)

    def _run_of(self, ctx: ToolContext) -> Run | None:
        if ctx.task_id is not None and ctx.task_id in self._tasks:
            return self._tasks[ctx.task_id]
        return self._current

    def _is_over(self, ctx: ToolContext) -> bool:
        record = self.memory.store.get(str(ctx.task_id))
        return record is None or record.status.terminal

    def _watched(self, tool: Tool) -> Tool:
        """``tool`` with the tester listening to every context it is run with."""
        listener = self._listener

        def attach(ctx: ToolContext) -> None:
            ctx.listeners.append(listener)
            run = self._run_of(ctx)
            if run is not None:
                run.runs += 1

        fn, calling = tool.fn, tool.calling

        def invoke(args: Any, ctx: ToolContext) -> Any:
            # As the tool itself is called: its own parameters (the plain form) or (args, ctx).
            return fn(args, ctx) if calling is None else calling(fn, args, ctx)

        if inspect.iscoroutinefunction(fn):

            async def watched_async(args: Any, ctx: ToolContext) -> Any:
                attach(ctx)
                return await invoke(args, ctx)

            return dataclasses.replace(tool, fn=watched_async, calling=None)

        def watched(args: Any, ctx: ToolContext) -> Any:
            attach(ctx)
            return invoke(args, ctx)

        return dataclasses.replace(tool, fn=watched, calling=None)


class _ServerTransport:
    """The CLI client's transport, straight into the server (no HTTP): what the app would
    hand it after its own checks, as ``owner``."""

    def __init__(self, root: Taskgate, owner: str) -> None:
        self._root = root
        self._owner = owner

    def send(
        self, method: str, headers: dict[str, str], body: Any = None, *, timeout: float | None = None
    ) -> Reply:
        server, headers = self._root.server, {k.lower(): v for k, v in headers.items()}
        if method == "GET":  # 2025: a stream resumed after Last-Event-ID
            reply = server.handle_get(headers, self._owner)
        elif method == "DELETE":  # 2025: the session ends (and its plain calls with it)
            reply = server.handle_delete(headers, self._owner)
        else:
            reply = server.handle(body, headers, self._owner)
        # The whole response at once, as a buffering front passes it on.
        kept = {k.lower(): v for k, v in reply.headers.items()}
        if reply.stream is not None:
            raw = "".join(reply.stream).encode()
            return reply_of(reply.status, {**kept, "content-type": "text/event-stream"}, raw)
        raw = json.dumps(reply.body).encode() if reply.body is not None else b""
        return reply_of(reply.status, {**kept, "content-type": "application/json"}, raw)


def _tools_of(given: Iterable[ToolLike]) -> list[Tool]:
    found: list[Tool] = []
    for item in given:
        if isinstance(item, Tool):
            found.append(item)
        elif isinstance(item, (str, ModuleType)):
            # A package's tools are those its import registered, in it or its submodules.
            module = importlib.import_module(item) if isinstance(item, str) else item
            found += [t for t in registry if _within(getattr(t.fn, "__module__", ""), module.__name__)]
        else:
            found.append(_registered(item))
    return found


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _registered(fn: Callable[..., Any]) -> Tool:
    for candidate in registry:
        if candidate.fn is fn:
            return candidate
    raise TypeError(f"{getattr(fn, '__name__', fn)!r} is not a tool: decorate it with @tool (taskgate.tools)")


def _name_of(tool: ToolLike) -> str:
    if isinstance(tool, Tool):
        return tool.name
    if isinstance(tool, (str, ModuleType)):
        raise TypeError("name one tool: its function, its Tool, or its name")
    return _registered(tool).name
