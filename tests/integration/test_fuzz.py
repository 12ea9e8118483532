"""Property-based fuzzing of /mcp (POST, GET, DELETE) in both protocol eras.

Whatever arrives, the endpoint must answer without a 5xx or a Python trace, with
either no body (200/202/405), one well-formed JSON-RPC 2.0 response (exactly one
of result/error, an integer code and a string message, an id that is absent or
the request's str/int id, never null), or an SSE stream whose data lines are
well-formed JSON-RPC messages. A request it rejects (4xx, a JSON-RPC error, or a
5xx) must not create, delete or change a task row.

Inputs: arbitrary bytes and random JSON (invalid UTF-8, deep nesting, huge
numbers, empty and truncated bodies); mutations of valid messages for every
method either era knows, with keys dropped or replaced, wrong types, odd strings
(lone surrogates, '#', empty, 3000 chars) and wrong, missing or garbage routing,
version, session, Mcp-Param and Last-Event-ID headers, sent as POST, GET or
DELETE; bodies one byte either side of MAX_BODY_BYTES; and hostile header bytes
(not UTF-8, non-ASCII in MCP's headers, Unicode digits in Last-Event-ID) and
repeated headers, sent as raw bytes straight to the ASGI app (TestClient would
rewrite them as UTF-8), which must each be a 400 with a JSON-RPC error. Generation is
derandomized, so CI replays the same inputs every run; TASKGATE_FUZZ_SCALE=10
runs ten times as many. With ``-s`` the module prints its totals:
"fuzz: N inputs, U unhandled, W writes on rejection" (U counts inputs whose
response broke a rule above, W rejected inputs that wrote a task row).

Inputs that broke a rule when they were found are kept in REGRESSIONS.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto.core import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import dynamodb_backends
from starlette.testclient import TestClient

from taskgate import wiring
from taskgate.local import moto_fixes
from taskgate.local.dev_auth import DevAuthMiddleware
from taskgate.local.runtime import REGION, EmbeddedAws
from tests.asgi import raw_request
from tests.fakes import World
from tests.integration.conftest import DEV_TOKENS
from tests.mcp_client import PROTOCOL, envelope, headers_for

# -- run size and totals ------------------------------------------------------

SCALE = max(1, int(os.environ.get("TASKGATE_FUZZ_SCALE", "1")))


def fuzz_settings(examples: int) -> settings:
    return settings(
        max_examples=examples * SCALE,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=False,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
            HealthCheck.filter_too_much,
        ],
    )


# A 400 kB body makes a 400 kB repr; the Case repr below already abbreviates it.
pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

TOTALS: Counter[str] = Counter()
BY_STATUS: Counter[int] = Counter()
BY_CODE: Counter[int] = Counter()


@pytest.fixture(scope="module", autouse=True)
def _print_totals() -> Iterator[None]:
    yield
    print(
        f"\nfuzz: {TOTALS['inputs']} inputs, {TOTALS['unhandled']} unhandled, "
        f"{TOTALS['writes']} writes on rejection"
    )
    print("fuzz: by status " + ", ".join(f"{k}={v}" for k, v in sorted(BY_STATUS.items())))
    print("fuzz: errors by JSON-RPC code " + ", ".join(f"{k}={v}" for k, v in sorted(BY_CODE.items())))


# -- the inputs -----------------------------------------------------------------

# Stand-ins for ids that exist only once the server has run; swapped in at request time.
TASK_DONE, TASK_PARKED, TASK_WORKING, TASK_ALICE = (
    "@@TASK_DONE@@",
    "@@TASK_PARKED@@",
    "@@TASK_WORKING@@",
    "@@TASK_ALICE@@",
)
SESSION_ANON, SESSION_ALICE = "@@SESSION_ANON@@", "@@SESSION_ALICE@@"
# Last-Event-IDs of a stream still waiting on a task and of one whose response is logged; its bare id.
STREAM_LIVE, STREAM_DONE, STREAM_ID = "@@STREAM_LIVE@@", "@@STREAM_DONE@@", "@@STREAM_ID@@"
REFS = (
    TASK_DONE,
    TASK_PARKED,
    TASK_WORKING,
    TASK_ALICE,
    SESSION_ANON,
    SESSION_ALICE,
    STREAM_LIVE,
    STREAM_DONE,
    STREAM_ID,
)
LAST_EVENT_IDS = [STREAM_LIVE, STREAM_DONE, f"{STREAM_ID}:0", f"{STREAM_ID}:1", f"{STREAM_ID}:99"]
LAST_EVENT_IDS += [f"{STREAM_ID}:-1", f"{STREAM_ID}:", STREAM_ID, f"{STREAM_DONE}x", f"{STREAM_ID}:1:x"]
TASK_REFS = (TASK_DONE, TASK_PARKED, TASK_WORKING, TASK_ALICE)

V2025 = "2025-11-25"


def _registered(version: str) -> tuple[str, ...]:
    """Every method an era's registry serves (the generators add the other era's and unknown ones)."""
    era = next(e for e in World().server.eras if e.version == version)
    return tuple(era.methods.names())


METHODS_2026 = _registered("2026-07-28")
METHODS_2025 = _registered(V2025)
META_PV = "io.modelcontextprotocol/protocolVersion"
META_CC = "io.modelcontextprotocol/clientCapabilities"

# Valid arguments for every tool the server registers (test_every_tool_is_fuzzed keeps this complete).
TOOL_ARGS: dict[str, dict[str, Any]] = {
    "greet": {"name": "Ada"},
    "slow_compute": {"seconds": 0, "label": "fuzz"},
    "failing_job": {},
    "protocol_error_job": {},
    "confirm_delete": {"filename": "fuzz.txt"},
    "multi_input": {},
    "test_tool_with_task": {},
    "echo_region": {"region": "eu-west-1"},
    "json_schema_2020_12_tool": {"name": "Ada", "email": "ada@example.com"},
    "test_reconnection": {},
    "orders_report": {"year": 2025, "orders": 100},
    "archive_orders": {"year": 2025, "orders": 100, "before": "2025-02-01", "batch_size": 100},
    # A child execution of the example pipeline, each stage done at once.
    "run_pipeline": {"stage_seconds": 0, "source": "s3://fuzz/"},
    "test_simple_text": {},
    "test_image_content": {},
    "test_audio_content": {},
    "test_embedded_resource": {},
    "test_multiple_content_types": {},
    "test_error_handling": {},
    "test_tool_with_progress": {},
    "test_tool_with_logging": {},
    "test_logging_tool": {},
    "test_elicitation": {"message": "Who are you?"},
    "test_elicitation_sep1034_defaults": {},
    "test_elicitation_sep1330_enums": {},
    "test_sampling": {"prompt": "Say hello"},
    "test_missing_capability": {},
    "test_streaming_elicitation": {},
    "test_input_required_result_elicitation": {},
    "test_input_required_result_sampling": {},
    "test_input_required_result_list_roots": {},
    "test_input_required_result_request_state": {},
    "test_input_required_result_multiple_inputs": {},
    "test_input_required_result_multi_round": {},
    "test_input_required_result_tampered_state": {},
    "test_input_required_result_capabilities": {},
}
ANSWERS = {
    "user_name": {"action": "accept", "content": {"name": "Ada"}},
    "sample_request": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"},
    "roots_request": {"roots": [{"uri": "file:///fuzz"}]},
    "confirm_delete": {"action": "accept", "content": {"confirm": True}},
    "name": {"action": "decline"},
}


@dataclass(frozen=True)
class Case:
    """One HTTP request; ``body`` is sent as is (None: no body)."""

    verb: str
    headers: tuple[tuple[str, str | bytes], ...]
    body: bytes | None

    def __repr__(self) -> str:
        body = self.body
        if body is not None and len(body) > 600:
            shown = f"{body[:300]!r} ... {body[-100:]!r} ({len(body)} bytes)"
        else:
            shown = repr(body)
        return f"Case(verb={self.verb!r}, headers={self.headers!r}, body={shown})"


def case(verb: str, headers: dict[str, str], body: Any) -> Case:
    raw = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
    return Case(verb, tuple(headers.items()), raw)


printable = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
# Includes lone surrogates: "\ud800" is legal JSON text and Python decodes it to a str.
any_char = st.characters(exclude_categories=())
texts = st.one_of(
    st.text(max_size=12),
    st.text(any_char, max_size=6),
    st.sampled_from(
        [*REFS, "", " ", "#", "session#x", "stream#x", "tg-elicit:", "\ud800", "é", "x" * 3000, "null"]
    ),
)
big_ints = st.sampled_from([2**31, 2**53 + 1, 2**63, -(2**63) - 1, 10**38, 10**39, 10**400, 10**4000])
ints = st.integers() | big_ints
scalars = st.none() | st.booleans() | ints | st.floats() | texts
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
wrong_values = st.one_of(
    st.sampled_from([None, True, False, 0, -1, 1.5, "", [], {}, [1], {"a": 1}, "NaN"]),
    json_values,
)


# Values that have the right JSON type but are odd: empty, huge, lone surrogates, '#', placeholders.
odd_strings = st.one_of(
    st.sampled_from(["", "\ud800", "a\udfffb", "#", "x" * 3000, "\x00", "é"]), st.text(any_char, max_size=8)
)
message_ids = st.one_of(st.integers(0, 2**31), st.text(printable, max_size=8), odd_strings, big_ints)


@st.composite
def arguments_for(draw: st.DrawFn, tool: str) -> dict[str, Any]:
    """The tool's valid arguments, each string now and then swapped for an odd one."""
    args = dict(TOOL_ARGS.get(tool, {}))
    for key, value in args.items():
        if isinstance(value, str) and draw(st.integers(0, 3)) == 0:
            args[key] = draw(odd_strings)
    return args


