"""TaskStore on DynamoDB: one item per task, every transition a conditional write.

Item layout (attribute: type):
  taskId S (hash key) · ownerId S · tool S · arguments S(JSON) · status S ·
  statusMessage S · createdAt S(ISO 8601) · lastUpdatedAt S(ISO 8601) · ttlMs N ·
  pollIntervalMs N · expiresAt N(epoch s, the table's TTL attribute) ·
  inputRequests M(key -> S JSON) · inputResponses M(key -> S JSON) ·
  taskToken S · result S(JSON) · error S(JSON) · outcome S · checkpoint S(JSON) ·
  retentionMs N · resultRef S (results kept in S3) · clientCapabilities S(JSON) ·
  activeOwner S (only while the task is active: the sparse ``byActive`` index lists
  exactly the live tasks) · historyEvents N (the execution's history used so far,
  domain/history.py) · answerBytes N (what inputResponses holds, kept by the
  answer writes' conditions) · executionArn S (the task's execution, on the machine that
  started it: a replaced state machine's executions are still found) · progress S(JSON) ·
  progressCount N · logLines S(JSON) · logCount N · logLevel S (domain/progress.py) ·
  watchedUntil N (epoch ms: a plain call's hidden task, cancelled when its caller has not
  come back by then) · callRound N (the last round of a plain call the task answered,
  protocol/calls/rounds.py) · rowVersion N (1 at creation, one more with each write that changes
  the status, here and in the state machine: the table's change stream keys its events by it)
While a job a tool handed off is pending (jobs/vocabulary.py): jobKey S · job S(JSON) ·
  jobRequest S(JSON, what the state machine starts it with) · jobCheckedAt N (ms: when a
  read last noted the job's status); and for the task's life jobOutcomes M(key -> S JSON).
A callback job's URL: callbackHash S (SHA-256 of its secret) · callbackKey S ·
  callbackExpiresAt N (ms; 0 once used) · callbackToken S (while parked on it).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..clock import iso_from_ms, ms_from_iso
from ..domain.errors import ServiceUnavailable, TaskAlreadyExists, TransitionRejected
from ..domain.limits import map_size
from ..domain.model import Expiry, LogLine, Outcome, Progress, TaskRecord, TaskStatus
from ..domain.progress import ProgressReport, progress_key
from .aws_errors import translated
from .dynamodb_items import conditional, dumps, expires_at, expires_at_ms, j, n, s

if TYPE_CHECKING:
    from ..jobs.vocabulary import CallbackSlot, PendingJob

# The highest progress value sent for a token: "progressSent:" and the token as JSON.
PROGRESS_SENT = "progressSent:"
_ACTIVE = {":working": {"S": "working"}, ":input_required": {"S": "input_required"}}
_IS_ACTIVE = "#status IN (:working, :input_required)"


def _t(ms: int) -> dict[str, str]:
    return {"S": iso_from_ms(ms)}


def input_requests_attribute(requests: dict[str, Any]) -> dict[str, Any]:
    """The DynamoDB value for ``inputRequests``: one JSON string per question key, so
    answers can be matched and removed key by key with conditional updates."""
    return {"M": {key: j(req) for key, req in requests.items()}}


OWNER_INDEX = "byOwner"
ACTIVE_INDEX = "byActive"
# What record_from_item needs for a task's lifecycle, without its payloads.
_LIFECYCLE_ATTRIBUTES = (
    "taskId",
    "ownerId",
    "tool",
    "status",
    "createdAt",
    "lastUpdatedAt",
    "ttlMs",
    "retentionMs",
    "pollIntervalMs",
    "expiresAt",
    "statusMessage",
    "outcome",
    "historyEvents",
    "executionArn",
    "watchedUntil",
    # What a task waits on: the sweeper stops it with the task.
    "job",
)


def _alive_values(alive: Expiry) -> dict[str, Any]:
    return {":exp": expires_at(alive.expires_at_ms), ":ttl": n(alive.ttl_ms)}


_KEEP_ALIVE = "expiresAt = :exp, ttlMs = :ttl"
# What every write that changes a task's status adds (the state machine's AwaitInput and
# RecordFailure too): rows written before the counter existed count on from zero.
_NEXT_VERSION = " ADD rowVersion :one"
_ONE = {":one": n(1)}


def _counting(expression: str, history_events: int) -> tuple[str, dict[str, Any]]:
    """``expression`` that also adds ``history_events`` to the task's count, in the same write."""
    if history_events <= 0:
        return expression, {}
    return f"{expression} ADD historyEvents :events", {":events": n(history_events)}


