"""The two protocol eras behind one small interface.

``Client2026`` speaks MCP 2026-07-28 with the ``io.modelcontextprotocol/tasks``
extension: stateless, every request carries ``_meta`` and routing headers,
questions arrive in ``tasks/get``'s ``inputRequests`` and are answered with
``tasks/update``.

``Client2025`` speaks 2025-11-25 experimental Tasks: ``initialize`` and an
``Mcp-Session-Id``, ``params.task`` on ``tools/call``, questions as
``elicitation/create`` requests on the ``tasks/result`` event stream answered by
POSTing the JSON-RPC response, results through ``tasks/result``.

Both run over any ``Transport`` (the CLI's is ``transport.Http``). The message and
header builders below are public: the tests, the bench and the scripts build their
requests with them rather than by hand.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import __version__
from .transport import ConnectionTrouble, Reply, RpcError, Transport

PROTOCOL_2026 = "2026-07-28"
PROTOCOL_2025 = "2025-11-25"
TASKS_EXT = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
CLIENT_INFO = {"name": "taskgate-cli", "version": __version__}
ACCEPT = "application/json, text/event-stream"
# What the CLI tells a 2025 server it can do (2026 says the same in every request's _meta).
CAPABILITIES_2025: dict[str, Any] = {"tasks": {}, "elicitation": {"form": {}, "url": {}}}
# Methods whose Mcp-Name header mirrors a params field (2026 routing headers).
NAME_FIELD = {
    "tools/call": "name",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
    "resources/read": "uri",
    "prompts/get": "name",
}


@dataclass
class TaskView:
    """A task as either era reports it, in one shape."""

    task_id: str
    status: str
    message: str | None = None
    poll_ms: int = 1000
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


@dataclass
class Question:
    """One thing the server asks: ``key`` is the 2026 inputRequests key or the
    2025 JSON-RPC request id; ``params`` are elicitation/create's params."""

    key: str
    method: str
    params: dict[str, Any]


@dataclass
class CallReply:
    """What ``tools/call`` answered: a task, an inline result, or (2026) questions to
    answer before the call is made again."""

    task: TaskView | None = None
    result: dict[str, Any] | None = None
    questions: list[Question] = field(default_factory=list)


@dataclass
class Outcome:
    """How a terminal task ended: the tool's result or a JSON-RPC error."""

    status: str
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class Client(Protocol):
    era: str

    def open(self) -> None: ...
    def close(self) -> None: ...
    def list_tools(self) -> list[dict[str, Any]]: ...
    def call_tool(
        self, tool: dict[str, Any], arguments: dict[str, Any], answers: dict[str, Any]
    ) -> CallReply: ...
    def get_task(self, task_id: str) -> TaskView: ...
    def questions(self, view: TaskView) -> list[Question]: ...
    def answer(self, task_id: str, answers: dict[str, Any]) -> None: ...
    def cancel(self, task_id: str) -> None: ...
    def outcome(self, view: TaskView) -> Outcome: ...


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def meta_2026(
    *, tasks: bool = True, elicitation: bool = True, client_info: dict[str, Any] = CLIENT_INFO
) -> dict[str, Any]:
    """The ``_meta`` every 2026-07-28 request carries: version, capabilities, client."""
    capabilities: dict[str, Any] = {}
    if tasks:
        capabilities["extensions"] = {TASKS_EXT: {}}
    if elicitation:
        capabilities["elicitation"] = {"form": {}, "url": {}}
    return {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_2026,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": client_info,
    }


