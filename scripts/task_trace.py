#!/usr/bin/env python3
"""Run one task in the embedded runtime and print what it costs: the Step Functions
states it passes through and every DynamoDB call made for it (API, worker and state
machine alike, counted at moto's backend).

    python scripts/task_trace.py                       # greet, a task with no progress
    python scripts/task_trace.py slow_compute '{"seconds": 2}'
    python scripts/task_trace.py confirm_delete '{"filename": "a"}' --answer '{"confirm_delete": {"action": "accept", "content": {"confirm": true}}}'
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from collections import Counter
from typing import Any

from taskgate.domain.model import NewTask

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "layers" / "taskgate"), str(ROOT / "layers" / "tools")]


def trace(tool: str, arguments: dict[str, Any], answer: dict[str, Any] | None) -> dict[str, Any]:
    import boto3
    from moto.dynamodb.models import DynamoDBBackend

    from taskgate import wiring
    from taskgate.local.runtime import EmbeddedAws

    # (task id the call touched, description): a process may still run other tasks' steps.
    calls: list[tuple[str | None, str]] = []
    originals = {
        op: getattr(DynamoDBBackend, op)
        for op in ("put_item", "update_item", "get_item", "delete_item", "query", "scan")
    }
    for op, original in originals.items():

        def wrapper(self: Any, *args: Any, __op: str = op, __orig: Any = original, **kwargs: Any) -> Any:
            expr = kwargs.get("update_expression") or ""
            item = kwargs.get("key") or kwargs.get("item_attrs") or (args[1] if len(args) > 1 else None)
            task = item.get("taskId", {}).get("S") if isinstance(item, dict) else None
            calls.append((task, f"{__op}{(' ' + expr.split(',')[0]) if expr else ''}"))
            return __orig(self, *args, **kwargs)

        setattr(DynamoDBBackend, op, wrapper)

    runtime = EmbeddedAws().start()
    try:
        service = wiring.root().tasks
        record = service.create(NewTask(owner="trace", tool=tool, arguments=arguments))
        deadline = time.monotonic() + 120
        answered = False
        while True:
            row = wiring.root().store.get(record.task_id)
            assert row is not None
            if row.status.value == "input_required" and answer and not answered:
                service.submit_input("trace", record.task_id, answer)
                answered = True
            if row.status.terminal:
                break
            if time.monotonic() > deadline:
                raise SystemExit("task did not finish")
            time.sleep(0.05)
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        arn = runtime.state_machine_arn.replace(":stateMachine:", ":execution:") + ":" + record.task_id
        while sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
            time.sleep(0.05)
        history = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
        # The polling loop above is ours, not the task's: drop its reads.
        states = [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]
        return {
            "task": record.task_id,
            "status": row.status.value,
            "states": states,
            "transitions": len(states),
            "lambda_invocations": states.count("RunTool"),
            "dynamodb_writes": [
                c
                for task, c in calls
                if task == record.task_id and not c.startswith(("get_item", "query", "scan"))
            ],
        }
    finally:
        runtime.stop()
        for op, original in originals.items():
            setattr(DynamoDBBackend, op, original)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("tool", nargs="?", default="greet")
    parser.add_argument("arguments", nargs="?", default="{}")
    parser.add_argument("--answer", help="inputResponses to send when the task asks")
    args = parser.parse_args()
    out = trace(args.tool, json.loads(args.arguments), json.loads(args.answer) if args.answer else None)
    print(f"task {out['task']} -> {out['status']}")
    print(f"states entered ({out['transitions']}): {' -> '.join(out['states'])}")
    print(f"worker invocations: {out['lambda_invocations']}")
    writes = Counter(out["dynamodb_writes"])
    print(f"DynamoDB writes ({len(out['dynamodb_writes'])}):")
    for call, n in writes.items():
        print(f"  {n} x {call}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
