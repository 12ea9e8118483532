"""The bounds the task lifecycle enforces. Built from ``Settings`` (the one place
the configurable defaults live) by the composition root.

A task is one DynamoDB item, and an item holds at most 400 KB. Every field a
client or a tool can grow has its own bound here, and a write that would take
the row as a whole past ``MAX_ROW_BYTES`` is refused before it is sent, the way
its field's bound refuses it: a client gets -32602 with ``data.limit`` and
nothing is stored; a tool gets a clear failure it can act on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..text import cut
from .errors import PayloadTooLarge
from .model import TaskRecord

# DynamoDB's item limit is 400 KB (409,600 bytes, attribute names included). The
# variable fields below may take MAX_ROW_BYTES together; ROW_FIXED_BYTES covers
# the rest (attribute names, ids, timestamps, a task token of up to 2 KB).
MAX_ROW_BYTES = 400_000
ROW_FIXED_BYTES = 6_144
# A JSON-RPC request id or progress token that taskgate keeps (2025-11-25: in the
# task row for the task's life, in a stream's log for its replays).
MAX_STORED_ID_BYTES = 1_024
# Longer progress messages are cut (with an ellipsis) rather than refused: a
# progress report never fails a task.
MAX_STATUS_MESSAGE_BYTES = 2_048
# The questions a tool asks in one round (their keys and requests, as stored).
MAX_QUESTIONS_BYTES = 65_536
# A tool's JSON-RPC error as stored: past it, ``data`` is dropped and the message cut.
MAX_ERROR_BYTES = 16_384
# What the state machine is handed to start a job (jobs/vocabulary.py: its parameters, a
# child execution's input). Step Functions carries at most 256 KB of state, which the
# job's output shares on its way back.
MAX_JOB_REQUEST_BYTES = 65_536
# A pending job's descriptor and callback slot, as the row keeps them.
JOB_FIXED_BYTES = 3_072
# A synchronous Lambda request or response is at most 6 MB, counted as the JSON the event or
# the handler's return value is sent as. A request body, or a response body, is a string in
# that JSON, so each of its quotes and backslashes is escaped once more: a body of N bytes
# takes up to 2N (the runtime keeps non-ASCII as UTF-8; a result part's text, a JSON string
# in the body, is escaped twice but is half a result). Less room for everything else (headers,
# the event's request context, the JSON-RPC and SSE framing) than this, halved, is the
# largest request body or delivered result (MaxBodyBytes, MaxResultResponseBytes) allowed.
LAMBDA_PAYLOAD_BYTES = 6 * 1024 * 1024
PAYLOAD_FRAMING_BYTES = 64 * 1024
MAX_PAYLOAD_BODY_BYTES = (LAMBDA_PAYLOAD_BYTES - PAYLOAD_FRAMING_BYTES) // 2


def json_size(value: Any) -> int:
    """Bytes of ``value`` as it is stored: compact JSON, UTF-8, no ASCII escaping."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def map_size(entries: Mapping[str, Any]) -> int:
    """Bytes of a map stored one JSON value per key (questions, answers)."""
    return sum(len(key.encode()) + json_size(value) for key, value in entries.items())


def row_size(record: TaskRecord, *, arguments_bytes: int | None = None) -> int:
    """What the row's variable fields take, and what it holds besides them
    (``arguments_bytes``: the arguments' size, when it is known already)."""
    return (
        ROW_FIXED_BYTES
        + (json_size(record.arguments) if arguments_bytes is None else arguments_bytes)
        + map_size(record.input_requests)
        + map_size(record.input_responses)
        + (json_size(record.checkpoint) if record.checkpoint is not None else 0)
        + (len(record.status_message.encode()) if record.status_message else 0)
        + (json_size(record.progress_token) if record.progress_token is not None else 0)
        + (json_size(record.client_capabilities) if record.client_capabilities is not None else 0)
        + (json_size(record.result) if record.result is not None else 0)
        + (json_size(record.error) if record.error is not None else 0)
        + (json_size(record.progress.to_json()) if record.progress is not None else 0)
        + (json_size([line.to_json() for line in record.log_lines]) if record.log_lines else 0)
        + map_size(record.job_outcomes)
        + (JOB_FIXED_BYTES if record.job is not None else 0)
    )


