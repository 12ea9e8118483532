"""taskgate_cli.protocol and .transport over an in-memory transport: what each client
sends, and how it reads JSON bodies, event streams and errors. No sockets."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest
from taskgate_cli import protocol
from taskgate_cli.protocol import (
    PROTOCOL_2025,
    PROTOCOL_2026,
    RELATED_TASK,
    TASKS_EXT,
    Client2025,
    Client2026,
)
from taskgate_cli.transport import ConnectionTrouble, Reply, RpcError, parse_sse, reply_of

Answer = Callable[[dict[str, Any] | None], Reply]


class Scripted:
    """A transport that answers from a script and records what was sent."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.sent: list[tuple[str, dict[str, str], Any]] = []
        self.closed = 0

    def send(
        self, method: str, headers: dict[str, str], body: Any = None, *, timeout: float | None = None
    ) -> Reply:
        self.sent.append((method, headers, body))
        assert self.answers, f"unexpected {method} {body}"
        reply = self.answers.pop(0)(body)
        if reply.is_stream:
            reply.closer = self._count_close
        return reply

    def _count_close(self) -> None:
        self.closed += 1


def result(value: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> Answer:
    return lambda body: Reply(
        status, headers or {}, {"jsonrpc": "2.0", "id": (body or {}).get("id"), "result": value}
    )


def error(code: int, message: str, status: int = 200) -> Answer:
    return lambda body: Reply(
        status,
        {},
        {"jsonrpc": "2.0", "id": (body or {}).get("id"), "error": {"code": code, "message": message}},
    )


def empty(status: int = 202) -> Answer:
    return lambda body: Reply(status, {})


def stream(*events: tuple[str | None, Any], retry: int | None = None) -> Answer:
    """An SSE reply; ``Any`` may be a callable of the request body (to echo its id)."""

    def answer(body: dict[str, Any] | None) -> Reply:
        # The retry field goes in the first event (before its id, which would otherwise make
        # the text non-empty and drop it: the resume then waited the client's default 500 ms).
        text = f"retry: {retry}\n" if retry is not None else ""
        for event_id, data in events:
            message = data(body) if callable(data) else data
            text += f"id: {event_id}\n" if event_id else ""
            text += f"data: {json.dumps(message) if message is not None else ''}\n\n"
        return reply_of(200, {"Content-Type": "text/event-stream"}, text.encode())

    return answer


def response(
    value: dict[str, Any], msg_id: int | None = None
) -> Callable[[dict[str, Any] | None], dict[str, Any]]:
    """A result for the request's id (or ``msg_id``: a resumed GET has no body)."""
    return lambda body: {"jsonrpc": "2.0", "id": msg_id or (body or {}).get("id"), "result": value}


# --- transport -----------------------------------------------------------------------------
def test_parse_sse_frames_events_like_the_spec() -> None:
    text = 'id: a\nretry: 250\ndata: \n\n: a comment\n\r\ndata: {"x":\r\ndata: 1}\r\n\r\nid: b\ndata:{}'
    events = parse_sse(text)
    assert [(e.id, e.retry_ms, e.data) for e in events] == [
        ("a", 250, ""),
        (None, None, '{"x":\n1}'),
        ("b", None, "{}"),
    ]
    assert events[0].message() is None  # a priming event carries no message
    assert events[1].message() == {"x": 1}


def test_reply_of_reads_json_streams_and_empty_bodies() -> None:
    assert reply_of(200, {"Content-Type": "application/json"}, b'{"a": 1}').body == {"a": 1}
    assert reply_of(202, {}, b"").body is None
    sse = reply_of(200, {"Content-Type": "text/event-stream"}, b"data: {}\n\n")
    assert sse.is_stream and sse.headers == {"content-type": "text/event-stream"}
    assert [e.message() for e in sse.events()] == [{}]


def test_reply_of_keeps_json_rpc_errors_whatever_the_status() -> None:
    reply = reply_of(401, {}, b'{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Unauthorized"}}')
    assert reply.status == 401 and reply.body["error"]["code"] == -32001


@pytest.mark.parametrize(
    ("status", "headers", "retryable", "retry_after"),
    [(503, {"Retry-After": "2"}, True, 2.0), (429, {}, True, None), (404, {}, False, None)],
)
def test_reply_of_turns_other_http_errors_into_connection_trouble(
    status: int, headers: dict[str, str], retryable: bool, retry_after: float | None
) -> None:
    with pytest.raises(ConnectionTrouble) as caught:
        reply_of(status, headers, b"<html>busy</html>", "http://x/mcp")
    assert caught.value.retryable is retryable and caught.value.retry_after == retry_after
    assert caught.value.message == f"HTTP {status} from http://x/mcp: <html>busy</html>"


def test_reply_of_refuses_a_body_that_is_not_json() -> None:
    with pytest.raises(ConnectionTrouble, match="not JSON"):
        reply_of(200, {"content-type": "text/html"}, b"<html>")


# --- 2026-07-28 ----------------------------------------------------------------------------
def test_a_2026_request_carries_meta_and_routing_headers() -> None:
    http = Scripted(result({"taskId": "t1", "status": "working", "resultType": "complete"}))
    Client2026(http).get_task("t1")
    method, headers, body = http.sent[0]
    assert method == "POST"
    assert headers == {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL_2026,
        "mcp-method": "tasks/get",
        "mcp-name": "t1",
    }
    assert body == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tasks/get",
        "params": {
            "taskId": "t1",
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": PROTOCOL_2026,
                "io.modelcontextprotocol/clientCapabilities": {
                    "extensions": {TASKS_EXT: {}},
                    "elicitation": {"form": {}, "url": {}},
                },
                "io.modelcontextprotocol/clientInfo": protocol.CLIENT_INFO,
            },
        },
    }


