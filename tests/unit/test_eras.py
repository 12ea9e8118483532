"""The seam between transport and protocol eras: who claims a request, how a method
is registered and served, and which HTTP status each era gives an error code."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from taskgate.codes import INVALID_PARAMS, METHOD_NOT_FOUND
from taskgate.protocol.era import Era, Method, MethodRegistry
from taskgate.protocol.server import McpServer
from taskgate.protocol.v2025.era import claims as claims_2025
from taskgate.protocol.v2026.envelope import claims as claims_2026
from taskgate.protocol.wire.exchange import Call
from taskgate.protocol.wire.params import Key, Params
from tests.fakes import World
from tests.mcp_client import envelope, headers_for

META_2026 = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}


@pytest.mark.parametrize(
    ("headers", "meta", "era"),
    [
        ({"mcp-protocol-version": "2026-07-28"}, {}, "2026"),
        ({}, META_2026, "2026"),
        ({"mcp-protocol-version": "2025-11-25"}, META_2026, "2026"),
        ({"mcp-protocol-version": "2025-11-25"}, {}, "2025"),
        ({"mcp-protocol-version": "2025-06-18"}, {}, "2025"),
        ({}, {}, "2025"),
        ({"mcp-protocol-version": "1999-01-01"}, {}, "2025"),
    ],
)
def test_each_request_is_claimed_by_exactly_one_era(
    headers: dict[str, str], meta: dict[str, Any], era: str
) -> None:
    assert (claims_2026(headers, meta), claims_2025(headers, meta)) == (era == "2026", era == "2025")


def test_the_server_asks_eras_in_order(world: World) -> None:
    eras = world.server.eras
    assert [e.version for e in eras] == ["2026-07-28", "2025-11-25"]
    assert world.server.era_for({"mcp-protocol-version": "2026-07-28"}, {}) is eras[0]
    assert world.server.era_for({}, {}) is eras[1]


class EchoParams(Params):
    text: Key


class ToyEra(Era):
    """A third era, claimed by its own version header, serving one method."""

    version = "2099-01-01"
    http_status: ClassVar[Mapping[int, int]] = {INVALID_PARAMS: 422, METHOD_NOT_FOUND: 501}

    def __init__(self) -> None:
        super().__init__(MethodRegistry([Method("toy/echo", self._echo, EchoParams)]))

    def claims(self, headers: Mapping[str, str], meta: Mapping[str, Any]) -> bool:
        return headers.get("mcp-protocol-version") == self.version

    def _echo(self, call: Call, params: EchoParams) -> dict[str, Any]:
        return {"echo": params.text, "owner": call.owner}


def test_a_third_era_is_one_entry_in_the_servers_list(world: World) -> None:
    toy_era = ToyEra()
    server = McpServer([lambda: toy_era, lambda: world.root.era2026, lambda: world.root.era2025])
    toy = {"mcp-protocol-version": "2099-01-01"}
    ok = server.handle(
        {"jsonrpc": "2.0", "id": 1, "method": "toy/echo", "params": {"text": "hi"}}, toy, "ann"
    )
    assert (ok.status, ok.body) == (
        200,
        {"jsonrpc": "2.0", "id": 1, "result": {"echo": "hi", "owner": "ann"}},
    )
    # Its own table decides the status of its errors.
    bad = server.handle({"jsonrpc": "2.0", "id": 2, "method": "toy/echo", "params": {"text": ""}}, toy, "ann")
    assert bad.status == 422 and bad.body is not None and bad.body["error"]["code"] == INVALID_PARAMS
    missing = server.handle({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, toy, "ann")
    assert missing.status == 501 and missing.body is not None
    assert missing.body["error"]["code"] == METHOD_NOT_FOUND
    # The other eras are untouched.
    assert server.handle({"jsonrpc": "2.0", "id": 4, "method": "ping"}, {}, "ann").status == 200


def test_a_new_method_is_one_registry_entry(world: World) -> None:
    era_2026 = world.server.eras[0]
    era_2026.methods.add(Method("toy/echo", lambda call, params: {"echo": params.text}, EchoParams, "text"))
    params = {"text": "hello"}
    reply = world.handle(
        envelope("toy/echo", params, 1), headers_for("toy/echo", params) | {"mcp-name": "hello"}
    )
    assert reply.status == 200
    assert reply.body is not None and reply.body["result"] == {"resultType": "complete", "echo": "hello"}
    # Its Mcp-Name field is checked like any other method's.
    wrong = world.handle(envelope("toy/echo", params, 2), headers_for("toy/echo", params) | {"mcp-name": "x"})
    assert wrong.status == 400 and wrong.body is not None and wrong.body["error"]["code"] == -32020


def test_a_method_is_registered_once() -> None:
    registry = MethodRegistry([Method("a", lambda c, p: {})])
    with pytest.raises(ValueError, match="twice"):
        registry.add(Method("a", lambda c, p: {}))


def test_every_method_validates_its_params_with_a_model(world: World) -> None:
    for era in world.server.eras:
        for method in era.methods:
            assert method.params is not None, (era.version, method.name)


def test_minus_32602_has_one_status_per_era_wherever_it_is_raised(world: World) -> None:
    # 2026: 400 from the envelope check and from a handler alike.
    envelope_error = world.handle(
        {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": "x"}},
        {"mcp-protocol-version": "2026-07-28", "mcp-method": "tasks/get", "mcp-name": "x"},
    )
    handler_error = world.mcp().request("tasks/get", {"taskId": "00000000-0000-4000-8000-000000000000"})
    assert envelope_error.body is not None and envelope_error.body["error"]["code"] == INVALID_PARAMS
    assert handler_error["error"]["code"] == INVALID_PARAMS
    assert envelope_error.status == handler_error["_http_status"] == 400
    # 2025: a method's -32602 travels with 200, as that revision's transport has it.
    old = world.handle({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": "nope"}})
    assert old.status == 200 and old.body is not None and old.body["error"]["code"] == INVALID_PARAMS


def test_params_are_strict(world: World) -> None:
    mcp = world.mcp()
    # No coercion: a ttl that is a string is refused, not read as a number.
    assert (
        world.handle(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "slow_compute", "task": {"ttl": "60"}},
            }
        ).body["error"]["code"]
        == INVALID_PARAMS
    )
    long_id = "x" * 257
    refused = mcp.request("tasks/get", {"taskId": long_id})
    assert refused["error"]["code"] == INVALID_PARAMS and "taskId" in refused["error"]["message"]
    assert refused["error"]["data"]["errors"][0]["path"] == ["taskId"]
    # Values are never echoed back: they may be secrets.
    assert long_id not in str(refused)


def test_protocol_and_domain_never_import_the_aws_sdk() -> None:
    import pathlib

    import taskgate

    root = pathlib.Path(taskgate.__file__).parent
    for package in ("protocol", "domain"):
        for source in (root / package).rglob("*.py"):
            assert "botocore" not in source.read_text() and "boto3" not in source.read_text(), source


def test_the_cli_names_what_the_registry_says_mcp_name_mirrors(world: World) -> None:
    from taskgate_cli.protocol import NAME_FIELD

    era_2026 = world.server.eras[0]
    assert {m.name: m.name_field for m in era_2026.methods if m.name_field} == NAME_FIELD