answer_maps = st.one_of(
    st.just(ANSWERS),
    st.dictionaries(
        st.sampled_from(list(ANSWERS)) | odd_strings,
        st.sampled_from(list(ANSWERS.values())) | json_values,
        max_size=3,
    ),
)


@st.composite
def message_2026(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, str]]:
    method = draw(st.sampled_from([*METHODS_2026, "tools/call", "tools/call", "tasks/result", "tasks/list"]))
    params: dict[str, Any] = {}
    extra: dict[str, str] = {}
    if method == "tools/call":
        tool = draw(st.sampled_from([*TOOL_ARGS, "no_such_tool"]))
        params = {"name": tool, "arguments": draw(arguments_for(tool))}
        if tool == "echo_region":
            extra["mcp-param-region"] = draw(
                st.sampled_from(["eu-west-1", "=?base64?ZXUtd2VzdC0x?=", "us-east-1", "=?base64?!!?="])
            )
        if draw(st.booleans()):
            params["inputResponses"] = draw(answer_maps)
    elif method.startswith("tasks/"):
        params = {"taskId": draw(st.sampled_from(TASK_REFS) | texts)}
        if method == "tasks/update":
            params["inputResponses"] = draw(answer_maps)
    body = envelope(method, params, draw(message_ids), tasks=draw(st.booleans()))
    headers = {**headers_for(method, params), **extra}
    return body, headers


def _cursor(key: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(key).encode()).decode()


