"""The local server's Lambda mode, the parts that need no process: the event API Gateway's
HTTP API hands the function, what it makes of the function's answer (through Mangum, as
ApiFunction answers), and which threads count as work left running after an answer."""

from __future__ import annotations

import base64
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from mangum import Mangum
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from taskgate.local.lambda_env import LambdaContext, running_threads
from taskgate.local.lambda_mode import http_api_event, http_response


def _scope(body_headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "query_string": b"a=1&b=2",
        "client": ("127.0.0.9", 50000),
        "headers": body_headers,
    }


def test_the_event_is_an_http_api_payload_2_0() -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"x-repeated", b"one"),
        (b"x-repeated", b"two"),
        (b"cookie", b"a=1; b=2"),
        (b"user-agent", b"test"),
    ]
    event = http_api_event(_scope(headers), b'{"x": 1}')
    assert event["version"] == "2.0" and event["rawPath"] == "/mcp" and event["rawQueryString"] == "a=1&b=2"
    assert event["headers"]["x-repeated"] == "one,two" and "cookie" not in event["headers"]
    assert event["cookies"] == ["a=1", "b=2"]
    assert event["body"] == '{"x": 1}' and event["isBase64Encoded"] is False
    context = event["requestContext"]
    assert context["http"]["method"] == "POST" and context["http"]["sourceIp"] == "127.0.0.9"
    assert context["requestId"] and context["timeEpoch"] > 0
    binary = http_api_event(_scope([]), b"\xff\x00")
    assert binary["isBase64Encoded"] is True and base64.b64decode(binary["body"]) == b"\xff\x00"


def test_a_request_goes_through_mangum_and_back_as_the_app_answered() -> None:
    async def echo(request: Request) -> Response:
        body = await request.json()
        response = JSONResponse({"got": body, "query": request.url.query, "cookie": request.cookies})
        response.set_cookie("session", "s1")
        response.headers["x-extra"] = "yes"
        return response

    handler = Mangum(Starlette(routes=[Route("/mcp", echo, methods=["POST"])]), lifespan="off")
    event = http_api_event(_scope([(b"content-type", b"application/json"), (b"cookie", b"a=1")]), b"[1, 2]")
    answer = http_response(handler(event, LambdaContext("r1", int(time.time() * 1000) + 5000)))  # type: ignore[arg-type]
    assert answer.status == 200
    headers = dict(answer.headers)
    assert headers[b"x-extra"] == b"yes" and headers[b"set-cookie"].startswith(b"session=s1")
    assert answer.body == b'{"got":[1,2],"query":"a=1&b=2","cookie":{"a":"1"}}'


def test_work_left_running_is_reported_and_idle_pool_workers_are_not() -> None:
    baseline = {t.ident for t in threading.enumerate() if t.ident is not None}
    stop = threading.Event()
    left = threading.Thread(target=stop.wait, name="left-behind", daemon=True)
    left.start()
    quick = threading.Thread(target=time.sleep, args=(0.01,), name="finishing")
    quick.start()
    pool = ThreadPoolExecutor(2, thread_name_prefix="idle-pool")
    pool.submit(lambda: None).result()  # its worker now waits for the next item
    try:
        found = running_threads(baseline)
        assert [t["thread"] for t in found] == ["left-behind"]
        assert any("wait" in line for line in found[0]["stack"])
        started = threading.Event()
        busy = pool.submit(lambda: started.set() or stop.wait())
        started.wait(5)
        assert [t["thread"] for t in running_threads(baseline)] == ["left-behind", "idle-pool_0"]
    finally:
        stop.set()
        busy.result()
        pool.shutdown()
        left.join()


def test_the_context_counts_down_to_the_functions_deadline() -> None:
    context = LambdaContext("r1", int(time.time() * 1000) + 3000)
    assert 2500 < context.get_remaining_time_in_millis() <= 3000
    assert LambdaContext("r2", 0).get_remaining_time_in_millis() == 0