def test_meta_and_headers_builders() -> None:
    plain = protocol.meta_2026(tasks=False, elicitation=False, client_info={"name": "x", "version": "1"})
    assert plain["io.modelcontextprotocol/clientCapabilities"] == {}
    assert "mcp-name" not in protocol.headers_2026("tools/call", {"name": 3})
    assert protocol.headers_2026("tasks/cancel", {"taskId": "t"})["mcp-name"] == "t"
    assert "mcp-name" not in protocol.headers_2026("server/discover", {"name": "x"})
    assert protocol.envelope("ping", {}, 9, plain) == {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "ping",
        "params": {"_meta": plain},
    }


def test_call_tool_sends_param_headers_and_answers() -> None:
    tool = {
        "name": "orders_report",
        "inputSchema": {
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "city": {"type": "string", "x-mcp-header": "City"},
                "dry": {"type": "boolean", "x-mcp-header": "Dry"},
                "note": {"type": "string", "x-mcp-header": "Note"},
                "year": {"type": "integer"},
            }
        },
    }
    http = Scripted(
        result({"resultType": "task", "taskId": "t9", "status": "working", "pollIntervalMs": 250})
    )
    reply = Client2026(http).call_tool(
        tool, {"region": "eu-west-1", "city": "Zürich", "dry": True, "note": None, "year": 2025}, {"k": {}}
    )
    assert reply.task is not None and reply.task.task_id == "t9" and reply.task.poll_ms == 250
    _, headers, body = http.sent[0]
    assert headers["mcp-name"] == "orders_report"
    assert headers["mcp-param-region"] == "eu-west-1"
    assert headers["mcp-param-dry"] == "true"
    assert headers["mcp-param-city"] == "=?base64?" + base64.b64encode("Zürich".encode()).decode() + "?="
    assert "mcp-param-note" not in headers and "mcp-param-year" not in headers
    assert body["params"]["inputResponses"] == {"k": {}}


def test_call_tool_reads_questions_and_inline_results() -> None:
    asks = {
        "resultType": "input_required",
        "inputRequests": {"confirm": {"method": "elicitation/create", "params": {"message": "Sure?"}}},
    }
    http = Scripted(result(asks), result({"content": [], "resultType": "complete"}))
    client = Client2026(http)
    first = client.call_tool({"name": "t"}, {}, {})
    assert [(q.key, q.method, q.params) for q in first.questions] == [
        ("confirm", "elicitation/create", {"message": "Sure?"})
    ]
    assert "inputResponses" not in http.sent[0][2]["params"]
    assert client.call_tool({"name": "t"}, {}, {}).result == {"content": [], "resultType": "complete"}


def test_a_2026_response_may_come_on_an_event_stream() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}
    http = Scripted(stream((None, note), ("e1", response({"tools": [{"name": "a"}]}))))
    assert Client2026(http).list_tools() == [{"name": "a"}]
    assert http.closed == 1