cursors = st.one_of(
    texts,
    st.builds(
        lambda t, o, c: _cursor({"taskId": {"S": t}, "ownerId": {"S": o}, "createdAt": {"S": c}}),
        texts,
        st.sampled_from(["principal#alice", "principal#bob", "anonymous", ""]),
        texts,
    ),
    json_values.map(_cursor),
    st.sampled_from([10, 900, 5000, 100_000]).map(
        lambda depth: base64.urlsafe_b64encode(b"[" * depth + b"]" * depth).decode()
    ),
    st.just(base64.urlsafe_b64encode(b"9" * 5000).decode()),
)


@st.composite
def message_2025(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, str]]:
    method = draw(
        st.sampled_from(
            [
                *METHODS_2025,
                "tools/call",
                "tools/call",
                "server/discover",
                "notifications/initialized",
                "answer",
            ]
        )
    )
    msg_id: Any = draw(message_ids)
    params: dict[str, Any] = {}
    if method == "initialize":
        params = {
            "protocolVersion": draw(st.sampled_from([V2025, "2025-06-18", "2025-03-26", "1999-01-01"])),
            "capabilities": {"tasks": {}},
            "clientInfo": {"name": "fuzz", "version": "0"},
        }
    elif method == "tools/call":
        tool = draw(st.sampled_from([*TOOL_ARGS, "no_such_tool"]))
        params = {"name": tool, "arguments": draw(arguments_for(tool))}
        if draw(st.booleans()):
            params["task"] = (
                {"ttl": draw(st.sampled_from([60_000, 1, 10**13, 10**400]))} if draw(st.booleans()) else {}
            )
        if draw(st.booleans()):
            params["_meta"] = {"progressToken": draw(st.sampled_from(["tok", 7]) | odd_strings | big_ints)}
    elif method in ("tasks/get", "tasks/result", "tasks/cancel"):
        params = {"taskId": draw(st.sampled_from(TASK_REFS) | texts)}
    elif method == "tasks/list" and draw(st.booleans()):
        params = {"cursor": draw(cursors)}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    session = draw(st.sampled_from([None, None, SESSION_ANON, SESSION_ALICE, "never-issued"]))
    if session is not None and method != "initialize":
        headers["mcp-session-id"] = session
        headers["mcp-protocol-version"] = V2025
    if method == "answer":
        key = draw(st.sampled_from(["confirm_delete", "nope", ""]) | odd_strings)
        result = draw(st.sampled_from(list(ANSWERS.values())) | json_values)
        return {"jsonrpc": "2.0", "id": f"tg-elicit:{TASK_PARKED}:{key}", "result": result}, headers
    if method.startswith("notifications/"):
        return {"jsonrpc": "2.0", "method": method}, headers
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}, headers


# Where a wrong type is most likely to slip past a check.
FIELDS: list[tuple[str, ...]] = [
    ("id",),
    ("method",),
    ("jsonrpc",),
    ("params",),
    ("params", "_meta"),
    ("params", "_meta", META_PV),
    ("params", "_meta", META_CC),
    ("params", "_meta", META_CC, "extensions"),
    ("params", "_meta", "progressToken"),
    ("params", "name"),
    ("params", "arguments"),
    ("params", "inputResponses"),
    ("params", "taskId"),
    ("params", "cursor"),
    ("params", "task"),
    ("params", "task", "ttl"),
    ("params", "protocolVersion"),
    ("result",),
    ("error",),
]
HEADER_NAMES = [
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "mcp-session-id",
    "mcp-param-region",
    "last-event-id",
    "content-type",
    "accept",
    "authorization",
]
header_values = st.one_of(
    st.text(printable, max_size=20),
    st.sampled_from(
        [
            *REFS,
            *LAST_EVENT_IDS,
            *("", " ", PROTOCOL, V2025, "2099-01-01", "tools/call", "TOOLS/CALL", " tools/list "),
            *("Bearer alice-token", "Bearer bob-token", "Bearer nope", "Basic eA==", "=?base64?8A==?="),
            *("application/json", "text/plain", "s" * 3000),
        ]
    ),
    st.binary(min_size=1, max_size=8).filter(lambda b: b"\r" not in b and b"\n" not in b and b"\0" not in b),
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, child in value.items():
            out += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out += _paths(child, (*prefix, index))
    return out


def _parent(root: Any, path: tuple[Any, ...], create: bool) -> Any:
    node = root
    for key in path[:-1]:
        if isinstance(node, dict):
            if key not in node and create:
                node[key] = {}
            node = node.get(key)
        elif isinstance(node, list) and isinstance(key, int) and key < len(node):
            node = node[key]
        else:
            return None
    return node


def _set(root: Any, path: tuple[Any, ...], value: Any) -> None:
    # A copy: sampled_from hands out the same object every time, and later mutations must not reach it.
    value = copy.deepcopy(value)
    parent = _parent(root, path, create=True)
    if isinstance(parent, dict) or (
        isinstance(parent, list) and isinstance(path[-1], int) and path[-1] < len(parent)
    ):
        parent[path[-1]] = value


def _drop(root: Any, path: tuple[Any, ...]) -> None:
    parent = _parent(root, path, create=False)
    if isinstance(parent, dict):
        parent.pop(path[-1], None)
    elif isinstance(parent, list) and isinstance(path[-1], int) and path[-1] < len(parent):
        del parent[path[-1]]


def _encode(body: Any, style: str) -> bytes:
    if style == "utf8":
        # Raw UTF-8, with any lone surrogate written as the (invalid) bytes it would take.
        return json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return json.dumps(body).encode()


@st.composite
def mutated_messages(draw: st.DrawFn) -> Case:
    body, headers = draw(message_2026() | message_2025())
    body = json.loads(json.dumps(body))
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["field", "field", "drop", "replace", "add", "header", "header"]))
        if op == "field":
            _set(body, draw(st.sampled_from(FIELDS)), draw(wrong_values | texts))
        elif op == "drop" and _paths(body):
            _drop(body, draw(st.sampled_from(_paths(body))))
        elif op == "replace" and _paths(body):
            _set(body, draw(st.sampled_from(_paths(body))), draw(wrong_values))
        elif op == "add":
            targets = [p for p in [(), *_paths(body)] if isinstance(_parent(body, (*p, ""), False), dict)]
            _set(body, (*draw(st.sampled_from(targets)), draw(texts)), draw(json_values))
        elif op == "header":
            name = draw(st.sampled_from(HEADER_NAMES))
            if draw(st.booleans()) and name in headers:
                del headers[name]
            else:
                headers[name] = draw(header_values)
    if draw(st.integers(0, 2)) == 0 and "authorization" not in headers:
        headers["authorization"] = draw(st.sampled_from(["Bearer alice-token", "Bearer bob-token"]))
    verb = draw(st.sampled_from(["POST"] * 8 + ["GET", "DELETE"]))
    if verb == "GET" and draw(st.booleans()):
        headers["last-event-id"] = draw(st.sampled_from(LAST_EVENT_IDS))
    if verb == "DELETE" and draw(st.booleans()):
        headers["mcp-session-id"] = draw(st.sampled_from([SESSION_ALICE, SESSION_ANON, "never-issued", ""]))
    return Case(
        verb, tuple(headers.items()), _encode(body, draw(st.sampled_from(["ascii", "ascii", "utf8"])))
    )


