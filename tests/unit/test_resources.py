"""Resources in both eras, on the fakes: listing, templates, reads of text and bytes,
the not-found error of each revision, caching hints, owner scoping, the decorator."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from pydantic import BaseModel

from taskgate.tools.resources import Contents, Resource, ResourceContext, ResourceNotFound, resource
from tests.fakes import World
from tests.mcp_client import Legacy, Mcp, envelope, headers_for

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="


def _finished_report(world: World, owner: str) -> str:
    """An orders_report task of ``owner``'s, run to completion on a small dataset."""
    task_id = world.mcp(owner).call("orders_report", {"year": 2024, "orders": 200})["taskId"]
    world.settle()
    assert world.mcp(owner).get(task_id)["status"] == "completed"
    return task_id  # type: ignore[no-any-return]


def test_list_names_the_static_resources_first_and_hints_a_private_cache(mcp: Mcp) -> None:
    result = mcp.result("resources/list")
    uris = [r["uri"] for r in result["resources"]]
    # The caching scenario reads whatever is listed first: it must be readable.
    assert uris[:3] == ["test://static-text", "test://static-binary", "test://watched-resource"]
    first = result["resources"][0]
    assert first == {
        "uri": "test://static-text",
        "name": "static-text",
        "title": "Static Text Resource",
        "description": "A static text resource for testing",
        "mimeType": "text/plain",
    }
    # The list holds each caller's own reports, so it is never shared across callers.
    assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 0, "private")


def test_templates_list_every_template_and_may_be_shared(mcp: Mcp) -> None:
    result = mcp.result("resources/templates/list")
    templates = {t["uriTemplate"]: t for t in result["resourceTemplates"]}
    assert set(templates) >= {
        "test://template/{id}/data",
        "reports://orders/{taskId}",
        "taskgate://tasks/{taskId}/result/{part}",
    }
    assert templates["test://template/{id}/data"]["mimeType"] == "application/json"
    assert all("uri" not in t and t["name"] and t["description"] for t in templates.values())
    assert (result["ttlMs"], result["cacheScope"]) == (300_000, "public")


