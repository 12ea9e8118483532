#!/usr/bin/env python3
"""The sweeper against thousands of live tasks, under moto: how long one pass takes and
which AWS calls it makes, next to the one-task-at-a-time sweep it replaced.

    python scripts/sweep_at_scale.py                 # 5,000 tasks (the default mix)
    python scripts/sweep_at_scale.py --tasks 20000

The mix: half parked for input (within their wait), most of the rest working and
recently updated, some quiet with their execution running, some whose execution is
gone, some that ended, and some past their maximum run time. moto answers in-process,
so the wall time is the sweeper's own work plus moto's, not AWS latency; the call
counts are what AWS would see. The SweeperFunction's timeout is 300 s.
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import os
import pathlib
import sys
import time
import uuid
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "layers" / "taskgate")]

FUNCTION_TIMEOUT_S = 300
NOW = int(time.time() * 1000)
STALE_MS = 300_000
HOUR = 3_600_000
DAY = 24 * HOUR


def mix(total: int) -> list[tuple[str, int, str, int, str | None]]:
    """(kind, count, status, quiet ms, execution status or None)."""
    parked = total // 2
    quiet = total // 25
    gone = total // 100
    ended = total // 100
    overdue = total // 100
    fresh = total - parked - quiet - gone - ended - overdue
    return [
        ("parked for input, within its wait", parked, "input_required", 2 * HOUR, "RUNNING"),
        ("working, updated in the last minute", fresh, "working", 30_000, "RUNNING"),
        ("working, quiet, execution running", quiet, "working", STALE_MS + 60_000, "RUNNING"),
        ("working, execution never started", gone, "working", STALE_MS + 60_000, None),
        ("working, execution ended (ABORTED)", ended, "working", STALE_MS + 60_000, "ABORTED"),
        ("past its maximum run time", overdue, "working", 30_000, "RUNNING"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=5_000)
    parser.add_argument("--skip-before", action="store_true", help="do not time the old sweep")
    args = parser.parse_args(argv)
    logging.getLogger("taskgate").setLevel(logging.ERROR)  # one line per swept task otherwise

    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
    }.items():
        os.environ.setdefault(key, value)
    os.environ.pop("AWS_ENDPOINT_URL", None)

    import boto3
    from moto import mock_aws

    from taskgate.adapters.dynamodb_store import DynamoDBTaskStore
    from taskgate.adapters.stepfunctions_workflow import StepFunctionsWorkflow
    from taskgate.domain.model import TaskRecord, TaskStatus
    from taskgate.domain.sweeper import Sweeper
    from taskgate.local import moto_fixes
    from taskgate.local.runtime import TABLE_DEFINITION

    # moto's DynamoDB is not thread-safe (AWS's is): serialise its requests, as the
    # local runtime does. The parallel sweep's DynamoDB calls then queue in moto.
    moto_fixes.apply(lambda event: {})
    with mock_aws():  # executions are created RUNNING and never run: the sweeper only reads them
        ddb = boto3.client("dynamodb")
        sfn = boto3.client("stepfunctions")
        iam = boto3.client("iam")
        role = iam.create_role(RoleName="r", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        definition = json.dumps({"StartAt": "Wait", "States": {"Wait": {"Type": "Pass", "End": True}}})
        machine = sfn.create_state_machine(name="taskgate-task", definition=definition, roleArn=role)[
            "stateMachineArn"
        ]

        def build() -> tuple[DynamoDBTaskStore, StepFunctionsWorkflow, dict[str, str]]:
            name = f"tasks-{time.monotonic_ns()}"
            ddb.create_table(TableName=name, **TABLE_DEFINITION)
            store = DynamoDBTaskStore(lambda: ddb, name)
            workflow = StepFunctionsWorkflow(lambda: sfn, machine)
            kinds: dict[str, str] = {}
            n = 0
            for kind, count, status, quiet, execution in mix(args.tasks):
                for _ in range(count):
                    task_id = str(uuid.uuid4())
                    created = NOW - quiet - (40 * DAY if kind.startswith("past") else 1_000)
                    store.create(
                        TaskRecord(
                            task_id=task_id,
                            owner=f"owner-{n % 97}",
                            tool="slow_compute",
                            arguments={"seconds": 60, "note": "x" * 200},
                            status=TaskStatus(status),
                            created_at_ms=created,
                            last_updated_at_ms=NOW - quiet,
                            ttl_ms=DAY,
                            poll_interval_ms=1_000,
                            expires_at_ms=NOW + DAY,
                            retention_ms=DAY,
                        )
                    )
                    if execution is not None:
                        workflow.start(task_id, 86_400)
                        if execution != "RUNNING":
                            sfn.stop_execution(executionArn=workflow.execution_for(task_id))
                    kinds[task_id] = kind
                    n += 1
            return store, workflow, kinds

        calls: collections.Counter[str] = collections.Counter()

        def count(model: Any, **kwargs: Any) -> None:
            calls[f"{model.service_model.service_name}:{model.name}"] += 1

        for client in (ddb, sfn):
            client.meta.events.register("before-call", count)

        rows: list[tuple[str, float, collections.Counter[str], int]] = []

        if not args.skip_before:
            store, workflow, _ = build()
            calls.clear()
            started = time.perf_counter()
            swept = old_sweep(store, workflow)
            rows.append(("before: one task at a time", time.perf_counter() - started, calls.copy(), swept))

        store, workflow, kinds = build()
        sweeper = Sweeper(store, workflow, lambda: NOW, stale_after_ms=STALE_MS, max_runtime_ms=30 * DAY)
        calls.clear()
        started = time.perf_counter()
        report = sweeper.sweep(lambda: int((FUNCTION_TIMEOUT_S - (time.perf_counter() - started)) * 1000))
        took = time.perf_counter() - started
        rows.append(("after: batched, judged from the row, parallel", took, calls.copy(), len(report.failed)))

    print(f"\n{args.tasks:,} live tasks under moto (SweeperFunction timeout {FUNCTION_TIMEOUT_S} s)\n")
    for kind, count_, _status, _quiet, _execution in mix(args.tasks):
        swept_here = sum(1 for t in report.failed if kinds[t] == kind)
        print(f"  {count_:>6,}  {kind:<40} swept {swept_here:,}")
    print()
    header = f"{'sweep':<48} {'seconds':>8} {'GetItem':>8} {'BatchGet':>9} {'Describe':>9} {'Scan':>5} {'swept':>6}"
    print(header)
    print("-" * len(header))
    for name, seconds, counted, swept in rows:
        print(
            f"{name:<48} {seconds:>8.1f} {counted['dynamodb:GetItem']:>8,} {counted['dynamodb:BatchGetItem']:>9,}"
            f" {counted['stepfunctions:DescribeExecution']:>9,} {counted['dynamodb:Scan']:>5,} {swept:>6,}"
        )
    # On AWS each call is a network round trip; the old sweep made them one after another,
    # the new one reads a hundred rows per call and runs 16 batches at once.
    before_trips = sum(rows[0][2].values()) if len(rows) > 1 else None
    after_trips = -(-sum(rows[-1][2].values()) // 16)
    if before_trips is not None:
        print(
            f"\nround trips in sequence: before {before_trips:,}, after about {after_trips:,} "
            f"(at an assumed 20 ms each: {before_trips * 0.02:.0f} s against {after_trips * 0.02:.1f} s)"
        )
    print(
        f"\nafter: checked {report.checked:,} ({report.judged_from_row:,} from the row alone, "
        f"{report.described:,} described), swept {len(report.failed):,}, errors {len(report.errors)}, "
        f"complete {report.complete}, {took:.1f} s of the {FUNCTION_TIMEOUT_S} s timeout"
    )
    ok = report.complete and not report.errors and took < FUNCTION_TIMEOUT_S
    return 0 if ok else 1


def old_sweep(store: Any, workflow: Any) -> int:
    """The sweep as it was: every live task read and judged one by one, a
    DescribeExecution for every quiet one (parked tasks included), nothing isolated."""
    swept = 0
    for task_id in [t for page in store.active_pages() for t in page]:
        record = store.get(task_id)
        if record is None or record.status.terminal:
            continue
        reason = None
        if NOW - record.created_at_ms > 30 * DAY:
            reason = "The task exceeded its maximum run time."
        elif NOW - record.last_updated_at_ms > STALE_MS:
            status = workflow.status(task_id)
            if status is None or status != "RUNNING":
                reason = "gone"
        if reason:
            swept += 1  # (the old code then wrote the failure; not timed here)
    return swept


if __name__ == "__main__":
    sys.exit(main())
