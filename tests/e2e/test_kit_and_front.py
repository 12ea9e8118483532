"""The kit and a deployment agree (issue 31, item 3): the README's first tool (rollout, the
project template's), called plainly by a 2026-07-28 client that sends a progressToken and answers
its question, gives the same outcome from ``ToolTester`` as from the local server behind
``make serve-front``'s API Gateway front (tests/apigw_front.py: buffered, cut at 30 s), and the
front's progress is the kit's, or a rising part of it ending where the kit's ends: a tool not yet
timed runs as a hidden task the request waits on, and each look at its row sends the progress
it finds (issue 27), never one lower or repeated."""

from __future__ import annotations

import os
import pathlib
import shutil
from typing import Any

import pytest
from taskgate_cli.protocol import headers_2026, meta_2026, rpc_request
from taskgate_cli.transport import Http

from taskgate.local.process import CHECKOUT_TOOLS, PACKAGE_DIR, start
from taskgate.testing import ToolTester, accept
from tests.apigw_front import running_front
from tests.e2e.local_server import ROOT
from tests.kit_tools import _PATH as ROLLOUT_SOURCE
from tests.kit_tools import rollout

pytestmark = pytest.mark.slow

ARGUMENTS = {"service": "checkout", "waves": 3}


def _call(url: str, params: dict[str, Any], msg_id: int) -> tuple[dict[str, Any], list[tuple[Any, Any]]]:
    """One tools/call through the front: its result, and the progress it carried."""
    params = {**params, "_meta": {**meta_2026(tasks=False, elicitation=True), "progressToken": "p"}}
    with Http(url, {}).send(
        "POST", headers_2026("tools/call", params), rpc_request("tools/call", params, msg_id)
    ) as reply:
        if not reply.is_stream:
            return reply.body["result"], []
        progress, result = [], None
        for event in reply.events():
            message = event.message() or {}
            if message.get("method") == "notifications/progress":
                progress.append((message["params"]["progress"], message["params"].get("total")))
            elif message.get("id") == msg_id:
                result = message["result"]
        assert result is not None, "the stream ended without the response"
        return result, progress


def test_the_kit_and_the_front_give_the_same_progress_and_outcome(tmp_path: pathlib.Path) -> None:
    kit = ToolTester(rollout, era="2026", front="buffering").call(rollout, ARGUMENTS)
    kit.answer(confirm=accept(ok=True))

    shutil.copy(ROLLOUT_SOURCE, tmp_path / "readme_rollout.py")
    path = os.pathsep.join(map(str, (PACKAGE_DIR, CHECKOUT_TOOLS, tmp_path)))
    server = start(
        tmp_path / "server.log", cwd=ROOT, env={"TOOL_MODULES": "readme_rollout", "PYTHONPATH": path}
    )
    try:
        server.wait(30)
        with running_front(server.url.removesuffix("/mcp")) as [front]:
            url = front.url + "/mcp"
            asked, before = _call(url, {"name": "rollout", "arguments": ARGUMENTS}, 1)
            assert asked["resultType"] == "input_required" and list(asked["inputRequests"]) == ["confirm"]
            answered = {"confirm": accept(ok=True)}
            params = {"name": "rollout", "arguments": ARGUMENTS, "inputResponses": answered}
            if asked.get("requestState") is not None:  # sealed state, when the round carries any
                params["requestState"] = asked["requestState"]
            done, progress = _call(url, params, 2)
    finally:
        server.stop()
    print(f"\nkit: {kit.delivered}, {[(p.progress, p.total) for p in kit.progress]}, {kit.text!r}")
    print(f"front: {before + progress}, {done['content'][0]['text']!r}")
    assert kit.delivered == "multi-round"
    shown = [(p.progress, p.total) for p in kit.progress]
    front = before + progress
    assert shown == [(1, 3), (2, 3), (3, 3)]
    assert front and front[-1] == shown[-1] and front == sorted(set(front)) and set(front) <= set(shown)
    assert done["content"][0]["text"] == kit.text == "checkout rolled out in 3 waves"
    assert done.get("isError") is False and not kit.is_error
