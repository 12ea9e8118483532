"""What a tool can do beyond returning text, in both eras, on the fakes: every content type
and an output schema, progress and log messages on plain calls, and every kind of input
request (form and URL elicitation, sampling, roots) in every mode (a plain call's rounds,
a task), never asking for what the client did not declare; plus the 2026-07-28 stateless
rules (removed methods, -32021)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from starlette.testclient import TestClient
from taskgate_cli import protocol
from taskgate_cli.transport import parse_sse

from taskgate.testing import ToolTester, accept, roots, sampled
from tests.fakes import TEST_TOOL_MODULES, World
from tests.mcp_client import Legacy
from tests.sse import over_streams, result_over_streams

PV = "io.modelcontextprotocol/protocolVersion"
CC = "io.modelcontextprotocol/clientCapabilities"
LOG = "io.modelcontextprotocol/logLevel"
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
EVERYTHING = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {"listChanged": True}}
SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "Paris"},
    "model": "test-model",
    "stopReason": "endTurn",
}
ROOTS = {"roots": [{"uri": "file:///work", "name": "work"}]}


class Reply:
    """One 2026 response: the HTTP status, the notifications before it, and the message."""

    def __init__(self, status: int, messages: list[dict[str, Any]], sse: bool) -> None:
        self.status = status
        self.sse = sse
        self.notifications = [m for m in messages if "id" not in m]
        self.requests = [m for m in messages if "id" in m and "method" in m]
        [self.message] = [m for m in messages if "id" in m and "method" not in m]

    @property
    def result(self) -> dict[str, Any]:
        assert "result" in self.message, self.message
        return self.message["result"]  # type: ignore[no-any-return]

    @property
    def error(self) -> dict[str, Any]:
        assert "error" in self.message, self.message
        return self.message["error"]  # type: ignore[no-any-return]


def send(
    world: World,
    method: str,
    params: dict[str, Any],
    *,
    caps: dict[str, Any] | None = None,
    owner: str = "anonymous",
    **meta: Any,
) -> Reply:
    """A 2026-07-28 request as the conformance suite sends it (``meta``: extra ``_meta`` keys)."""
    full_meta = {PV: "2026-07-28", CC: EVERYTHING if caps is None else caps, **meta}
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": {**params, "_meta": full_meta}}
    headers = protocol.headers_2026(method, params)
    world.settle()
    reply = world.handle(body, headers, owner)
    if reply.stream is not None:
        text = "".join(reply.stream)
        # One JSON message per data line, as the suite's stateless client reads it.
        lines = [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]
        return Reply(reply.status, [json.loads(line) for line in lines], sse=True)
    assert reply.body is not None
    return Reply(reply.status, [reply.body], sse=False)


def call(world: World, name: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> Reply:
    extra = {k: kwargs.pop(k) for k in ("inputResponses", "requestState") if k in kwargs}
    return send(world, "tools/call", {"name": name, "arguments": arguments or {}, **extra}, **kwargs)


@pytest.fixture
def kit() -> ToolTester:
    """The tools the unit tier serves, through taskgate.testing (as a tool author tests theirs)."""
    return ToolTester(*TEST_TOOL_MODULES)


@pytest.fixture
def legacy(http: TestClient) -> Legacy:
    client = Legacy(http)
    client.client.capabilities = {"tasks": {}, "elicitation": {}, "sampling": {}}
    client.initialize()
    return client


# -- content ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "types"),
    [
        ("test_simple_text", ["text"]),
        ("test_image_content", ["image"]),
        ("test_audio_content", ["audio"]),
        ("test_embedded_resource", ["resource"]),
        ("test_multiple_content_types", ["text", "image", "resource"]),
        ("content_gallery", ["text", "image", "audio", "resource", "resource_link"]),
    ],
)
def test_every_content_type_in_a_result(world: World, tool: str, types: list[str]) -> None:
    result = call(world, tool).result
    assert [b["type"] for b in result["content"]] == types and result["isError"] is False
    for block in result["content"]:
        if block["type"] in ("image", "audio"):
            assert block["data"] and block["mimeType"]
    if tool == "test_audio_content":
        assert result["content"][0]["mimeType"] == "audio/wav"
    if tool == "content_gallery":
        assert result["content"][3]["resource"]["blob"] == "AAE="
        assert result["content"][4] == {
            "type": "resource_link",
            "uri": "test://gallery/report",
            "name": "report",
            "mimeType": "text/csv",
            "size": 12,
        }


def test_a_tool_error_is_a_result_not_a_json_rpc_error(kit: ToolTester) -> None:
    for run in (kit.call("test_error_handling"), kit.start("test_error_handling")):
        assert run.status == "completed" and run.error is None
        assert run.is_error and run.text


def test_a_model_return_type_is_the_output_schema_and_the_structured_content(world: World) -> None:
    tools = {t["name"]: t for t in send(world, "tools/list", {}).result["tools"]}
    schema = tools["forecast"]["outputSchema"]
    assert schema["type"] == "object" and set(schema["properties"]) == {"city", "celsius"}
    assert "outputSchema" not in tools["greet"]
    result = call(world, "forecast", {"city": "Oslo"}).result
    assert result["structuredContent"] == {"city": "Oslo", "celsius": 21.5}
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


# -- progress ---------------------------------------------------------------------------


def test_progress_on_a_plain_2026_call_streams_before_the_result(world: World) -> None:
    reply = call(world, "test_tool_with_progress", progressToken="p-1")
    assert reply.sse and reply.status == 200 and reply.requests == []
    progress = [n["params"] for n in reply.notifications]
    assert [(p["progressToken"], p["progress"], p["total"]) for p in progress] == [
        ("p-1", 0, 100),
        ("p-1", 50, 100),
        ("p-1", 100, 100),
    ]
    assert reply.result["content"][0]["text"] == "Progress test completed"
    # No token, no notifications: a plain JSON reply.
    quiet = call(world, "test_tool_with_progress")
    assert not quiet.sse and quiet.notifications == []


def test_progress_and_logs_on_a_plain_2025_call_come_on_its_stream(legacy: Legacy) -> None:
    resp = legacy.post(
        "tools/call", {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 5}}
    )
    assert resp.headers["content-type"].startswith("text/event-stream")
    messages = [e.message() for e in parse_sse(resp.text)]
    assert [m["params"]["progress"] for m in messages[:-1]] == [0, 50, 100]
    assert messages[-1]["result"]["content"][0]["text"] == "Progress test completed"
    # A client that takes only JSON gets the result alone.
    plain = legacy.post(
        "tools/call",
        {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 6}},
        accept="application/json",
    )
    assert plain.json()["result"]["content"][0]["text"] == "Progress test completed"


# -- logging ----------------------------------------------------------------------------


def test_2026_logs_only_for_a_request_that_asks_and_at_its_level(world: World) -> None:
    silent = call(world, "test_tool_with_logging", caps={})
    assert not silent.sse and silent.notifications == []
    info = call(world, "test_tool_with_logging", **{LOG: "debug"})
    assert [n["method"] for n in info.notifications] == ["notifications/message"] * 3
    assert info.notifications[0]["params"] == {"level": "info", "data": "Tool execution started"}
    assert call(world, "test_tool_with_logging", **{LOG: "warning"}).notifications == []
    bad = call(world, "test_tool_with_logging", **{LOG: "loud"})
    assert bad.status == 400 and bad.error["code"] == -32602


def test_2025_set_level_is_an_empty_result_and_filters_the_session(legacy: Legacy) -> None:
    def logged() -> list[dict[str, Any]]:
        resp = legacy.post("tools/call", {"name": "test_tool_with_logging", "arguments": {}})
        return [m for m in (e.message() for e in parse_sse(resp.text)) if m and "method" in m]

    # Before any logging/setLevel: every level.
    assert [m["params"]["data"] for m in logged()] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    set_level = legacy.request("logging/setLevel", {"level": "error"})
    # Exactly {}: the suite (and the TS SDK's strict schema) accept nothing else.
    assert set_level["result"] == {} and "error" not in set_level
    resp = legacy.post("tools/call", {"name": "test_tool_with_logging", "arguments": {}})
    assert resp.headers["content-type"].startswith("application/json")
    assert legacy.result("logging/setLevel", {"level": "debug"}) == {}
    assert len(logged()) == 3
    assert legacy.request("logging/setLevel", {"level": "chatty"})["error"]["code"] == -32602


def test_2025_set_level_needs_a_session(world: World) -> None:
    reply = world.handle(
        {"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "info"}}
    )
    assert reply.body is not None and reply.body["error"]["code"] == -32600


def test_both_eras_declare_logging(legacy: Legacy, world: World) -> None:
    assert legacy.client.initialized is not None
    assert legacy.client.initialized["capabilities"]["logging"] == {}
    assert send(world, "server/discover", {}).result["capabilities"]["logging"] == {}


# -- input requests on a plain 2026 call (MRTR) ------------------------------------------


def test_elicitation_round_then_the_answer_completes_without_state(world: World) -> None:
    first = call(world, "test_input_required_result_elicitation")
    assert first.result["resultType"] == "input_required"
    assert first.result["inputRequests"]["user_name"]["method"] == "elicitation/create"
    # Nothing to carry yet: no requestState.
    assert "requestState" not in first.result
    done = call(
        world,
        "test_input_required_result_elicitation",
        inputResponses={
            "user_name": {"action": "accept", "content": {"name": "Alice"}},
            "unrelated": {"action": "accept", "content": {}},
        },
    )
    assert done.result == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "Hello, Alice!"}],
        "isError": False,
    }
    # An answer to something else: asked again.
    again = call(
        world, "test_input_required_result_elicitation", inputResponses={"wrong_key": {"action": "accept"}}
    )
    assert again.result["resultType"] == "input_required"


@pytest.mark.parametrize("answers", [{"user_name": 12345}, {"user_name": {"action": "maybe"}}, None, "yes"])
def test_malformed_answers_are_the_clients_error(world: World, answers: Any) -> None:
    reply = call(world, "test_input_required_result_elicitation", inputResponses=answers)
    assert reply.status == 400 and reply.error["code"] == -32602


def test_sampling_and_roots_rounds(kit: ToolTester) -> None:
    run = kit.call("test_input_required_result_sampling")
    [(key, question)] = run.questions.items()
    assert (question.method, question.params) == (
        "sampling/createMessage",
        {
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}
            ],
            "maxTokens": 100,
        },
    )
    assert run.answer({key: sampled("Paris")}).text == "The model said: Paris"
    listing = kit.call("test_input_required_result_list_roots")
    assert {k: (q.method, q.params) for k, q in listing.questions.items()} == {
        "roots_request": ("roots/list", {})
    }
    assert listing.answer(roots_request=roots("file:///work")).text == "Roots: file:///work"
    bad = kit.call("test_input_required_result_list_roots").answer(roots_request={"roots": 3})
    assert bad.status == "failed" and bad.error is not None and bad.error["code"] == -32602


def test_automatic_keys_are_stable_across_rounds(world: World) -> None:
    first = call(world, "two_samples")
    assert list(first.result["inputRequests"]) == ["sampling-1"]
    second = call(
        world,
        "two_samples",
        inputResponses={"sampling-1": SAMPLED},
        requestState=first.result.get("requestState"),
    )
    assert list(second.result["inputRequests"]) == ["sampling-2"]
    # The first answer travels in the sealed state: the client sends only the new one.
    assert second.result["requestState"]
    third = call(
        world,
        "two_samples",
        inputResponses={"sampling-2": SAMPLED},
        requestState=second.result["requestState"],
    )
    assert list(third.result["inputRequests"]) == ["roots-1"]
    done = call(
        world, "two_samples", inputResponses={"roots-1": ROOTS}, requestState=third.result["requestState"]
    )
    assert done.result["content"][0]["text"] == "Paris+Paris in 1 roots"


def test_several_kinds_in_one_round(kit: ToolTester) -> None:
    run = kit.call("test_input_required_result_multiple_inputs")
    assert {k: q.method for k, q in run.questions.items()} == {
        "user_name": "elicitation/create",
        "greeting": "sampling/createMessage",
        "client_roots": "roots/list",
    }
    run.answer(user_name=accept(name="Alice"), greeting=sampled("Paris"), client_roots=roots("file:///work"))
    assert run.text == "Paris Alice (roots: file:///work)"


def test_url_elicitation_needs_the_url_mode(kit: ToolTester, world: World) -> None:
    run = kit.call("sign_in")
    asked = run.questions["sign_in"].params
    assert asked["mode"] == "url" and asked["url"] == "https://example.com/sign-in"
    assert asked["elicitationId"]
    assert run.answer(sign_in={"action": "accept"}).text == "sign-in: accept"
    form_only = kit.call("sign_in", capabilities={"elicitation": {}})
    assert form_only.status == "failed" and form_only.error is not None
    assert form_only.error["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}
    # The wire: -32021 is HTTP 400.
    assert call(world, "sign_in", caps={"elicitation": {}}).status == 400


# -- capabilities: never ask what was not declared ---------------------------------------


def test_an_undeclared_capability_is_minus_32021_with_http_400(world: World) -> None:
    reply = call(world, "test_missing_capability", caps={})
    assert reply.status == 400
    assert reply.error["code"] == -32021
    assert reply.error["data"] == {"requiredCapabilities": {"sampling": {}}}


@pytest.mark.parametrize(
    ("tool", "needed"),
    [
        ("test_missing_capability", {"sampling": {}}),
        ("test_input_required_result_list_roots", {"roots": {}}),
        ("test_input_required_result_elicitation", {"elicitation": {"form": {}}}),
    ],
)
def test_a_tool_never_asks_what_the_client_did_not_declare(kit: ToolTester, tool: str, needed: Any) -> None:
    caps = {} if tool == "test_missing_capability" else {"sampling": {}}
    refused = kit.call(tool, capabilities=caps)
    assert refused.status == "failed" and refused.error is not None
    assert refused.error["code"] == -32021 and refused.error["data"]["requiredCapabilities"] == needed


def test_a_tool_can_choose_what_the_client_supports(kit: ToolTester) -> None:
    only_sampling = kit.call("test_input_required_result_capabilities", capabilities={"sampling": {}})
    assert [q.method for q in only_sampling.questions.values()] == ["sampling/createMessage"]
    both = kit.call("test_input_required_result_capabilities")
    assert [q.method for q in both.questions.values()] == ["elicitation/create"]


def test_a_task_keeps_the_capabilities_and_never_asks_beyond_them(kit: ToolTester) -> None:
    run = kit.start("test_sampling", {"prompt": "Hi"}, capabilities={"sampling": {}})
    assert kit.memory.store.records[str(run.task_id)].client_capabilities == {"sampling": {}}
    assert run.status == "input_required"
    [(key, question)] = run.questions.items()
    assert question.method == "sampling/createMessage"
    assert run.answer({key: sampled("Paris")}).text == "LLM response: Paris"
    # Without sampling declared, the task fails with the same -32021 instead of asking.
    refused = kit.start("test_sampling", {"prompt": "Hi"}, capabilities={})
    assert refused.status == "failed" and refused.error is not None and refused.error["code"] == -32021


def test_2025_sessions_keep_what_initialize_declared(http: TestClient, world: World) -> None:
    world.known_quick("test_sampling")  # run inline, where the refusal comes before any task
    bare = Legacy(http)
    bare.client.capabilities = {"tasks": {}}
    bare.initialize()
    refused = bare.request("tools/call", {"name": "test_sampling", "arguments": {"prompt": "x"}})
    assert refused["error"]["code"] == -32021
    assert refused["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


# -- sampling in the 2025 era: on the call's own stream, and on tasks/result --------------


def test_2025_plain_call_samples_on_its_own_stream(legacy: Legacy, world: World) -> None:
    message, streams = over_streams(
        legacy, "tools/call", {"name": "test_sampling", "arguments": {"prompt": "Capital?"}}, SAMPLED
    )
    sent = [e["data"] for s in streams for e in s if e["data"]]
    [asked] = [m for m in sent if m.get("method")]
    assert asked["method"] == "sampling/createMessage" and "_meta" not in asked["params"]
    assert asked["params"]["messages"][0]["content"]["text"] == "Capital?"
    assert message["result"]["content"][0]["text"] == "LLM response: Paris"


def test_2025_task_samples_on_its_result_stream(legacy: Legacy, world: World) -> None:
    created = legacy.result(
        "tools/call", {"name": "test_sampling", "arguments": {"prompt": "Capital?"}, "task": {}}
    )
    task_id = created["task"]["taskId"]
    message, streams = result_over_streams(legacy, task_id, SAMPLED)
    asked = [e["data"] for s in streams for e in s if e["data"] and e["data"].get("method")]
    assert [a["method"] for a in asked if "id" in a] == ["sampling/createMessage"]
    assert message["result"]["content"][0]["text"] == "LLM response: Paris"


def test_2025_a_sampling_error_answer_is_a_tool_error(legacy: Legacy, world: World) -> None:
    task_id = legacy.result(
        "tools/call", {"name": "test_sampling", "arguments": {"prompt": "x"}, "task": {}}
    )["task"]["taskId"]
    resp = legacy.post("tasks/result", {"taskId": task_id})
    [asked] = [e.message() for e in parse_sse(resp.text) if e.message() and "id" in (e.message() or {})]
    error = {"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -1, "message": "User rejected sampling"}}
    assert legacy.http.post("/mcp", json=error, headers=legacy.headers()).status_code == 202
    world.settle()
    result = legacy.result("tasks/result", {"taskId": task_id})
    assert result["isError"] is True and "User rejected sampling" in result["content"][0]["text"]


# -- the 2026-07-28 stateless rules (SEP-2575) --------------------------------------------


@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/result",
    ],
)
def test_methods_removed_in_2026_are_404_with_minus_32601(world: World, method: str) -> None:
    reply = send(world, method, {}, caps={})
    assert reply.status == 404 and reply.error["code"] == -32601
    assert reply.message["id"] == 7


def test_no_request_on_a_2026_response_stream(world: World) -> None:
    reply = call(world, "test_streaming_elicitation", caps={"elicitation": {}}, progressToken="s")
    assert reply.requests == []
    assert [n["method"] for n in reply.notifications] == ["notifications/progress"]
    assert reply.result["resultType"] == "input_required"


def test_a_session_older_than_recorded_capabilities_refuses_nothing(legacy: Legacy, world: World) -> None:
    # A session stored before capabilities were kept with it: nothing is known, nothing refused.
    assert legacy.session_id is not None
    world.known_quick("sign_in")  # run inline, where the refusal comes before any task
    call = {"name": "sign_in", "arguments": {}}
    refused = legacy.request("tools/call", call)["error"]
    assert refused["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}  # form only
    world.sessions.sessions[legacy.session_id] = dataclasses.replace(
        world.sessions.sessions[legacy.session_id], capabilities=None
    )
    message, streams = over_streams(legacy, "tools/call", call, {"action": "accept"})
    asked = [
        e["data"] for s in streams for e in s if e["data"] and "id" in e["data"] and "method" in e["data"]
    ]
    assert [a["params"]["mode"] for a in asked] == ["url"]
    assert message["result"]["content"][0]["text"] == "sign-in: accept"
    [record] = world.store.records.values()
    assert record.client_capabilities is None