# -- hostile header bytes and repeated headers (sent raw: see exercise_raw) ------------

MCP_HEADERS = [n for n in HEADER_NAMES if n.startswith(("mcp-", "last-event-id"))]
not_utf8 = st.sampled_from([b"\xff", b"\xc3(", b"caf\xe9", b"\xed\xa0\x80", b"ok\x80", b"\xf0\x9f\x98"])
non_ascii = st.sampled_from(["é", "1²", "²", "¹", "٣", "\U0001d7d9", "日本", "tools/call\u00a0", "\u200b"])


@st.composite
def hostile_header_cases(draw: st.DrawFn) -> Case:
    """A valid message of either era whose headers carry one hostile thing: a value
    (or name) that is not UTF-8, an MCP header with more than visible ASCII (a
    Last-Event-ID of a real stream ending in a Unicode digit among them), or an MCP
    header (or Authorization) sent twice."""
    body, headers = draw(message_2026() | message_2025())
    pairs: list[tuple[str, str | bytes]] = list(headers.items())
    kind = draw(st.sampled_from(["not-utf8", "not-utf8-name", "non-ascii", "digit-event-id", "repeated"]))
    verb = draw(st.sampled_from(["POST"] * 6 + ["GET", "DELETE"]))
    if kind == "not-utf8":
        name = draw(st.sampled_from([*HEADER_NAMES, "user-agent", "x-request-id", "cookie"]))
        pairs = [p for p in pairs if p[0] != name] + [(name, draw(not_utf8))]
    elif kind == "not-utf8-name":
        pairs.append((draw(st.sampled_from(["x-\xff", "\xe9t\xe9"])), "1"))
    elif kind == "non-ascii":
        name = draw(st.sampled_from(MCP_HEADERS))
        value = draw(st.sampled_from([*REFS, "tools/call", "greet", ""])) + draw(non_ascii)
        pairs = [p for p in pairs if p[0] != name] + [(name, value)]
    elif kind == "digit-event-id":
        verb = "GET"
        stream = draw(st.sampled_from([STREAM_ID, STREAM_LIVE.rsplit(":", 1)[0], STREAM_DONE]))
        pairs.append(("last-event-id", f"{stream}:{draw(non_ascii)}"))
    else:
        name = draw(st.sampled_from([*MCP_HEADERS, "authorization"]))
        first = dict(pairs).get(name, draw(header_values))
        second = draw(st.sampled_from([first, "", "tools/list", "failing_job", "Bearer alice-token"]))
        pairs = [p for p in pairs if p[0] != name] + [(name, first), (name, second)]
    if draw(st.booleans()):
        pairs = draw(st.permutations(pairs))
    return Case(verb, tuple(pairs), _encode(body, "ascii"))


VALID = json.dumps(envelope("ping", {}, 1)).encode()


def _nest(opening: bytes, closing: bytes, depth: int, inner: bytes = b"1") -> bytes:
    return opening * depth + inner + closing * depth


raw_bodies = st.one_of(
    st.binary(max_size=300),
    st.sampled_from([b"", b" ", b"\n\t ", b"\xef\xbb\xbf" + VALID, VALID.decode().encode("utf-16"), b"\x00"]),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.integers(0, len(VALID)).map(lambda n: VALID[:n]),
    st.tuples(
        st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]), st.sampled_from([5, 500, 5000, 200_000])
    ).map(lambda t: _nest(t[0][0], t[0][1], t[1])),
    st.sampled_from([5, 900, 5000, 200_000]).map(
        lambda d: b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + _nest(b"[", b"]", d) + b"}}"
    ),
    st.sampled_from([1, 400, 4300, 4301, 20_000]).map(lambda n: b"9" * n),
    st.sampled_from([4301, 20_000]).map(
        lambda n: b'{"jsonrpc":"2.0","id":' + b"9" * n + b',"method":"ping"}'
    ),
    st.sampled_from([b"1e999999", b"-1e999999", b"NaN", b"Infinity", b"0." + b"1" * 5000]),
    st.sampled_from([b'"\\ud800"', b'{"jsonrpc":"2.0","id":1,"method":"\\udfff"}']),
)
raw_headers = st.sampled_from(
    [
        headers_for("ping", {}),
        {"content-type": "application/json"},
        {},
        {"content-type": "application/json", "mcp-session-id": SESSION_ANON, "mcp-protocol-version": V2025},
        {**headers_for("tools/call", {"name": "greet"}), "authorization": "Bearer alice-token"},
    ]
)