def test_read_text_binary_and_template(mcp: Mcp) -> None:
    text = mcp.result("resources/read", {"uri": "test://static-text"})
    assert text["contents"] == [
        {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    ]
    assert (text["resultType"], text["ttlMs"], text["cacheScope"]) == ("complete", 0, "private")
    binary = mcp.result("resources/read", {"uri": "test://static-binary"})["contents"][0]
    assert binary == {"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}
    data = mcp.result("resources/read", {"uri": "test://template/123/data"})["contents"][0]
    assert data["uri"] == "test://template/123/data" and data["mimeType"] == "application/json"
    assert json.loads(data["text"]) == {"id": "123", "templateTest": True, "data": "Data for ID: 123"}


def test_an_unknown_resource_is_32602_with_the_uri_in_2026(mcp: Mcp, world: World) -> None:
    uri = "test://nonexistent-resource-for-conformance-testing"
    body = mcp.request("resources/read", {"uri": uri})
    assert body["error"] == {"code": -32602, "message": "Resource not found", "data": {"uri": uri}}
    assert body["_http_status"] == 400
    # A template's pattern that its types refuse names nothing either (part 0 does not exist).
    zero = "taskgate://tasks/00000000-0000-4000-8000-000000000000/result/0"
    assert mcp.request("resources/read", {"uri": zero})["error"]["data"] == {"uri": zero}


def test_an_unknown_resource_is_32002_with_the_uri_in_2025(legacy: Legacy) -> None:
    body = legacy.request("resources/read", {"uri": "test://nope"})
    assert body["error"] == {"code": -32002, "message": "Resource not found", "data": {"uri": "test://nope"}}


def test_the_2025_era_reads_without_caching_hints(legacy: Legacy) -> None:
    listed = legacy.result("resources/list")
    assert "ttlMs" not in listed and "resultType" not in listed
    assert listed["resources"][0]["uri"] == "test://static-text"
    read = legacy.result("resources/read", {"uri": "test://template/7/data"})
    assert json.loads(read["contents"][0]["text"])["id"] == "7"
    assert "cacheScope" not in read
    assert legacy.result("resources/templates/list")["resourceTemplates"]


def test_bad_params_are_32602(mcp: Mcp, legacy: Legacy) -> None:
    for params in ({}, {"uri": ""}, {"uri": 5}, {"uri": "x" * 9000}):
        assert mcp.request("resources/read", params)["error"]["code"] == -32602, params
        assert legacy.request("resources/read", params)["error"]["code"] == -32602, params
    # Every list is one page: a cursor was never issued.
    assert mcp.request("resources/list", {"cursor": "abc"})["error"]["code"] == -32602


def test_reports_are_listed_and_read_by_their_owner_only(world: World) -> None:
    alice, bob = world.mcp("alice"), world.mcp("bob")
    task_id = _finished_report(world, "alice")
    uri = f"reports://orders/{task_id}"
    listed = [r for r in alice.result("resources/list")["resources"] if r["uri"].startswith("reports://")]
    assert listed == [
        {
            "name": f"orders-report-{task_id}",
            "uri": uri,
            "title": f"Orders report ({task_id[:8]})",
            "mimeType": "text/markdown",
        }
    ]
    assert not [r for r in bob.result("resources/list")["resources"] if r["uri"].startswith("reports://")]
    text = alice.result("resources/read", {"uri": uri})["contents"][0]["text"]
    assert text.startswith("# Orders report 2024\n") and "| 2024-12 |" in text
    # Bob gets exactly what a report that does not exist gets.
    missing = f"reports://orders/{'0' * 36}"
    assert bob.request("resources/read", {"uri": uri})["error"] == {
        "code": -32602,
        "message": "No finished orders report with that id",
        "data": {"uri": uri},
    }
    assert alice.request("resources/read", {"uri": missing})["error"]["message"] == (
        "No finished orders report with that id"
    )


def test_resources_read_carries_mcp_name_and_it_must_match(world: World) -> None:
    params = {"uri": "test://static-text"}
    body = envelope("resources/read", params, 1)
    assert headers_for("resources/read", params)["mcp-name"] == "test://static-text"
    assert world.handle(body, headers_for("resources/read", params)).status == 200
    wrong = {**headers_for("resources/read", params), "mcp-name": "test://static-binary"}
    reply = world.handle(body, wrong)
    assert (reply.status, reply.body["error"]["code"]) == (400, -32020)
    missing = {k: v for k, v in headers_for("resources/read", params).items() if k != "mcp-name"}
    assert world.handle(body, missing).body["error"]["code"] == -32020


def test_a_non_ascii_uri_travels_base64_encoded_in_mcp_name(world: World) -> None:
    params = {"uri": "test://template/caf\u00e9/data"}
    headers = headers_for("resources/read", params)
    assert headers["mcp-name"] == "=?base64?" + base64.b64encode(params["uri"].encode()).decode() + "?="
    reply = world.handle(envelope("resources/read", params, 1), headers)
    assert reply.status == 200, reply.body
    assert json.loads(reply.body["result"]["contents"][0]["text"])["id"] == "caf\u00e9"
    garbled = {**headers, "mcp-name": "=?base64?***?="}
    assert world.handle(envelope("resources/read", params, 2), garbled).body["error"]["code"] == -32020


# -- the decorator and the template matcher ----------------------------------------------


class IdVars(BaseModel):
    id: int


def test_template_variables_are_typed_by_the_model() -> None:
    def read(args: IdVars, ctx: ResourceContext) -> dict[str, Any]:
        return {"double": args.id * 2}

    r = Resource(uri="calc://double/{id}", name="double", fn=read, variables_model=IdVars)
    ctx = ResourceContext(owner="x", uri="calc://double/21")
    assert r.read("calc://double/21", ctx) == [
        {"uri": "calc://double/21", "mimeType": "application/json", "text": '{"double": 42}'}
    ]
    # The pattern matches, the type does not: not found, not a crash.
    with pytest.raises(ResourceNotFound):
        r.read("calc://double/abc", ctx)
    assert r.match("calc://double/1/2") is None


def test_reserved_expansion_spans_segments_and_values_are_percent_decoded() -> None:
    class PathVars(BaseModel):
        path: str

    r = Resource(uri="files:///{+path}", name="f", fn=lambda a, c: a.path, variables_model=PathVars)
    assert r.match("files:///a/b%20c.txt") == {"path": "a/b c.txt"}
    one = Resource(uri="x://{name}/meta", name="m", fn=lambda a, c: "", variables_model=PathVars)
    assert one.match("x://a%2Fb/meta") == {"name": "a/b"} and one.match("x://a/b/meta") is None


def test_contents_of_every_kind_and_empty_means_not_found() -> None:
    ctx = ResourceContext(owner="x", uri="k://a")

    def many(ctx: ResourceContext) -> list[Any]:
        return [Contents(text="t", uri="k://a#1", mime_type="text/csv"), b"\x00\x01", "plain"]

    r = Resource(uri="k://a", name="k", fn=many, mime_type="text/plain")
    assert r.read("k://a", ctx) == [
        {"uri": "k://a#1", "mimeType": "text/csv", "text": "t"},
        {"uri": "k://a", "mimeType": "text/plain", "blob": "AAE="},
        {"uri": "k://a", "mimeType": "text/plain", "text": "plain"},
    ]
    empty = Resource(uri="k://b", name="e", fn=lambda ctx: [])
    with pytest.raises(ResourceNotFound):
        empty.read("k://b", ctx)


def test_the_decorator_refuses_signatures_that_cannot_serve_the_uri() -> None:
    with pytest.raises(TypeError, match="lacks"):

        @resource("bad://{id}/{other}")
        def missing_variable(args: IdVars, ctx: ResourceContext) -> str:
            return ""

    with pytest.raises(TypeError, match="no variables"):

        @resource("bad://static")
        def static_with_model(args: IdVars, ctx: ResourceContext) -> str:
            return ""

    with pytest.raises(TypeError, match="pydantic model"):

        @resource("bad://{id}")
        def untyped(args: dict, ctx: ResourceContext) -> str:  # type: ignore[type-arg]
            return ""


def test_capabilities_declare_resources_prompts_and_completions(mcp: Mcp, legacy: Legacy) -> None:
    caps = mcp.result("server/discover")["capabilities"]
    # 2026: nothing to push subscriptions or list changes on, so neither is declared.
    assert caps["resources"] == {} and caps["prompts"] == {} and caps["completions"] == {}
    initialized = legacy.client.initialized
    assert initialized is not None
    caps25 = initialized["capabilities"]
    assert caps25["resources"] == {"subscribe": True}
    assert caps25["prompts"] == {} and caps25["completions"] == {}


def test_subscribe_is_a_removed_method_in_2026(mcp: Mcp) -> None:
    for method in ("resources/subscribe", "resources/unsubscribe"):
        body = mcp.request(method, {"uri": "test://watched-resource"})
        assert (body["_http_status"], body["error"]["code"]) == (404, -32601)
