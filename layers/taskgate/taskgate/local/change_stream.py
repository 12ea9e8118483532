"""The table's change stream and what reads it, in the embedded AWS.

Deployed, Lambda's event source mapping polls the task table's stream (DynamoDB Streams,
NEW_AND_OLD_IMAGES), drops the records its filter does not match (template FilterCriteria:
``taskgate.domain.wake_ups.FILTER_PATTERNS``), and invokes TaskEventsFunction with the rest,
in order, again from a record the function reports failed. moto 5.2.1 keeps the stream
(DescribeStream, GetShardIterator, GetRecords work) but has none of that: it would invoke a
mapped function synchronously inside the write that made the record, every record, unfiltered.
So no mapping is created in moto, and ``ChangeStream`` stands in for it: a thread that reads
the stream through the same API calls, filters with the same patterns (moto's EventBridge
pattern matcher: the mapping's filter syntax is EventBridge's) and calls the events function's
handler in this process, as the worker's is.

Two more moto gaps are bridged here, never in the product: moto numbers a stream's records
without a lock (two writes at once could get one number), so its shard's ``add`` is made to
take one; and it keeps every record and every shard iterator for the table's life, so what
the reader has consumed is dropped (a local server would otherwise grow with every write).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ..domain.wake_ups import FILTER_PATTERNS

logger = logging.getLogger(__name__)

Deliver = Callable[[dict[str, Any]], dict[str, Any]]
# The mapping's batch size (template: BatchSize).
BATCH_SIZE = 100

_patched = threading.Lock()
_LOCK = threading.RLock()


def _numbered_under_a_lock() -> None:
    """moto's ``StreamShard.add`` computes a record's number from the list's length, then
    appends: two writes at once could share a number. Once per process, it takes a lock."""
    from moto.dynamodb.models.table import StreamShard

    with _patched:
        if getattr(StreamShard.add, "_taskgate_locked", False):
            return
        original = StreamShard.add

        def add(self: Any, old: Any, new: Any) -> None:
            with _LOCK:
                original(self, old, new)

        add._taskgate_locked = True  # type: ignore[attr-defined]
        StreamShard.add = add  # type: ignore[method-assign]


def matches(record: dict[str, Any]) -> bool:
    """Whether the mapping's filter lets ``record`` through (any one pattern)."""
    from moto.events.models import EventPattern

    return any(EventPattern(None, pattern).matches_event(record) for pattern in FILTER_PATTERNS)  # type: ignore[arg-type]