@st.composite
def raw_cases(draw: st.DrawFn) -> Case:
    return Case(
        draw(st.sampled_from(["POST"] * 6 + ["GET", "DELETE"])),
        tuple(draw(raw_headers).items()),
        draw(raw_bodies),
    )


# -- the server under test ----------------------------------------------------


@dataclass
class Env:
    client: TestClient
    aws: EmbeddedAws
    refs: dict[str, str]
    max_body: int
    # The app the client calls (dev auth outside), for requests sent as raw bytes.
    app: Any = None

    def resolve(self, case: Case) -> tuple[list[tuple[str, str | bytes]], bytes | None]:
        def sub(value: Any) -> Any:
            if isinstance(value, bytes):
                for token, real in self.refs.items():
                    value = value.replace(token.encode(), real.encode())
                return value
            for token, real in self.refs.items():
                value = value.replace(token, real)
            # httpx sends str headers as ASCII only; anything else goes out as raw UTF-8 bytes.
            return value if value.isascii() else value.encode("utf-8", "surrogatepass")

        return [(k, sub(v)) for k, v in case.headers], None if case.body is None else sub(case.body)


def _rpc(client: TestClient, method: str, params: dict[str, Any], auth: str | None = None) -> dict[str, Any]:
    headers = headers_for(method, params)
    if auth:
        headers["authorization"] = f"Bearer {auth}"
    resp = client.post("/mcp", content=json.dumps(envelope(method, params, 1)), headers=headers)
    assert resp.status_code == 200, resp.text
    return resp.json()["result"]  # type: ignore[no-any-return]


def _wait(client: TestClient, task_id: str, status: str, auth: str | None = None) -> None:
    deadline = time.monotonic() + 15
    while _rpc(client, "tasks/get", {"taskId": task_id}, auth)["status"] != status:
        assert time.monotonic() < deadline, f"{task_id} never reached {status}"
        time.sleep(0.05)


def _initialize(client: TestClient, auth: str | None = None) -> str:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if auth:
        headers["authorization"] = f"Bearer {auth}"
    params = {
        "protocolVersion": V2025,
        "capabilities": {"tasks": {}},
        "clientInfo": {"name": "fuzz", "version": "0"},
    }
    resp = client.post(
        "/mcp", json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, headers=headers
    )
    return resp.headers["mcp-session-id"]


def _event_id(client: TestClient, session: str, method: str, params: dict[str, Any]) -> str:
    """The first SSE event id of a 2025 request's stream."""
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": V2025,
    }
    resp = client.post(
        "/mcp", json={"jsonrpc": "2.0", "id": 5, "method": method, "params": params}, headers=headers
    )
    assert resp.headers["content-type"].startswith("text/event-stream"), resp.text
    return next(line[4:] for line in resp.text.splitlines() if line.startswith("id: "))


def _seed(client: TestClient) -> dict[str, str]:
    refs = {
        TASK_DONE: _rpc(client, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}})[
            "taskId"
        ],
        TASK_PARKED: _rpc(client, "tools/call", {"name": "confirm_delete", "arguments": {"filename": "a"}})[
            "taskId"
        ],
        TASK_WORKING: _rpc(client, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 30}})[
            "taskId"
        ],
        TASK_ALICE: _rpc(
            client, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}}, "alice-token"
        )["taskId"],
        SESSION_ANON: _initialize(client),
        SESSION_ALICE: _initialize(client, "alice-token"),
    }
    _wait(client, refs[TASK_DONE], "completed")
    _wait(client, refs[TASK_PARKED], "input_required")
    _wait(client, refs[TASK_ALICE], "completed", "alice-token")
    refs[STREAM_LIVE] = _event_id(client, refs[SESSION_ANON], "tasks/result", {"taskId": refs[TASK_WORKING]})
    refs[STREAM_DONE] = _event_id(client, refs[SESSION_ANON], "tools/call", {"name": "test_reconnection"})
    refs[STREAM_ID] = refs[STREAM_DONE].partition(":")[0]
    return refs


def _items(aws: EmbeddedAws) -> list[dict[str, Any]]:
    """Every row of the table, straight from moto's backend.

    A boto3 scan costs ~50 ms a call against moto and would dominate the run;
    and moto cannot serialise some rows the fuzz makes the server write (a map
    with an empty key), which would break a scan for every later example. The
    lock is the one every DynamoDB request holds: without it a read can land in
    the middle of a background update (status already terminal, result not yet)
    and report a write that never happened.
    """
    table = dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].get_table(aws.table_name)
    with moto_fixes.DYNAMODB_LOCK:
        return [item.to_json()["Attributes"] for item in table.all_items()]


def task_rows(aws: EmbeddedAws) -> dict[str, dict[str, Any]]:
    """Task rows by id; session and stream rows share the table under 'kind#…' keys."""
    return {i["taskId"]["S"]: i for i in _items(aws) if "#" not in i["taskId"]["S"]}


def _settled(item: dict[str, Any]) -> bool:
    """A row nothing in the background will touch: ended, or parked with its token for a while
    yet (a parked task times out after its ttl, and the fuzz asks for ttls down to 1 ms)."""
    status = item.get("status", {}).get("S")
    if status in ("completed", "failed", "cancelled"):
        return True
    expires_at = int(item.get("expiresAt", {}).get("N", "0"))
    return status == "input_required" and "taskToken" in item and expires_at > time.time() + 120


