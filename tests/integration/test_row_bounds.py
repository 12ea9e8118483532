"""Every field of a task row bounded, against DynamoDB's real 400 KB item limit (moto
enforces it): a client past a bound gets -32602 with ``data.limit`` and nothing is
stored; a tool past one ends clearly, never with "ClientError" (issue 12, item 4).
The same rules, field by field, on the fakes: tests/unit/test_row_bounds.py."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from taskgate.local.runtime import EmbeddedAws
from tests.integration.conftest import table_items
from tests.mcp_client import Legacy, Mcp


def _task_rows(aws: EmbeddedAws) -> list[dict[str, Any]]:
    return [i for i in table_items(aws) if "#" not in i["taskId"]["S"]]


def test_a_600_kb_progress_token_is_refused_not_retried(http: TestClient, aws: EmbeddedAws) -> None:
    legacy = Legacy(http)
    legacy.initialize()
    resp = legacy.post(
        "tools/call",
        {
            "name": "slow_compute",
            "arguments": {"seconds": 0},
            "task": {},
            "_meta": {"progressToken": "p" * 600_000},
        },
    )
    assert resp.status_code == 200 and "retry-after" not in resp.headers
    error = resp.json()["error"]
    assert error["code"] == -32602 and error["data"] == {"limit": 1024}, error
    assert _task_rows(aws) == []


def test_mrtr_answers_past_the_answer_limit_are_refused(mcp: Mcp, aws: EmbeddedAws) -> None:
    big = {"user_name": {"action": "accept", "content": {"name": "n" * 70_000}}}
    body = mcp.request("tools/call", {"name": "test_tool_with_task", "arguments": {}, "inputResponses": big})
    assert body["error"]["code"] == -32602 and body["error"]["data"] == {"limit": 65_536}, body
    assert _task_rows(aws) == []


def test_a_250_kb_label_still_completes(mcp: Mcp) -> None:
    """slow_compute echoes its label in every progress message: the message is cut."""
    label = "é" * 125_000  # 250 KB of UTF-8: under the 256 KiB argument limit
    task_id = mcp.call("slow_compute", {"seconds": 0.3, "label": label})["taskId"]
    done = mcp.wait(task_id, timeout=20)
    assert done["status"] == "completed", done
    assert done["result"]["content"][0]["text"] == f"{label} finished after 0.3 seconds"


def test_a_200_kb_filename_fails_the_task_with_the_limit(mcp: Mcp) -> None:
    """confirm_delete puts the filename in its question: the questions are bounded."""
    task_id = mcp.call("confirm_delete", {"filename": "f" * 200_000})["taskId"]
    done = mcp.wait(task_id, timeout=20)
    assert done["status"] == "failed", done
    assert "questions are" in done["statusMessage"] and "the limit is 65536" in done["statusMessage"]
    assert "ClientError" not in done["statusMessage"]