def rpc_request(method: str, params: dict[str, Any], msg_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


def rpc_response(msg_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    """A client's answer to a server request (2025: ``elicitation/create``)."""
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def envelope(method: str, params: dict[str, Any], msg_id: Any, meta: dict[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 request: ``meta`` (see ``meta_2026``) goes in ``params._meta``."""
    return rpc_request(method, {**params, "_meta": meta}, msg_id)


def headers_2026(method: str, params: dict[str, Any]) -> dict[str, str]:
    """The headers a 2026-07-28 request needs: content negotiation, version, and the
    routing headers ``Mcp-Method`` and (for the methods that name something) ``Mcp-Name``."""
    headers = {
        "content-type": "application/json",
        "accept": ACCEPT,
        "mcp-protocol-version": PROTOCOL_2026,
        "mcp-method": method,
    }
    name_field = NAME_FIELD.get(method)
    if name_field and isinstance(params.get(name_field), str):
        headers["mcp-name"] = _param_header(params[name_field])
    return headers


def param_headers(tool: dict[str, Any], arguments: dict[str, Any]) -> dict[str, str]:
    """``Mcp-Param-*`` headers for the arguments the tool's schema marks ``x-mcp-header``."""
    headers: dict[str, str] = {}
    properties = (tool.get("inputSchema") or {}).get("properties") or {}
    for prop, schema in properties.items():
        if isinstance(schema, dict) and "x-mcp-header" in schema and arguments.get(prop) is not None:
            headers[f"mcp-param-{schema['x-mcp-header']}".lower()] = _param_header(arguments[prop])
    return headers


def expect_result(body: Any, http_status: int) -> dict[str, Any]:
    """The ``result`` of a JSON-RPC response; ``RpcError`` for an error response and
    ``ConnectionTrouble`` for anything that is not a response."""
    if not isinstance(body, dict):
        raise ConnectionTrouble(f"expected a JSON-RPC response, got HTTP {http_status} {body!r:.200}")
    if "error" in body:
        raise RpcError.from_error(body["error"], http_status)
    result = body.get("result")
    if not isinstance(result, dict):
        raise ConnectionTrouble(f"expected a JSON-RPC result object, got {body!r:.200}")
    return result


def _param_header(value: Any) -> str:
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    # A plain value that looks like the sentinel is encoded too, so it is never misread.
    sentinel = text.startswith("=?base64?") and text.endswith("?=")
    safe = text.isascii() and text.isprintable() and text == text.strip() and not sentinel
    # A lone surrogate (a JSON "\ud800" escape) has no UTF-8: sent as it is, for the server to
    # refuse clearly, rather than failing here.
    raw = text.encode("utf-8", "surrogatepass")
    return text if safe else "=?base64?" + base64.b64encode(raw).decode() + "?="


def _list_tools(request: Callable[[str, dict[str, Any]], dict[str, Any]]) -> list[dict[str, Any]]:
    """Every page of tools/list; the same in both eras."""
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        result = request("tools/list", {"cursor": cursor} if cursor else {})
        tools += [t for t in result.get("tools") or [] if isinstance(t, dict)]
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            return tools


class Client2026:
    era = "2026"

    def __init__(self, http: Transport, *, meta: dict[str, Any] | None = None) -> None:
        self.http = http
        self.meta = meta if meta is not None else meta_2026()
        self._ids = itertools.count(1)

    def open(self) -> None:
        """Stateless: nothing to open."""

    def close(self) -> None:
        """Stateless: nothing to close."""

    def send(
        self,
        method: str,
        params: dict[str, Any],
        extra_headers: dict[str, str] | None = None,
        *,
        meta: dict[str, Any] | None = None,
    ) -> tuple[int, Any]:
        """One request: ``(HTTP status, the JSON-RPC response)``, errors included."""
        msg_id = next(self._ids)
        body = envelope(method, params, msg_id, self.meta if meta is None else meta)
        with self.http.send("POST", {**headers_2026(method, params), **(extra_headers or {})}, body) as reply:
            return reply.status, response_of(reply, msg_id)

    def request(
        self, method: str, params: dict[str, Any], extra_headers: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """One request's ``result``; ``RpcError`` if the server answered an error."""
        status, message = self.send(method, params, extra_headers)
        return expect_result(message, status)

    def list_tools(self) -> list[dict[str, Any]]:
        return _list_tools(self.request)

    def call_tool(
        self, tool: dict[str, Any], arguments: dict[str, Any], answers: dict[str, Any]
    ) -> CallReply:
        params: dict[str, Any] = {"name": tool["name"], "arguments": arguments}
        if answers:
            params["inputResponses"] = answers
        result = self.request("tools/call", params, param_headers(tool, arguments))
        kind = result.get("resultType")
        if kind == "task":
            return CallReply(task=self._view(result))
        if kind == "input_required":
            return CallReply(questions=_questions_of(result.get("inputRequests")))
        return CallReply(result=result)

    def _view(self, task: dict[str, Any]) -> TaskView:
        return TaskView(
            task_id=str(task.get("taskId")),
            status=str(task.get("status")),
            message=task.get("statusMessage") if isinstance(task.get("statusMessage"), str) else None,
            poll_ms=_int(task.get("pollIntervalMs"), 1000),
            result=task.get("result") if isinstance(task.get("result"), dict) else None,
            error=task.get("error") if isinstance(task.get("error"), dict) else None,
            input_requests=task.get("inputRequests") if isinstance(task.get("inputRequests"), dict) else None,
            raw=task,
        )

    def get_task(self, task_id: str) -> TaskView:
        return self._view(self.request("tasks/get", {"taskId": task_id}))

    def questions(self, view: TaskView) -> list[Question]:
        return _questions_of(view.input_requests)

    def answer(self, task_id: str, answers: dict[str, Any]) -> None:
        self.request("tasks/update", {"taskId": task_id, "inputResponses": answers})

    def cancel(self, task_id: str) -> None:
        self.request("tasks/cancel", {"taskId": task_id})

    def outcome(self, view: TaskView) -> Outcome:
        if view.status == "completed":
            result = dict(view.result or {})
            result.pop("resultType", None)
            return Outcome(view.status, result=result)
        return Outcome(view.status, error=view.error)


def _questions_of(requests: Any) -> list[Question]:
    if not isinstance(requests, dict):
        return []
    out = []
    for key, request in requests.items():
        if isinstance(request, dict):
            params = request.get("params")
            out.append(
                Question(
                    str(key),
                    str(request.get("method", "elicitation/create")),
                    params if isinstance(params, dict) else {},
                )
            )
    return out


def response_of(reply: Reply, msg_id: Any) -> Any:
    """The JSON-RPC response to ``msg_id`` from a JSON body or from an event stream."""
    if not reply.is_stream:
        return reply.body
    for event in reply.events():
        message = event.message()
        if message and message.get("id") == msg_id and ("result" in message or "error" in message):
            return message
    raise ConnectionTrouble("the event stream ended without a response", retryable=True)


class Client2025:
    era = "2025"

    def __init__(
        self,
        http: Transport,
        *,
        capabilities: dict[str, Any] | None = None,
        client_info: dict[str, Any] = CLIENT_INFO,
    ) -> None:
        self.http = http
        self.capabilities = capabilities if capabilities is not None else CAPABILITIES_2025
        self.client_info = client_info
        self.session_id: str | None = None
        # initialize's result (the server's capabilities and info), once open() has run.
        self.initialized: dict[str, Any] | None = None
        self._ids = itertools.count(1)
        self._progress_token = f"taskgate-cli-{uuid.uuid4().hex[:12]}"
        # Question key (a string) -> the JSON-RPC id the server used, echoed in the answer.
        self._request_ids: dict[str, Any] = {}

    def headers(self, **extra: str) -> dict[str, str]:
        """Headers for a request in this session (``extra`` last: it may override)."""
        headers = {"content-type": "application/json", "accept": ACCEPT}
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
            headers["mcp-protocol-version"] = PROTOCOL_2025
        headers.update(extra)
        return headers

    def message(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A request with this session's next id."""
        return rpc_request(method, params, next(self._ids))

    def open(self) -> None:
        body = self.message(
            "initialize",
            {
                "protocolVersion": PROTOCOL_2025,
                "capabilities": self.capabilities,
                "clientInfo": self.client_info,
            },
        )
        with self.http.send("POST", self.headers(), body) as reply:
            result = expect_result(response_of(reply, body["id"]), reply.status)
            self.session_id = reply.headers.get("mcp-session-id")
        version = result.get("protocolVersion")
        if version != PROTOCOL_2025:
            raise ConnectionTrouble(f"the server negotiated {version!r}, not {PROTOCOL_2025}")
        self.initialized = result
        notice = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        self.http.send("POST", self.headers(), notice).close()

    def close(self) -> None:
        if self.session_id:
            with contextlib.suppress(ConnectionTrouble, OSError):
                self.http.send("DELETE", self.headers(), timeout=5).close()
            self.session_id = None

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = self.message(method, params)
        msg_id = body["id"]
        reply = self.http.send("POST", self.headers(), body)
        # The last event id seen on any stream: one that carries only notifications has none.
        last_id: str | None = None
        retry_ms = 500
        for _ in range(100):
            with reply:
                if not reply.is_stream:
                    return expect_result(reply.body, reply.status)
                for event in reply.events():
                    last_id = event.id or last_id
                    retry_ms = event.retry_ms or retry_ms
                    message = event.message()
                    if (
                        message
                        and message.get("id") == msg_id
                        and ("result" in message or "error" in message)
                    ):
                        return expect_result(message, reply.status)
            # The stream ended before the response (SEP-1699): resume where it stopped.
            if last_id is None:
                raise ConnectionTrouble("the event stream ended without a response or an event id")
            time.sleep(retry_ms / 1000)
            reply = self.http.send("GET", self.headers(**{"last-event-id": last_id}))
        raise ConnectionTrouble("no response after 100 resumed streams")

    def list_tools(self) -> list[dict[str, Any]]:
        return _list_tools(self.request)

    def call_tool(
        self, tool: dict[str, Any], arguments: dict[str, Any], answers: dict[str, Any]
    ) -> CallReply:
        params: dict[str, Any] = {"name": tool["name"], "arguments": arguments}
        support = (tool.get("execution") or {}).get("taskSupport", "forbidden")
        if support in ("optional", "required"):
            params["task"] = {}
            params["_meta"] = {"progressToken": self._progress_token}
        result = self.request("tools/call", params)
        task = result.get("task")
        if isinstance(task, dict):
            return CallReply(task=self._view(task))
        return CallReply(result=result)

    @staticmethod
    def _view(task: dict[str, Any]) -> TaskView:
        return TaskView(
            task_id=str(task.get("taskId")),
            status=str(task.get("status")),
            message=task.get("statusMessage") if isinstance(task.get("statusMessage"), str) else None,
            poll_ms=_int(task.get("pollInterval"), 1000),
            raw=task,
        )

    def get_task(self, task_id: str) -> TaskView:
        return self._view(self.request("tasks/get", {"taskId": task_id}))

    def questions(self, view: TaskView) -> list[Question]:
        """Open ``tasks/result`` and collect the ``elicitation/create`` requests it
        sends; stop when the stream ends, says the task is no longer waiting, or
        carries the final response."""
        body = self.message("tasks/result", {"taskId": view.task_id})
        found: list[Question] = []
        try:
            reply = self.http.send("POST", self.headers(), body, timeout=15)
        except ConnectionTrouble as exc:
            if exc.retryable:
                return []  # e.g. the task moved on and the stream stayed quiet: poll again
            raise
        with reply:
            if not reply.is_stream:
                return []  # already terminal: the next tasks/get will say so
            try:
                for event in reply.events():
                    message = event.message()
                    if not message:
                        continue
                    if message.get("method") == "elicitation/create" and "id" in message:
                        params = message.get("params")
                        self._request_ids[str(message["id"])] = message["id"]
                        found.append(
                            Question(
                                str(message["id"]),
                                "elicitation/create",
                                params if isinstance(params, dict) else {},
                            )
                        )
                    elif message.get("method") == "notifications/tasks/status":
                        params = message.get("params") or {}
                        if params.get("status") != "input_required" and not found:
                            break
                    elif "result" in message or "error" in message:
                        break
            except (TimeoutError, OSError):
                pass  # a quiet stream: whatever was asked is in `found`
        return found

    def answer(self, task_id: str, answers: dict[str, Any]) -> None:
        for key, response in answers.items():
            message = rpc_response(self._request_ids.get(key, key), response)
            with self.http.send("POST", self.headers(), message) as reply:
                if reply.status >= 400:
                    error = reply.body.get("error") if isinstance(reply.body, dict) else None
                    raise RpcError.from_error(error or {"message": f"HTTP {reply.status}"}, reply.status)

    def cancel(self, task_id: str) -> None:
        self.request("tasks/cancel", {"taskId": task_id})

    def outcome(self, view: TaskView) -> Outcome:
        try:
            result = self.request("tasks/result", {"taskId": view.task_id})
        except RpcError as exc:
            error: dict[str, Any] = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            return Outcome(view.status, error=error)
        result = dict(result)
        meta = {k: v for k, v in (result.pop("_meta", None) or {}).items() if k != RELATED_TASK}
        if meta:
            result["_meta"] = meta
        return Outcome(view.status, result=result)