@pytest.fixture
def env(aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[Env]:
    # Streams that block on a working task end after 0.3 s.
    monkeypatch.setenv("STREAM_MAX_SECONDS", "0.3")
    wiring.reset()
    s = wiring.root().settings
    app = wiring.root().app()
    served = DevAuthMiddleware(app, DEV_TOKENS)
    with TestClient(served, raise_server_exceptions=False, base_url="http://localhost") as client:
        yield Env(client, aws, _seed(client), s.max_body_bytes, served)
    # Stop whatever the fuzz left running before moto goes away under it.
    service = wiring.root().tasks
    for task_id, item in task_rows(aws).items():
        if item.get("status", {}).get("S") in ("working", "input_required"):
            with contextlib.suppress(Exception):
                service.cancel(item["ownerId"]["S"], task_id)


# -- the properties -------------------------------------------------------------


def _is_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _request_id(body: bytes | None) -> Any:
    try:
        message = json.loads(body or b"")
    except (ValueError, RecursionError):
        return None
    return message.get("id") if isinstance(message, dict) and _is_id(message.get("id")) else None


def _message_problems(msg: Any, request_id: Any, *, in_stream: bool) -> list[str]:
    """What is wrong with one JSON-RPC message from the server (empty when well-formed)."""
    if not isinstance(msg, dict):
        return [f"not a JSON object: {type(msg).__name__}"]
    problems = []
    if msg.get("jsonrpc") != "2.0":
        problems.append("jsonrpc is not '2.0'")
    if "id" in msg and not _is_id(msg["id"]):
        problems.append(f"id is {msg['id']!r}")
    if in_stream and "method" in msg:
        if not isinstance(msg["method"], str) or ("params" in msg and not isinstance(msg["params"], dict)):
            problems.append("malformed request/notification")
        if "result" in msg or "error" in msg:
            problems.append("a request that also carries result/error")
        return problems
    if set(msg) - {"jsonrpc", "id", "result", "error"}:
        problems.append(f"unexpected keys {sorted(set(msg) - {'jsonrpc', 'id', 'result', 'error'})}")
    if ("result" in msg) == ("error" in msg):
        problems.append("not exactly one of result/error")
    if "result" in msg and not isinstance(msg["result"], dict):
        problems.append("result is not an object")
    if "error" in msg:
        error = msg["error"]
        code = error.get("code") if isinstance(error, dict) else None
        if not isinstance(code, int) or isinstance(code, bool):
            problems.append("error.code is not an integer")
        elif not isinstance(error.get("message"), str):
            problems.append("error.message is not a string")
    if "id" in msg and request_id is not None and msg["id"] != request_id:
        problems.append(f"id {msg['id']!r} is not the request's {request_id!r}")
    if "id" in msg and request_id is None and not in_stream:
        problems.append("an id the request did not have")
    return problems


def _sse_messages(text: str) -> Iterator[str]:
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].removeprefix(" ") for line in block.split("\n") if line.startswith("data:")]
        if data and "\n".join(data).strip():
            yield "\n".join(data)


def response_problems(resp: Any, verb: str, request_id: Any) -> list[str]:
    problems = []
    text = resp.content.decode("utf-8", "replace")
    if resp.status_code >= 500:
        problems.append(f"status {resp.status_code}")
    if "Traceback" in text or 'File "' in text:
        problems.append("a Python trace in the body")
    if not resp.content:
        if resp.status_code not in (200, 202, 405):
            problems.append(f"an empty body with status {resp.status_code}")
        return problems
    if resp.headers.get("content-type", "").startswith("text/event-stream"):
        for data in _sse_messages(text):
            try:
                msg = json.loads(data)
            except ValueError:
                problems.append(f"SSE data is not JSON: {data[:80]!r}")
                continue
            is_response = isinstance(msg, dict) and "method" not in msg
            expected = request_id if verb == "POST" and is_response else None
            problems += [f"SSE: {p}" for p in _message_problems(msg, expected, in_stream=True)]
        return problems
    if not resp.headers.get("content-type", "").startswith("application/json"):
        problems.append(f"content-type {resp.headers.get('content-type')!r}")
    try:
        payload = json.loads(resp.content)
    except ValueError:
        return [*problems, "the body is not JSON"]
    return problems + _message_problems(payload, request_id if verb == "POST" else None, in_stream=False)


def _rejected(resp: Any) -> bool:
    if 400 <= resp.status_code < 500:
        return True
    if resp.headers.get("content-type", "").startswith("application/json") and resp.content:
        try:
            payload = json.loads(resp.content)
        except ValueError:
            return False
        return isinstance(payload, dict) and "error" in payload
    return False


