"""The largest request body and delivered result the template allows fit one Lambda payload
(6 MB), however much their JSON is escaped on the way (issue 20, item 6)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from mangum import Mangum

from taskgate.config import ConfigurationError, Settings
from taskgate.domain.limits import LAMBDA_PAYLOAD_BYTES, MAX_PAYLOAD_BODY_BYTES, json_size
from taskgate.http_app import create_app
from taskgate.protocol.wire.transport_security import TransportSecurity
from tests.fakes import World
from tests.mcp_client import Mcp
from tests.sam_translate import ROOT

pytestmark = pytest.mark.filterwarnings("ignore:There is no current event loop:DeprecationWarning")
EVENT = json.loads((ROOT / "events" / "api_tasks_get.json").read_text())
CLAIMS = EVENT["requestContext"]["authorizer"]["jwt"]["claims"]
OWNER = f"{CLAIMS['iss']}#{CLAIMS['sub']}"


class _Context:
    function_name = "api"
    aws_request_id = "r"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


def test_the_tuning_and_the_settings_allow_the_same_largest_sizes() -> None:
    from taskgate.tuning import BOUNDS

    for name, env in (
        ("MaxResultResponseBytes", "MAX_RESULT_RESPONSE_BYTES"),
        ("MaxBodyBytes", "MAX_BODY_BYTES"),
    ):
        assert BOUNDS[name][1] == MAX_PAYLOAD_BODY_BYTES, name
        largest = str(MAX_PAYLOAD_BODY_BYTES)
        assert (
            getattr(Settings.from_env({"TASK_TABLE": "t", env: largest}), env.lower())
            == MAX_PAYLOAD_BODY_BYTES
        )
        with pytest.raises(ConfigurationError, match=env):
            Settings.from_env({"TASK_TABLE": "t", env: str(MAX_PAYLOAD_BODY_BYTES + 1)})


def _lambda_client(world: World) -> tuple[Mcp, list[int]]:
    """A 2026 client whose requests go through API Gateway's event, Mangum and the app, and
    the size of each response as the Lambda runtime sends it (JSON, UTF-8 kept as is)."""
    app = create_app(
        lambda: world.server,
        anonymous_owner="anonymous",
        max_body_bytes=MAX_PAYLOAD_BODY_BYTES,
        inline=True,
        security=TransportSecurity(("*",), ()),
    )
    handler = Mangum(app, lifespan="off")
    sizes: list[int] = []

    def post(body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        world.settle()
        event = copy.deepcopy(EVENT)
        event["body"] = json.dumps(body)
        event["headers"] = {**event["headers"], **{k.lower(): v for k, v in headers.items()}}
        response = handler(event, _Context())
        sizes.append(len(json.dumps(response, ensure_ascii=False).encode()))
        assert not response.get("isBase64Encoded")
        return response["statusCode"], json.loads(response["body"])

    return Mcp(post), sizes


def test_the_largest_result_delivered_whole_fits_a_lambda_response() -> None:
    world = World(max_inline_result_bytes=4_096, max_result_response_bytes=MAX_PAYLOAD_BODY_BYTES)
    client, sizes = _lambda_client(world)
    # Each '"' is 2 bytes of the result's JSON and 4 of the response's: the worst there is.
    framing = json_size({"content": [{"type": "text", "text": ""}], "isError": False})
    count = (MAX_PAYLOAD_BODY_BYTES - framing) // 2
    task_id = client.call("quotes_result", {"count": count})["taskId"]
    result = client.get(task_id)["result"]
    assert result["content"][0]["text"] == '"' * count  # delivered whole
    assert sizes[-1] <= LAMBDA_PAYLOAD_BYTES, f"{sizes[-1]} > {LAMBDA_PAYLOAD_BYTES}"
    assert sizes[-1] > 0.95 * LAMBDA_PAYLOAD_BYTES  # the worst case, near the line


def test_every_part_of_a_larger_result_fits_a_lambda_response() -> None:
    world = World(max_inline_result_bytes=4_096, max_result_response_bytes=MAX_PAYLOAD_BODY_BYTES)
    client, sizes = _lambda_client(world)
    task_id = client.call("quotes_result", {"count": MAX_PAYLOAD_BODY_BYTES})["taskId"]
    links = [c for c in client.get(task_id)["result"]["content"] if c["type"] == "resource_link"]
    assert len(links) >= 2
    for link in links:
        read = client.result("resources/read", {"uri": link["uri"]})
        assert read["contents"][0]["uri"] == link["uri"]
        assert sizes[-1] <= LAMBDA_PAYLOAD_BYTES, f"{link['uri']}: {sizes[-1]} > {LAMBDA_PAYLOAD_BYTES}"


def test_the_largest_request_body_fits_a_lambda_event() -> None:
    """API Gateway hands the body to Lambda as a string in the event: its quotes escaped."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": {}}}
    )
    padding = MAX_PAYLOAD_BODY_BYTES - len(body) - len(',"pad":""')
    body = body[:-1] + ',"pad":"' + '\\"' * (padding // 2) + '"}'
    assert len(body.encode()) <= MAX_PAYLOAD_BODY_BYTES
    event = copy.deepcopy(EVENT)
    event["body"] = body
    assert len(json.dumps(event, ensure_ascii=False).encode()) <= LAMBDA_PAYLOAD_BYTES
