"""IAM proven (issue 20, item 5): every AWS call each function and the state machine made in
this run's integration and end-to-end tests (operation and resource ARN, recorded by
taskgate/local/aws_calls.py) is allowed by that function's policy in the translated template,
resources included. It runs last (tests/conftest.py) and the table it builds is printed at the
end of the run. On its own, it first drives one of everything (a task, a question answered, a
cancel, a large result and a plain call's logged response, a sweep), so it checks something."""

from __future__ import annotations

import time

import pytest

from taskgate import wiring
from taskgate.local import aws_calls
from taskgate.local.runtime import EmbeddedAws
from tests import fixture_tools
from tests.conftest import CALLS_DIR, REPORT
from tests.iam import check
from tests.integration.conftest import owner_client
from tests.mcp_client import Legacy

assert fixture_tools  # registers big_result and big_text

# The jobs JobArns would name: the stand-ins tests/integration/test_jobs.py makes
# in moto (a Batch queue and definition, an ECS cluster and task definition, a Glue job).
_AWS = "arn:aws:{}:us-east-1:123456789012:{}"
JOBS = {
    "JobArns": ",".join(
        [
            _AWS.format("batch", "job-queue/q"),
            _AWS.format("batch", "job-definition/nightly:*"),
            _AWS.format("ecs", "cluster/jobs"),
            _AWS.format("ecs", "task-definition/etl:*"),
            _AWS.format("iam", "role/etl").replace(":us-east-1:", "::"),
            _AWS.format("glue", "job/nightly"),
        ]
    )
}


def _one_of_everything(aws: EmbeddedAws, legacy: Legacy) -> None:
    from tests.sse import over_streams

    changes = aws.change_stream()  # the table's change stream, read as the mapping reads it
    alice = owner_client("alice")
    done = alice.call("slow_compute", {"seconds": 0})["taskId"]
    asked = alice.call("confirm_delete", {"filename": "iam.csv"})["taskId"]
    alice.wait(asked, {"input_required"})
    alice.result(
        "tasks/update",
        {
            "taskId": asked,
            "inputResponses": {"confirm_delete": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    big = alice.call("big_result", {"kilobytes": 300})["taskId"]
    cancelled = alice.call("slow_compute", {"seconds": 30})["taskId"]
    alice.result("tasks/cancel", {"taskId": cancelled})
    for task_id in (done, asked, big):
        alice.wait(task_id, timeout=20)
    assert alice.get(big)["result"]["content"][0]["text"]
    over_streams(legacy, "tools/call", {"name": "big_text", "arguments": {"kilobytes": 40}})
    # A job handed off (the example pipeline): the state machine starts and waits for it,
    # tasks/get reads its status, a cancel stops it.
    piped = alice.call("run_pipeline", {"stage_seconds": 0})["taskId"]
    stopped = alice.call("run_pipeline", {"stage_seconds": 30})["taskId"]
    alice.wait(stopped, {"working"})
    deadline = time.monotonic() + 10
    while "in state" not in alice.get(stopped).get("statusMessage", "") and time.monotonic() < deadline:
        time.sleep(0.1)
    alice.result("tasks/cancel", {"taskId": stopped})
    alice.wait(piped, timeout=20)
    time.sleep(0.2)
    wiring.root().sweeper.sweep()
    assert changes.pump() > 0  # the wake-ups of what ended and asked: on the stack's bus


def test_every_aws_call_is_allowed_by_its_functions_policy(
    request: pytest.FixtureRequest, aws: EmbeddedAws, http: object
) -> None:
    directory = request.config.stash.get(CALLS_DIR, None)
    assert directory is not None, "the recording is set up by tests/conftest.py"
    legacy = Legacy(http)
    legacy.initialize()
    aws_calls.active = True
    _one_of_everything(aws, legacy)
    calls = aws_calls.read(directory)
    functions = {c["function"] for c in calls}
    every = {"ApiFunction", "WorkerFunction", "SweeperFunction", "TaskStateMachine", "TaskEventsFunction"}
    assert every <= functions, functions
    report = check(calls, JOBS)
    unused = "\n".join(f"  {f:16} {sid:26} {a:24} {why}" for f, sid, a, why in report.unused) or "  (none)"
    request.config.stash[REPORT] = (
        f"{len(calls)} calls recorded; {len(report.rows)} distinct (function, operation, resource)\n"
        + report.table()
        + "\ngranted but not used by any recorded call:\n"
        + unused
    )
    assert not report.denied, "AWS calls the template's policies do not allow:\n" + report.table(
        report.denied
    )