def _encode_cursor(key: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(dumps(key).encode()).decode()


def _decode_cursor(cursor: str, owner: str) -> dict[str, Any]:
    if len(cursor) > 2048:
        raise ValueError("malformed cursor")
    try:
        key = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (binascii.Error, ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ValueError("malformed cursor") from exc
    expected = {"taskId", "ownerId", "createdAt"}
    if (
        not isinstance(key, dict)
        or set(key) != expected
        or not all(isinstance(v, dict) and isinstance(v.get("S"), str) and len(v) == 1 for v in key.values())
    ):
        raise ValueError("malformed cursor")
    if key["ownerId"]["S"] != owner:
        # A cursor is only good for the owner it was issued to.
        raise ValueError("cursor belongs to another caller")
    return key


def _pending_job(raw: Any) -> PendingJob:
    # The jobs' vocabulary with the first row that waits on a job: most cold starts read none.
    from ..jobs.vocabulary import PendingJob

    return PendingJob.from_json(raw)


def record_from_item(item: dict[str, Any]) -> TaskRecord:
    def text(name: str) -> str | None:
        v = item.get(name)
        return v["S"] if v else None

    def number(name: str) -> int:
        return int(item[name]["N"])

    def json_map(name: str) -> dict[str, Any]:
        v = item.get(name)
        return {k: json.loads(x["S"]) for k, x in v["M"].items()} if v else {}

    def json_value(name: str) -> Any:
        raw = text(name)
        return json.loads(raw) if raw is not None else None

    outcome = text("outcome")
    job = json_value("job")
    callback = None
    if "callbackHash" in item:
        from ..jobs.vocabulary import CallbackSlot  # only a row that waits on a callback has one

        callback = CallbackSlot(
            secret_hash=item["callbackHash"]["S"],
            expires_at_ms=int(item["callbackExpiresAt"]["N"]),
            key=item["callbackKey"]["S"],
            token=text("callbackToken"),
        )
    return TaskRecord(
        task_id=item["taskId"]["S"],
        owner=item["ownerId"]["S"],
        tool=item["tool"]["S"],
        arguments=json_value("arguments") or {},
        status=TaskStatus(item["status"]["S"]),
        created_at_ms=ms_from_iso(item["createdAt"]["S"]),
        last_updated_at_ms=ms_from_iso(item["lastUpdatedAt"]["S"]),
        ttl_ms=number("ttlMs"),
        poll_interval_ms=number("pollIntervalMs"),
        expires_at_ms=expires_at_ms(item),
        retention_ms=int(item["retentionMs"]["N"]) if "retentionMs" in item else number("ttlMs"),
        status_message=text("statusMessage"),
        input_requests=json_map("inputRequests"),
        input_responses=json_map("inputResponses"),
        result=json_value("result"),
        error=json_value("error"),
        outcome=Outcome(outcome) if outcome else None,
        task_token=text("taskToken"),
        checkpoint=json_value("checkpoint"),
        progress_token=json_value("progressToken"),
        result_ref=text("resultRef"),
        client_capabilities=json_value("clientCapabilities"),
        history_events=int(item["historyEvents"]["N"]) if "historyEvents" in item else 0,
        execution_arn=text("executionArn"),
        progress=Progress.from_json(json_value("progress")) if "progress" in item else None,
        progress_count=int(item["progressCount"]["N"]) if "progressCount" in item else 0,
        log_lines=tuple(LogLine(x["level"], x["data"]) for x in json_value("logLines") or []),
        log_count=int(item["logCount"]["N"]) if "logCount" in item else 0,
        log_level=text("logLevel"),
        watched_until_ms=int(item["watchedUntil"]["N"]) if "watchedUntil" in item else None,
        call_round=int(item["callRound"]["N"]) if "callRound" in item else 0,
        job=_pending_job(job) if job else None,
        job_outcomes=json_map("jobOutcomes"),
        job_checked_at_ms=int(item["jobCheckedAt"]["N"]) if "jobCheckedAt" in item else None,
        callback=callback,
    )


class DynamoDBTaskStore:
    def __init__(self, client: Callable[[], Any], table_name: str) -> None:
        # A client factory, asked at every call: a client rebuilt after a SnapStart
        # restore (aws_clients.refresh) is the one used from then on.
        self._client = client
        self._table = table_name

    @property
    def _ddb(self) -> Any:
        return self._client()

    def _key(self, task_id: str) -> dict[str, Any]:
        return {"taskId": s(task_id)}

    def _update(self, task_id: str, **kwargs: Any) -> dict[str, Any]:
        """A conditional write of the row; TransitionRejected when its condition failed."""
        done = conditional(self._ddb.update_item, TableName=self._table, Key=self._key(task_id), **kwargs)
        if done is None:
            raise TransitionRejected(task_id)
        return done  # type: ignore[no-any-return]

    def create(self, record: TaskRecord) -> None:
        item: dict[str, Any] = {
            "taskId": s(record.task_id),
            "ownerId": s(record.owner),
            "tool": s(record.tool),
            "arguments": j(record.arguments),
            "status": s(record.status.value),
            "createdAt": _t(record.created_at_ms),
            "lastUpdatedAt": _t(record.last_updated_at_ms),
            "ttlMs": n(record.ttl_ms),
            "retentionMs": n(record.retention_ms),
            "pollIntervalMs": n(record.poll_interval_ms),
            "expiresAt": expires_at(record.expires_at_ms),
            "activeOwner": s(record.owner),
            "inputResponses": {"M": {k: j(v) for k, v in record.input_responses.items()}},
            "answerBytes": n(map_size(record.input_responses)),
            "rowVersion": n(1),
        }
        if record.status_message:
            item["statusMessage"] = s(record.status_message)
        if record.progress_token is not None:
            item["progressToken"] = j(record.progress_token)
        if record.client_capabilities is not None:
            item["clientCapabilities"] = j(record.client_capabilities)
        if record.execution_arn:
            item["executionArn"] = s(record.execution_arn)
        if record.log_level is not None:
            item["logLevel"] = s(record.log_level)
        if record.watched_until_ms is not None:
            item["watchedUntil"] = n(record.watched_until_ms)
        written = conditional(
            self._ddb.put_item,
            TableName=self._table,
            Item=item,
            ConditionExpression="attribute_not_exists(taskId)",
        )
        if written is None:
            raise TaskAlreadyExists(record.task_id)

    def get(self, task_id: str, *, consistent: bool = True) -> TaskRecord | None:
        if not task_id or "#" in task_id:
            # Session and stream items share the table under "kind#id" keys; no
            # task id has a '#', so such a key can never read one as a task.
            return None
        with translated():
            resp = self._ddb.get_item(
                TableName=self._table, Key=self._key(task_id), ConsistentRead=consistent
            )
        item = resp.get("Item")
        return record_from_item(item) if item else None

    def list_for_owner(
        self, owner: str, *, limit: int, cursor: str | None
    ) -> tuple[list[TaskRecord], str | None]:
        query: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": OWNER_INDEX,
            "KeyConditionExpression": "ownerId = :owner",
            "ExpressionAttributeValues": {":owner": s(owner)},
            "ScanIndexForward": False,
            "Limit": limit,
        }
        if cursor is not None:
            query["ExclusiveStartKey"] = _decode_cursor(cursor, owner)
        with translated():
            page = self._ddb.query(**query)
        keys = [{"taskId": item["taskId"]} for item in page.get("Items", [])]
        records: dict[str, TaskRecord] = {}
        # The index holds keys only (status updates would otherwise be written
        # twice); the page's rows come from the table, strongly consistent.
        while keys:
            with translated():
                resp = self._ddb.batch_get_item(
                    RequestItems={self._table: {"Keys": keys, "ConsistentRead": True}}
                )
            for item in resp.get("Responses", {}).get(self._table, []):
                records[item["taskId"]["S"]] = record_from_item(item)
            keys = resp.get("UnprocessedKeys", {}).get(self._table, {}).get("Keys", [])
        ordered = [records[i["taskId"]["S"]] for i in page.get("Items", []) if i["taskId"]["S"] in records]
        last = page.get("LastEvaluatedKey")
        return ordered, _encode_cursor(last) if last else None

    def report_progress(
        self, task_id: str, report: ProgressReport, now_ms: int, alive: Expiry, *, check_caller: bool = True
    ) -> None:
        sets = [
            "statusMessage = :m",
            "progressCount = :pc",
            "logCount = :lc",
            "lastUpdatedAt = :now",
            _KEEP_ALIVE,
        ]
        values: dict[str, Any] = {
            ":m": s(report.message),
            ":pc": n(report.progress_count),
            ":lc": n(report.log_count),
            ":now": _t(now_ms),
            ":working": s("working"),
            **_alive_values(alive),
        }
        removes = []
        if report.progress is not None:
            sets.append("progress = :p")
            values[":p"] = j(report.progress.to_json())
        if report.log_lines:
            sets.append("logLines = :ll")
            values[":ll"] = j([line.to_json() for line in report.log_lines])
        else:
            removes.append("logLines")
        condition = "#status = :working"
        if check_caller:
            # The cooperative check of a watched task: its caller must still be expected.
            condition += " AND (attribute_not_exists(watchedUntil) OR watchedUntil > :nowms)"
            values[":nowms"] = n(now_ms)
        self._update(
            task_id,
            UpdateExpression="SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else ""),
            ConditionExpression=condition,
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues=values,
        )

    def claim_progress(self, task_id: str, token: str | int, value: float) -> bool:
        if not math.isfinite(value):
            return False  # no number a client could be sent
        number = int(value) if value == int(value) else value
        done = conditional(
            self._ddb.update_item,
            TableName=self._table,
            Key=self._key(task_id),
            UpdateExpression="SET #sent = :value",
            # One attribute per token (a task has one, or one per round of a plain call).
            ConditionExpression="attribute_exists(taskId) AND (attribute_not_exists(#sent) OR #sent < :value)",
            ExpressionAttributeNames={"#sent": PROGRESS_SENT + progress_key(token)},
            ExpressionAttributeValues={":value": {"N": str(number)}},
        )
        return done is not None

    def watch(self, task_id: str, until_ms: int | None) -> None:
        values: dict[str, Any] = {**_ACTIVE}
        if until_ms is None:
            expression = "REMOVE watchedUntil"
        else:
            expression = "SET watchedUntil = :until"
            values[":until"] = n(until_ms)
        self._update(
            task_id,
            UpdateExpression=expression,
            ConditionExpression=_IS_ACTIVE,
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues=values,
        )

    def take_round(self, task_id: str, owner: str, number: int, watch_until_ms: int | None) -> TaskRecord:
        values: dict[str, Any] = {":owner": s(owner), ":round": n(number)}
        expression = "SET callRound = :round"
        if watch_until_ms is not None:
            expression += ", watchedUntil = :until"
            values[":until"] = n(watch_until_ms)
        resp = self._update(
            task_id,
            UpdateExpression=expression,
            # A round is taken once: the write that takes it decides, never a read before it.
            ConditionExpression="ownerId = :owner AND (attribute_not_exists(callRound) OR callRound < :round)",
            ExpressionAttributeValues=values,
            ReturnValues="ALL_NEW",
        )
        return record_from_item(resp["Attributes"])

    def count_active(self, owner: str, up_to: int) -> int:
        """How many live tasks the owner has, counting no further than ``up_to``."""
        count = 0
        query: dict[str, Any] = {
            "TableName": self._table,
            "IndexName": ACTIVE_INDEX,
            "KeyConditionExpression": "activeOwner = :owner",
            "ExpressionAttributeValues": {":owner": s(owner)},
            "Select": "COUNT",
            "Limit": up_to,
        }
        while count < up_to:
            with translated():
                page = self._ddb.query(**query)
            count += int(page.get("Count", 0))
            if "LastEvaluatedKey" not in page:
                break
            query["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return count

    def active_pages(self) -> Iterator[list[str]]:
        """The active index a Scan page at a time (up to 1 MB of keys: thousands of ids)."""
        scan: dict[str, Any] = {"TableName": self._table, "IndexName": ACTIVE_INDEX}
        while True:
            with translated():
                page = self._ddb.scan(**scan)
            yield [item["taskId"]["S"] for item in page.get("Items", [])]
            if "LastEvaluatedKey" not in page:
                return
            scan["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def get_many(
        self, task_ids: list[str], *, consistent: bool = True, whole: bool = False
    ) -> list[TaskRecord]:
        """One BatchGetItem (and its unprocessed keys again, with backoff) for up to 100
        tasks, reading only what a task's lifecycle needs unless ``whole``: a row may hold
        256 KB of arguments, which the sweeper never looks at."""
        if len(task_ids) > 100:
            raise ValueError("at most 100 tasks per read")
        keys = [self._key(task_id) for task_id in dict.fromkeys(task_ids) if task_id and "#" not in task_id]
        request: dict[str, Any] = {"ConsistentRead": consistent}
        if not whole:
            names = {f"#a{i}": name for i, name in enumerate(_LIFECYCLE_ATTRIBUTES)}
            request.update(ProjectionExpression=", ".join(names), ExpressionAttributeNames=names)
        records: list[TaskRecord] = []
        for attempt in range(8):
            if not keys:
                break
            if attempt:
                time.sleep(min(2.0, 0.05 * 2**attempt))
            with translated():
                resp = self._ddb.batch_get_item(RequestItems={self._table: {"Keys": keys, **request}})
            records += [record_from_item(item) for item in resp.get("Responses", {}).get(self._table, [])]
            keys = resp.get("UnprocessedKeys", {}).get(self._table, {}).get("Keys", [])
        if keys:
            raise ServiceUnavailable(f"DynamoDB left {len(keys)} keys unprocessed")
        return records

    def ask(
        self, task_id: str, requests: dict[str, Any], now_ms: int, alive: Expiry, *, history_events: int = 0
    ) -> None:
        """Store the questions while still working; the state machine's park write
        then flips the status and adds the task token."""
        expression, counted = _counting(
            f"SET inputRequests = :requests, lastUpdatedAt = :now, {_KEEP_ALIVE}", history_events
        )
        self._update(
            task_id,
            UpdateExpression=expression,
            ConditionExpression="#status = :working",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={
                ":requests": input_requests_attribute(requests),
                ":now": _t(now_ms),
                ":working": s("working"),
                **_alive_values(alive),
                **counted,
            },
        )

    def save_checkpoint(
        self, task_id: str, state: Any, now_ms: int, alive: Expiry, *, history_events: int = 0
    ) -> None:
        expression, counted = _counting(
            f"SET checkpoint = :c, lastUpdatedAt = :now, {_KEEP_ALIVE}", history_events
        )
        self._update(
            task_id,
            UpdateExpression=expression,
            ConditionExpression=_IS_ACTIVE,
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={
                ":c": j(state),
                ":now": _t(now_ms),
                **_ACTIVE,
                **_alive_values(alive),
                **counted,
            },
        )

    def finish(
        self,
        task_id: str,
        *,
        status: TaskStatus,
        outcome: Outcome,
        result: dict[str, Any] | None,
        error: dict[str, Any] | None,
        message: str | None,
        now_ms: int,
        alive: Expiry,
        result_ref: str | None = None,
    ) -> bool:
        sets = ["#status = :status", "outcome = :outcome", "lastUpdatedAt = :now", _KEEP_ALIVE]
        names = {"#status": "status"}
        values: dict[str, Any] = {
            ":status": s(status.value),
            ":outcome": s(outcome.value),
            ":now": _t(now_ms),
            **_ACTIVE,
            **_alive_values(alive),
        }
        if result_ref is not None:
            sets.append("resultRef = :ref")
            values[":ref"] = s(result_ref)
        if result is not None:
            sets.append("#result = :result")
            names["#result"] = "result"
            values[":result"] = j(result)
        if error is not None:
            sets.append("#error = :error")
            names["#error"] = "error"
            values[":error"] = j(error)
        if message is not None:
            sets.append("statusMessage = :m")
            values[":m"] = s(message)
        try:
            self._update(
                task_id,
                UpdateExpression="SET "
                + ", ".join(sets)
                + " REMOVE taskToken, inputRequests, activeOwner, callbackToken"
                + _NEXT_VERSION,
                ConditionExpression=_IS_ACTIVE,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues={**values, **_ONE},
            )
        except TransitionRejected:
            return False
        return True

    def answer_inputs(
        self,
        task_id: str,
        responses: dict[str, Any],
        *,
        task_token: str,
        now_ms: int,
        alive: Expiry,
        max_answer_bytes: int,
        likely_last: bool = False,
    ) -> bool:
        """Two writes could record these answers, and DynamoDB's conditions pick one:
        the last answer (every answered key outstanding and nothing else left: it
        resumes) or a partial one (other questions stay outstanding). At most one of
        the two can match the item as it is, so whichever answers arrive together,
        exactly one write sees no question left and resumes. The caller's guess only
        orders the attempts."""
        mine = map_size(responses)
        if mine > max_answer_bytes:
            raise TransitionRejected(task_id)
        names: dict[str, str] = {"#status": "status"}
        values: dict[str, Any] = {
            ":input_required": s("input_required"),
            ":token": s(task_token),
            ":now": _t(now_ms),
            ":n": n(len(responses)),
            ":mine": n(mine),
            ":room": n(max_answer_bytes - mine),
            ":zero": n(0),
            **_alive_values(alive),
        }
        sets = [
            "lastUpdatedAt = :now",
            _KEEP_ALIVE,
            "answerBytes = if_not_exists(answerBytes, :zero) + :mine",
        ]
        conditions = [
            "#status = :input_required",
            "taskToken = :token",
            # Every answer the task holds stays within its bound, decided by the write
            # (rows written before the counter existed start from zero).
            "(attribute_not_exists(answerBytes) OR answerBytes <= :room)",
        ]
        answered: list[str] = []
        for i, (key, answer) in enumerate(responses.items()):
            names[f"#k{i}"] = key
            values[f":v{i}"] = j(answer)
            sets.append(f"inputResponses.#k{i} = :v{i}")
            conditions.append(f"attribute_exists(inputRequests.#k{i})")
            answered.append(f"inputRequests.#k{i}")
        last = {
            "UpdateExpression": "SET "
            + ", ".join([*sets, "#status = :working", "statusMessage = :resumed"])
            + " REMOVE taskToken, inputRequests"
            + _NEXT_VERSION,
            "ConditionExpression": " AND ".join([*conditions, "size(inputRequests) = :n"]),
            "ExpressionAttributeValues": {
                **values,
                **_ONE,
                ":working": s("working"),
                ":resumed": s("Resuming with the client's answers."),
            },
        }
        partial = {
            "UpdateExpression": "SET " + ", ".join(sets) + " REMOVE " + ", ".join(answered),
            "ConditionExpression": " AND ".join([*conditions, "size(inputRequests) > :n"]),
            "ExpressionAttributeValues": values,
        }
        attempts = [(True, last), (False, partial)] if likely_last else [(False, partial), (True, last)]
        for resumes, write in attempts:
            try:
                self._update(task_id, ExpressionAttributeNames=names, **write)
            except TransitionRejected:
                continue
            return resumes
        raise TransitionRejected(task_id)

    def cancel(self, task_id: str, message: str, now_ms: int, alive: Expiry) -> TaskRecord:
        resp = self._update(
            task_id,
            UpdateExpression=f"SET #status = :cancelled, statusMessage = :m, lastUpdatedAt = :now, {_KEEP_ALIVE} "
            "REMOVE taskToken, inputRequests, activeOwner, callbackToken" + _NEXT_VERSION,
            ConditionExpression=_IS_ACTIVE,
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={
                **_ONE,
                ":cancelled": s("cancelled"),
                ":m": s(message),
                ":now": _t(now_ms),
                **_ACTIVE,
                **_alive_values(alive),
            },
            ReturnValues="ALL_NEW",
        )
        return record_from_item(resp["Attributes"])

    def hand_off(
        self,
        task_id: str,
        job: PendingJob,
        request: dict[str, Any],
        now_ms: int,
        alive: Expiry,
        *,
        callback: CallbackSlot | None = None,
        history_events: int = 0,
    ) -> None:
        sets = [
            "jobKey = :key",
            "job = :job",
            "jobRequest = :request",
            # RecordJobOutcome (the state machine) sets one key of this map.
            "jobOutcomes = if_not_exists(jobOutcomes, :none)",
            "statusMessage = :m",
            "lastUpdatedAt = :now",
            _KEEP_ALIVE,
        ]
        values: dict[str, Any] = {
            ":key": s(job.key),
            ":job": j(job.to_json()),
            ":request": j(request),
            ":none": {"M": {}},
            ":m": s(job.waiting_message()),
            ":now": _t(now_ms),
            ":working": s("working"),
            **_alive_values(alive),
        }
        if callback is not None:
            sets += ["callbackHash = :hash", "callbackKey = :key", "callbackExpiresAt = :cexp"]
            values[":hash"] = s(callback.secret_hash)
            values[":cexp"] = n(callback.expires_at_ms)
        expression, counted = _counting(
            "SET " + ", ".join(sets) + " REMOVE jobCheckedAt, callbackToken", history_events
        )
        self._update(
            task_id,
            UpdateExpression=expression,
            ConditionExpression="#status = :working",
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={**values, **counted},
        )

    @staticmethod
    def _callback_condition(
        key: str, secret_hash: str | None, now_ms: int
    ) -> tuple[list[str], dict[str, Any]]:
        if secret_hash is None:
            return [], {}
        return (
            ["callbackHash = :hash", "callbackKey = :key", "callbackExpiresAt > :nowms"],
            {":hash": s(secret_hash), ":nowms": n(now_ms)},
        )

    def record_job_outcome(
        self,
        task_id: str,
        key: str,
        outcome: dict[str, Any],
        now_ms: int,
        alive: Expiry,
        *,
        secret_hash: str | None = None,
    ) -> str | None:
        extra, extra_values = self._callback_condition(key, secret_hash, now_ms)
        sets = ["jobOutcomes.#k = :o", "statusMessage = :m", "lastUpdatedAt = :now", _KEEP_ALIVE]
        if secret_hash is not None:
            # Single use: the hash stays, so a late caller is told the URL was used.
            sets.append("callbackExpiresAt = :zero")
            extra_values[":zero"] = n(0)
        # The state machine's RecordJobOutcome removes jobRequest too; a callback may
        # overtake the LoadJob that reads it, so a delivery leaves it (a callback's is small).
        done = self._update(
            task_id,
            UpdateExpression="SET " + ", ".join(sets) + " REMOVE jobKey, job, jobCheckedAt, callbackToken",
            ConditionExpression=" AND ".join(
                ["#status = :working", "jobKey = :key", "attribute_not_exists(jobOutcomes.#k)", *extra]
            ),
            ExpressionAttributeNames={"#status": "status", "#k": key},
            ExpressionAttributeValues={
                ":o": j(outcome),
                ":m": s("Resuming with the job's outcome."),
                ":now": _t(now_ms),
                ":working": s("working"),
                ":key": s(key),
                **_alive_values(alive),
                **extra_values,
            },
            ReturnValues="UPDATED_OLD",
        )
        token = done.get("Attributes", {}).get("callbackToken")
        return token["S"] if token else None

    def note_job_status(
        self,
        task_id: str,
        key: str,
        message: str,
        now_ms: int,
        alive: Expiry,
        *,
        checked_before_ms: int | None = None,
        secret_hash: str | None = None,
        report: ProgressReport | None = None,
    ) -> None:
        conditions = ["#status = :working", "jobKey = :key"]
        extra, values = self._callback_condition(key, secret_hash, now_ms)
        conditions += extra
        if checked_before_ms is not None:
            conditions.append("(attribute_not_exists(jobCheckedAt) OR jobCheckedAt <= :before)")
            values[":before"] = n(checked_before_ms)
        sets = f"SET statusMessage = :m, jobCheckedAt = :checked, lastUpdatedAt = :now, {_KEEP_ALIVE}"
        if report is not None:
            sets += ", progressCount = :pc, logCount = :lc"
            values[":pc"], values[":lc"] = n(report.progress_count), n(report.log_count)
            if report.progress is not None:
                sets += ", progress = :p"
                values[":p"] = j(report.progress.to_json())
            if report.log_lines:
                sets += ", logLines = :ll"
                values[":ll"] = j([line.to_json() for line in report.log_lines])
        self._update(
            task_id,
            UpdateExpression=sets,
            ConditionExpression=" AND ".join(conditions),
            ExpressionAttributeNames={"#status": "status"},
            ExpressionAttributeValues={
                ":m": s(message),
                ":checked": n(now_ms),
                ":now": _t(now_ms),
                ":working": s("working"),
                ":key": s(key),
                **_alive_values(alive),
                **values,
            },
        )