def test_a_stream_that_ends_without_the_response_is_retryable_trouble() -> None:
    with pytest.raises(ConnectionTrouble) as caught:
        Client2026(Scripted(stream(("e1", None)))).request("ping", {})
    assert caught.value.retryable


def test_errors_raise_from_request_and_come_back_from_send() -> None:
    http = Scripted(error(-32602, "Unknown task", 200), error(-32602, "Unknown task", 404))
    client = Client2026(http)
    with pytest.raises(RpcError) as caught:
        client.request("tasks/get", {"taskId": "nope"})
    assert (caught.value.code, caught.value.message, caught.value.http_status) == (
        -32602,
        "Unknown task",
        200,
    )
    status, message = client.send("tasks/get", {"taskId": "nope"}, meta={"x": 1})
    assert status == 404 and message["error"]["code"] == -32602
    assert http.sent[1][2]["params"]["_meta"] == {"x": 1}


def test_a_body_that_is_not_a_response_is_trouble() -> None:
    with pytest.raises(ConnectionTrouble):
        Client2026(Scripted(lambda body: Reply(200, {}, ["not", "an", "object"]))).request("ping", {})
    with pytest.raises(ConnectionTrouble):
        Client2026(Scripted(lambda body: Reply(200, {}, {"id": 1, "result": 3}))).request("ping", {})


def test_list_tools_follows_cursors() -> None:
    http = Scripted(
        result({"tools": [{"name": "a"}, "junk"], "nextCursor": "c2"}), result({"tools": [{"name": "b"}]})
    )
    assert [t["name"] for t in Client2026(http).list_tools()] == ["a", "b"]
    assert http.sent[1][2]["params"]["cursor"] == "c2"


def test_2026_task_views_and_outcomes() -> None:
    done = {
        "taskId": "t",
        "status": "completed",
        "pollIntervalMs": 0,
        "result": {"content": [], "resultType": "complete"},
    }
    failed = {"taskId": "t", "status": "failed", "error": {"code": -32603, "message": "boom"}}
    parked = {
        "taskId": "t",
        "status": "input_required",
        "statusMessage": "waiting",
        "inputRequests": {"q": {"params": {"message": "?"}}},
    }
    client = Client2026(Scripted(result(done), result(failed), result(parked)))
    view = client.get_task("t")
    assert view.terminal and view.poll_ms == 1000  # 0 is no interval: the default
    assert client.outcome(view).result == {"content": []}
    assert client.outcome(client.get_task("t")).error == {"code": -32603, "message": "boom"}
    waiting = client.get_task("t")
    assert not waiting.terminal and waiting.message == "waiting"
    assert [(q.key, q.method) for q in client.questions(waiting)] == [("q", "elicitation/create")]


# --- 2025-11-25 ----------------------------------------------------------------------------
def opened(*answers: Answer) -> tuple[Client2025, Scripted]:
    init = {"protocolVersion": PROTOCOL_2025, "capabilities": {"tasks": {}}}
    http = Scripted(result(init, headers={"mcp-session-id": "s1"}), empty(), *answers)
    client = Client2025(http)
    client.open()
    return client, http


def test_open_initializes_and_notifies_in_the_session() -> None:
    client, http = opened()
    assert client.session_id == "s1" and client.initialized == {
        "protocolVersion": PROTOCOL_2025,
        "capabilities": {"tasks": {}},
    }
    (_, first_headers, init), (_, headers, notice) = http.sent
    assert "mcp-session-id" not in first_headers
    assert init["params"] == {
        "protocolVersion": PROTOCOL_2025,
        "capabilities": protocol.CAPABILITIES_2025,
        "clientInfo": protocol.CLIENT_INFO,
    }
    assert notice == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert headers["mcp-session-id"] == "s1" and headers["mcp-protocol-version"] == PROTOCOL_2025


def test_open_refuses_another_protocol_version() -> None:
    http = Scripted(result({"protocolVersion": "2025-06-18"}, headers={"mcp-session-id": "s"}))
    with pytest.raises(ConnectionTrouble, match="negotiated '2025-06-18'"):
        Client2025(http, capabilities={"tasks": {}}, client_info={"name": "t", "version": "0"}).open()
    assert http.sent[0][2]["params"]["capabilities"] == {"tasks": {}}