class ChangeStream:
    """Reads the table's stream from where it was when started and hands the filtered records to
    ``deliver`` (a Lambda handler: ``{"Records": [...]}`` in, ``{"batchItemFailures": [...]}``
    out), ``BATCH_SIZE`` at a time, in order."""

    def __init__(self, table_name: str, deliver: Deliver, region: str, *, poll_seconds: float = 0.1) -> None:
        import boto3

        _numbered_under_a_lock()
        self._ddb = boto3.client("dynamodb", region_name=region)
        self._streams = boto3.client("dynamodbstreams", region_name=region)
        self._region = region
        self._deliver = deliver
        self._poll = poll_seconds
        self.stream_arn: str = self._ddb.describe_table(TableName=table_name)["Table"]["LatestStreamArn"]
        shard = self._streams.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]["Shards"][0]
        self._shard_id = shard["ShardId"]
        # From now on, as a new mapping with StartingPosition LATEST reads.
        self._iterator = self._streams.get_shard_iterator(
            StreamArn=self.stream_arn, ShardId=self._shard_id, ShardIteratorType="LATEST"
        )["ShardIterator"]
        self._pending: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.delivered = 0

    def start(self) -> ChangeStream:
        self._thread = threading.Thread(target=self._run, daemon=True, name="change-stream")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.pump()
            except Exception:
                logger.exception("the change stream's consumer failed; it reads again shortly")
                time.sleep(1.0)
            self._stop.wait(self._poll)

    def pump(self) -> int:
        """One look at the stream: every new record read, the matching ones delivered; how
        many were delivered. A batch the handler reports failed from record i is delivered
        again from i at the next look (as the mapping retries), nothing after it first."""
        with _LOCK:
            resp = self._streams.get_records(ShardIterator=self._iterator, Limit=1000)
            previous, self._iterator = self._iterator, resp["NextShardIterator"]
            self._forget(previous, resp["Records"])
        records = [self._as_lambda_sees_it(r) for r in resp["Records"]]
        self._pending += [r for r in records if matches(r)]
        delivered = 0
        while self._pending:
            batch = self._pending[:BATCH_SIZE]
            failures = self._deliver({"Records": batch}).get("batchItemFailures") or []
            if failures:
                failed = failures[0]["itemIdentifier"]
                done = next(i for i, r in enumerate(batch) if r["dynamodb"]["SequenceNumber"] == failed)
                del self._pending[:done]
                delivered += done
                break
            del self._pending[: len(batch)]
            delivered += len(batch)
        self.delivered += delivered
        return delivered

    def _as_lambda_sees_it(self, record: dict[str, Any]) -> dict[str, Any]:
        stream = dict(record["dynamodb"])
        when = stream.get("ApproximateCreationDateTime")
        if isinstance(when, datetime):
            stream["ApproximateCreationDateTime"] = when.timestamp()
        return {**record, "dynamodb": stream, "awsRegion": self._region, "eventSourceARN": self.stream_arn}

    def _forget(self, iterator: str, records: list[dict[str, Any]]) -> None:
        """Drop what moto would keep for the table's life: the iterator just used, and the
        records read (from the front of its shard's list, moving its numbering on)."""
        from moto.dynamodbstreams.models import dynamodbstreams_backends

        for account in dynamodbstreams_backends.values():
            backend = account.get(self._region)
            if backend is None or iterator not in backend.shard_iterators:
                continue
            shard = backend.shard_iterators.pop(iterator).stream_shard
            if records:
                last = max(int(r["dynamodb"]["SequenceNumber"]) for r in records)
                consumed = last + 1 - shard.starting_sequence_number
                if 0 < consumed <= len(shard.items):
                    del shard.items[:consumed]
                    shard.starting_sequence_number += consumed


class LocalRoute:
    """What a deployer adds to see the wake-ups: a rule on the bus that sends every task event
    to a queue (``QUEUE``). The local server reads the queue and logs each event it finds, so
    ``make serve`` shows the route working end to end."""

    QUEUE = "taskgate-task-events"
    RULE = "taskgate-local-task-events"

    def __init__(self, bus: str, region: str, *, poll_seconds: float = 0.5) -> None:
        import json

        import boto3

        self._sqs = boto3.client("sqs", region_name=region)
        self.url = self._sqs.create_queue(QueueName=self.QUEUE)["QueueUrl"]
        arn = self._sqs.get_queue_attributes(QueueUrl=self.url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        events = boto3.client("events", region_name=region)
        events.put_rule(Name=self.RULE, EventBusName=bus, EventPattern=json.dumps({"source": ["taskgate"]}))
        events.put_targets(Rule=self.RULE, EventBusName=bus, Targets=[{"Id": "local-queue", "Arn": arn}])
        self._poll = poll_seconds

    def start(self) -> LocalRoute:
        threading.Thread(target=self._run, daemon=True, name="task-events-queue").start()
        return self

    def _run(self) -> None:
        import json

        while True:
            try:
                for message in self._sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=10).get(
                    "Messages", []
                ):
                    event = json.loads(message["Body"])
                    detail = event.get("detail", {})
                    logger.info(
                        "task event on queue %s: %s %s (%s)",
                        self.QUEUE,
                        event.get("detail-type"),
                        detail.get("key"),
                        detail.get("status"),
                    )
                    self._sqs.delete_message(QueueUrl=self.url, ReceiptHandle=message["ReceiptHandle"])
            except Exception:
                logger.exception("reading the local task-events queue failed")
            time.sleep(self._poll)