def bounded_error(error: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC error as it may be stored: within MAX_ERROR_BYTES, its ``data``
    dropped and its message cut when it is not."""
    if json_size(error) <= MAX_ERROR_BYTES:
        return error
    return {"code": error.get("code"), "message": cut(str(error.get("message", "")), MAX_ERROR_BYTES // 2)}


@dataclass(frozen=True)
class Limits:
    """The bounds every task row and call is held to."""

    default_ttl_ms: int
    max_ttl_ms: int
    poll_interval_ms: int
    # 0: no limit.
    max_active_per_owner: int
    max_argument_bytes: int
    # Every answer a task holds, all rounds and paths (tasks/update, 2025
    # elicitation answers, answers carried by a 2026 tools/call) together.
    max_input_response_bytes: int
    # A tool's checkpoint state (``ctx.checkpoint``).
    max_checkpoint_bytes: int

    def effective_ttl(self, requested_ms: int | None) -> int:
        if requested_ms is None or requested_ms <= 0:
            return min(self.default_ttl_ms, self.max_ttl_ms)
        return min(requested_ms, self.max_ttl_ms)

    def check_arguments(self, arguments: dict[str, Any]) -> int:
        """Their size, if within the bound."""
        size = json_size(arguments)
        if size > self.max_argument_bytes:
            raise PayloadTooLarge("arguments", size, self.max_argument_bytes)
        return size

    def check_answers(self, answers: Mapping[str, Any]) -> None:
        """One request's answers, before anything is read."""
        size = map_size(answers)
        if size > self.max_input_response_bytes:
            raise PayloadTooLarge("inputResponses", size, self.max_input_response_bytes)

    def answer_room(self, record: TaskRecord) -> int:
        """How many bytes of answers ``record`` may hold in all: its bound, or less
        when the rest of the row leaves less."""
        rest = row_size(record) - map_size(record.input_responses)
        return max(0, min(self.max_input_response_bytes, MAX_ROW_BYTES - rest))

    def check_held_answers(self, record: TaskRecord, new: Mapping[str, Any]) -> int:
        """The answers ``record`` would hold with ``new`` added; raise PayloadTooLarge
        past ``answer_room``. Returns that room (the bound the write enforces)."""
        room = self.answer_room(record)
        size = map_size({**record.input_responses, **new})
        if size > room:
            raise PayloadTooLarge("The task's answers (all inputResponses together)", size, room)
        return room

    @staticmethod
    def check_row(record: TaskRecord, *, arguments_bytes: int | None = None) -> None:
        """A new row as a whole (each bound may be configured high enough that
        together they would not fit)."""
        size = row_size(record, arguments_bytes=arguments_bytes)
        if size > MAX_ROW_BYTES:
            raise PayloadTooLarge(
                "The task (arguments, answers and progress token together)", size, MAX_ROW_BYTES
            )

    @staticmethod
    def check_stored_id(what: str, value: Any) -> None:
        """A request id or progress token that will be stored."""
        if value is None:
            return
        size = json_size(value)
        if size > MAX_STORED_ID_BYTES:
            raise PayloadTooLarge(what, size, MAX_STORED_ID_BYTES)

    def checkpoint_room(self, record: TaskRecord) -> int:
        """How big ``record``'s checkpoint may be: its bound, or less when the rest of
        the row leaves less."""
        rest = row_size(record) - (json_size(record.checkpoint) if record.checkpoint is not None else 0)
        return max(0, min(self.max_checkpoint_bytes, MAX_ROW_BYTES - rest))

    @staticmethod
    def job_request_room(record: TaskRecord) -> int:
        """How big the request for a job ``record`` hands off may be."""
        rest = row_size(record) + (0 if record.job is not None else JOB_FIXED_BYTES)
        return max(0, min(MAX_JOB_REQUEST_BYTES, MAX_ROW_BYTES - rest))

    @staticmethod
    def questions_room(record: TaskRecord) -> int:
        rest = row_size(record) - map_size(record.input_requests)
        return max(0, min(MAX_QUESTIONS_BYTES, MAX_ROW_BYTES - rest))


@dataclass(frozen=True)
class WorkTimes:
    """How long a task's work may run, and how the work it waits on is watched."""

    # A task still running this long after it started fails (0: never).
    max_runtime_ms: int = 86_400_000
    # A task no execution is running for this long is failed by the sweeper.
    stale_after_ms: int = 300_000
    # A checkpoint with less time than this left in the invocation ends the step.
    yield_margin_ms: int = 60_000
    # How often reads of a task that waits on a job may ask the job's service for its status.
    job_status_interval_ms: int = 10_000