def test_close_deletes_the_session_once() -> None:
    client, http = opened(empty(200))
    client.close()
    client.close()
    method, headers, body = http.sent[-1]
    assert (method, headers["mcp-session-id"], body) == ("DELETE", "s1", None)
    assert client.session_id is None and len(http.sent) == 3


def test_a_2025_request_resumes_streams_until_the_response(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(protocol.time, "sleep", waits.append)
    note = {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": {"status": "working"}}
    client, http = opened(
        stream(("s:0", None), (None, note), retry=1),
        stream((None, note)),  # only id-less notifications: resume from the last id seen anywhere
        # initialize was id 1 (the notification has none): tasks/result is 2
        stream(("s:1", None), ("s:2", response({"content": [{"type": "text", "text": "done"}]}, 2))),
    )
    assert client.request("tasks/result", {"taskId": "t"}) == {"content": [{"type": "text", "text": "done"}]}
    gets = [(m, h.get("last-event-id")) for m, h, _ in http.sent[3:]]
    assert gets == [("GET", "s:0"), ("GET", "s:0")]
    assert http.closed == 3
    assert waits == [0.001, 0.001]  # the server's retry (ms) is waited before each resume


def test_a_stream_with_no_event_id_cannot_be_resumed() -> None:
    client, _ = opened(stream((None, None)))
    with pytest.raises(ConnectionTrouble, match="without a response or an event id"):
        client.request("tasks/result", {"taskId": "t"})


def test_call_tool_asks_for_a_task_when_the_tool_allows_one() -> None:
    task = {"taskId": "t1", "status": "working", "pollInterval": 500}
    client, http = opened(result({"task": task}), result({"content": []}))
    reply = client.call_tool({"name": "slow", "execution": {"taskSupport": "optional"}}, {"s": 1}, {})
    assert reply.task is not None and (reply.task.task_id, reply.task.poll_ms) == ("t1", 500)
    params = http.sent[2][2]["params"]
    assert params["task"] == {} and params["_meta"]["progressToken"].startswith("taskgate-cli-")
    assert client.call_tool({"name": "greet"}, {}, {}).result == {"content": []}
    assert "task" not in http.sent[3][2]["params"]


def test_questions_come_from_the_result_stream_and_answers_echo_their_ids() -> None:
    ask = {"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": {"message": "Delete?"}}
    moved_on = {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": {"status": "working"}}
    client, http = opened(stream(("e0", None), ("e1", ask), (None, moved_on)), empty(202))
    view = protocol.TaskView("t1", "input_required")
    asked = client.questions(view)
    assert [(q.key, q.params) for q in asked] == [("7", {"message": "Delete?"})]
    assert http.sent[2][2]["method"] == "tasks/result"
    client.answer("t1", {"7": {"action": "accept", "content": {"confirm": True}}})
    assert http.sent[3][2] == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"action": "accept", "content": {"confirm": True}},
    }


def test_questions_stop_when_the_task_is_no_longer_waiting() -> None:
    moved_on = {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": {"status": "completed"}}
    never = {"jsonrpc": "2.0", "id": 8, "method": "elicitation/create", "params": {}}
    client, _ = opened(stream(("e0", moved_on), ("e1", never)), result({"task": {}}))
    assert client.questions(protocol.TaskView("t1", "input_required")) == []
    # a JSON answer (the task has ended) asks nothing either
    assert client.questions(protocol.TaskView("t1", "input_required")) == []


def test_a_refused_answer_raises() -> None:
    client, _ = opened(error(-32602, "No such request", 400))
    with pytest.raises(RpcError, match="No such request"):
        client.answer("t1", {"9": {"action": "decline"}})


def test_2025_outcomes_come_from_tasks_result() -> None:
    meta = {RELATED_TASK: {"taskId": "t1"}, "other": 1}
    client, _ = opened(
        result({"content": [], "_meta": meta}),
        result({"content": [], "_meta": {RELATED_TASK: {"taskId": "t1"}}}),
        error(-32603, "tool broke"),
    )
    view = protocol.TaskView("t1", "completed")
    assert client.outcome(view).result == {"content": [], "_meta": {"other": 1}}
    assert client.outcome(view).result == {"content": []}
    failed = client.outcome(protocol.TaskView("t1", "failed"))
    assert failed.status == "failed" and failed.error == {"code": -32603, "message": "tool broke"}