def write_problems(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[str]:
    problems = []
    if set(after) - set(before):
        problems.append(f"created task rows {sorted(set(after) - set(before))}")
    if set(before) - set(after):
        problems.append(f"deleted task rows {sorted(set(before) - set(after))}")
    for key, item in before.items():
        if _settled(item) and key in after and after[key] != item:
            diff = {
                a: (item.get(a), after[key].get(a))
                for a in set(item) | set(after[key])
                if item.get(a) != after[key].get(a)
            }
            problems.append(f"changed task row {key}: {diff}")
    return problems


def exercise(env: Env, case: Case) -> Any:
    headers, body = env.resolve(case)
    before = task_rows(env.aws)
    resp = env.client.request(case.verb, "/mcp", content=body, headers=headers)
    problems = response_problems(resp, case.verb, _request_id(body))
    rejected = _rejected(resp) or resp.status_code >= 500
    writes = write_problems(before, task_rows(env.aws)) if rejected else []

    TOTALS["inputs"] += 1
    BY_STATUS[resp.status_code] += 1
    try:
        payload = json.loads(resp.content) if resp.content else None
    except ValueError:
        payload = None
    if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
        code = payload["error"].get("code")
        BY_CODE[code if isinstance(code, int) else -1] += 1
    TOTALS["unhandled"] += bool(problems)
    TOTALS["writes"] += bool(writes)

    shown = resp.content[:800].decode("utf-8", "replace")
    assert not problems + writes, (
        f"{problems + writes}\n  request: {case!r}\n  response: {resp.status_code} {shown}"
    )
    return resp


@fuzz_settings(500)
@given(case=raw_cases())
def test_raw_bodies(env: Env, case: Case) -> None:
    """Arbitrary bytes, random JSON, deep nesting, huge numbers, empty and truncated bodies."""
    resp = exercise(env, case)  # asserts the full contract; the line below is the headline
    assert resp.status_code < 500


@fuzz_settings(1200)
@given(case=mutated_messages())
def test_mutated_messages(env: Env, case: Case) -> None:
    """Valid messages of both eras with keys dropped/replaced, wrong types, bad headers, other verbs."""
    resp = exercise(env, case)  # asserts the full contract; the line below is the headline
    assert resp.status_code < 500


def _padded(message: dict[str, Any], headers: dict[str, str], size: int) -> Case:
    raw = json.dumps(message).encode()
    return case("POST", headers, raw + b" " * max(0, size - len(raw)))


def sized_body(kind: str, size: int) -> Case:
    """A POST of exactly ``size`` bytes (the JSON ones padded with trailing whitespace)."""
    if kind == "padded-ping":
        return _padded(envelope("ping", {}, 1), headers_for("ping", {}), size)
    if kind in ("inline-argument", "task-argument"):
        tool, key = ("greet", "name") if kind == "inline-argument" else ("slow_compute", "label")
        params: dict[str, Any] = {"name": tool, "arguments": {key: ""}}
        overhead = len(json.dumps(envelope("tools/call", params, 1)).encode())
        params["arguments"] = {key: "x" * max(0, size - overhead)}
        return _padded(envelope("tools/call", params, 1), headers_for("tools/call", params), size)
    if kind == "garbage":
        return case("POST", headers_for("ping", {}), b"\xff" * size)
    depth = 1000  # nested, but not deep enough to be a parse problem of its own
    return case(
        "POST", headers_for("ping", {}), _nest(b"[", b"]", depth, b" " * (size - 2 * depth - 1) + b"1")
    )


SIZE_KINDS = ("padded-ping", "inline-argument", "task-argument", "garbage", "nested")


def test_bodies_around_the_size_limit(env: Env) -> None:
    """Every kind of body one byte under, at and over MAX_BODY_BYTES, and far over: 413 exactly above it."""
    failing = []
    for kind in SIZE_KINDS:
        for size in (env.max_body - 1, env.max_body, env.max_body + 1, 2 * env.max_body):
            built = sized_body(kind, size)
            assert built.body is not None and len(built.body) == size
            try:
                resp = exercise(env, built)
                if size > env.max_body:
                    assert resp.status_code == 413 and resp.json()["error"]["code"] == -32600, resp.text[:200]
                else:
                    assert resp.status_code != 413, resp.text[:200]
            except AssertionError as exc:
                failing.append(f"{kind} at {size} bytes: {str(exc).splitlines()[0][:200]}")
    assert not failing, "\n".join(failing)


def test_every_tool_is_fuzzed(aws: EmbeddedAws) -> None:
    """A tool added to the server without valid arguments here would only ever be fuzzed as unknown."""
    # Tools registered by other test modules (tests/fixture_tools.py) are not the server's.
    served = {
        t.name
        for t in wiring.root().tools
        if t.fn.__module__.startswith(("taskgate_tools", "taskgate_conformance"))
    }
    assert served and served <= set(TOOL_ARGS)


# -- regressions: inputs the fuzz found that the server mishandled ------------------

H2026_PING = headers_for("ping", {})


def _rpc_2026(method: str, params: dict[str, Any], msg_id: Any = 1, auth: str | None = None) -> Case:
    headers = headers_for(method, params)
    if auth:
        headers["authorization"] = f"Bearer {auth}"
    return case("POST", headers, envelope(method, params, msg_id))


def _rpc_2025(method: str, params: dict[str, Any], msg_id: Any = 1, auth: str | None = None) -> Case:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if auth:
        headers["authorization"] = f"Bearer {auth}"
    return case("POST", headers, {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})


SLOW = {"name": "slow_compute", "arguments": {"seconds": 0}}
DEEP_CURSOR = base64.urlsafe_b64encode(b"[" * 100_000 + b"]" * 100_000).decode()

# Each is a request (or a short sequence) the server mishandled when the fuzz found it; all pass once fixed.
REGRESSIONS: dict[str, tuple[Case, ...]] = {
    # json.loads raises RecursionError (not JSONDecodeError) past ~10k levels: a text/plain 500.
    "deeply-nested-body": (case("POST", H2026_PING, _nest(b"[", b"]", 100_000)),),
    # An integer literal over sys.get_int_max_str_digits() (4300) raises ValueError: a text/plain 500.
    "integer-over-4300-digits": (case("POST", H2026_PING, b"1" * 4301),),
    # Lone surrogates are legal JSON escapes; echoed into a response, JSONResponse cannot encode them.
    "surrogate-id": (_rpc_2025("ping", {}, "\ud800"),),
    "surrogate-method": (_rpc_2025("\ud800", {}),),
    "surrogate-echoed-by-a-tool": (
        _rpc_2025("tools/call", {"name": "greet", "arguments": {"name": "\ud800"}}),
    ),
    # ... and here the task is created first: the caller gets a 500, the row and its execution exist.
    "surrogate-id-on-a-task-call-writes-a-row": (_rpc_2026("tools/call", SLOW, "\ud800"),),
    # Lone surrogates reaching the size check or DynamoDB: UnicodeEncodeError, a JSON-RPC 500.
    "surrogate-in-task-arguments": (
        _rpc_2026("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0, "label": "\ud800"}}),
    ),
    "surrogate-progress-token": (
        _rpc_2025("tools/call", {**SLOW, "task": {}, "_meta": {"progressToken": "\ud800"}}),
    ),
    "surrogate-in-tasks-update-answer": (
        _rpc_2026("tasks/update", {"taskId": TASK_PARKED, "inputResponses": {"confirm_delete": "\ud800"}}),
    ),
    "surrogate-in-elicitation-answer": (
        case(
            "POST",
            {"content-type": "application/json"},
            {
                "jsonrpc": "2.0",
                "id": f"tg-elicit:{TASK_PARKED}:confirm_delete",
                "result": {"action": "\ud800"},
            },
        ),
    ),
    # The cursor's JSON is decoded with only (binascii.Error, ValueError, UnicodeDecodeError) caught.
    "tasks-list-cursor-of-deep-json": (_rpc_2025("tasks/list", {"cursor": DEEP_CURSOR}, auth="alice-token"),),
    # 2026 tools/call stores inputResponses keys verbatim. DynamoDB refuses an empty map key ("Empty
    # attribute name"); moto stores it and then cannot read the row back: tasks/list is a 500 from then on.
    "empty-input-response-key-poisons-the-owner": (
        _rpc_2026("tools/call", {**SLOW, "inputResponses": {"": {}}}, auth="alice-token"),
        _rpc_2025("tasks/list", {}, auth="alice-token"),
    ),
}


def test_regressions(env: Env) -> None:
    """Replays every input above (one server for all: a server per case would cost ~2.5 s each)."""
    failing = {}
    for name, steps in REGRESSIONS.items():
        try:
            for step in steps:
                exercise(env, step)
        except AssertionError as exc:
            failing[name] = str(exc).splitlines()[0][:200]
    assert not failing, f"{len(failing)} of {len(REGRESSIONS)} regressions still fail:\n" + "\n".join(
        f"  {name}: {why}" for name, why in failing.items()
    )


# -- hostile header bytes and repeated headers ---------------------------------------


def _raw(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")


def exercise_raw(env: Env, case: Case) -> Any:
    """``exercise``, but the header bytes reach the app exactly as written (as uvicorn
    passes them), and the answer must be a rejection: HTTP 400 with a JSON-RPC error."""
    headers, body = env.resolve(case)
    before = task_rows(env.aws)
    resp = raw_request(env.app, case.verb, [(_raw(k), _raw(v)) for k, v in headers], body or b"")
    problems = response_problems(resp, case.verb, _request_id(body))
    if resp.status_code != 400 or not _rejected(resp):
        problems.append(f"answered {resp.status_code}, not 400 with a JSON-RPC error")
    writes = write_problems(before, task_rows(env.aws))
    TOTALS["inputs"] += 1
    TOTALS["unhandled"] += bool(problems)
    TOTALS["writes"] += bool(writes)
    BY_STATUS[resp.status_code] += 1
    if resp.content.startswith(b"{"):
        error = json.loads(resp.content).get("error") or {}
        BY_CODE[error.get("code", -1) if isinstance(error.get("code"), int) else -1] += 1
    assert not problems + writes, (
        f"{problems + writes}\n  request: {case!r}\n  response: {resp.status_code} {resp.text[:400]}"
    )
    return resp


@fuzz_settings(400)
@given(case=hostile_header_cases())
def test_hostile_header_bytes_and_repeats(env: Env, case: Case) -> None:
    """Header bytes that are not UTF-8, MCP headers that are not plain ASCII, repeated
    MCP headers: 400 with a JSON-RPC error, whatever the era, verb or body, and no write."""
    assert exercise_raw(env, case).status_code == 400


H2025 = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
CALL_2026 = {"name": "slow_compute", "arguments": {"seconds": 0}}


def _with_header(name: str, value: str | bytes) -> Case:
    """A valid 2026 tools/call with one more header."""
    built = case("POST", headers_for("tools/call", CALL_2026), envelope("tools/call", CALL_2026, 1))
    return Case(built.verb, (*built.headers, (name, value)), built.body)


# What the issue found: each crashed (500) or was accepted when it must be refused.
HEADER_REGRESSIONS: dict[str, Case] = {
    # UnicodeDecodeError in the dev auth layer: a 500 before any MCP code ran.
    "not-utf8-user-agent": Case("POST", (*H2025.items(), ("user-agent", b"caf\xe9")), VALID),
    "not-utf8-bearer": Case("POST", (*H2025.items(), ("authorization", b"Bearer \xff")), VALID),
    # Starlette reads header bytes as Latin-1, where 0xB2 is '²'; str.isdigit() accepts
    # it and int() then raised in the resume code. (As UTF-8, '²' is two bytes.)
    "superscript-last-event-id": Case("GET", (("last-event-id", f"{STREAM_ID}:1".encode() + b"\xb2"),), None),
    "superscript-last-event-id-utf8": Case("GET", (("last-event-id", f"{STREAM_ID}:1²"),), None),
    # Only the first was compared with the body; a proxy may route on the second.
    "repeated-mcp-name": _with_header("mcp-name", "failing_job"),
    "repeated-mcp-method": _with_header("mcp-method", "tasks/cancel"),
}


def test_header_regressions(env: Env) -> None:
    failing = {}
    for name, step in HEADER_REGRESSIONS.items():
        try:
            exercise_raw(env, step)
        except AssertionError as exc:
            failing[name] = str(exc).splitlines()[0][:200]
    assert not failing, "\n".join(f"  {name}: {why}" for name, why in failing.items())
