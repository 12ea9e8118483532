"""A hidden task's rounds, for a caller that answers in rounds of its own call.

A 2026-07-28 client that did not opt in to tasks may not be given one, and this era sends
no requests on a response's stream: its way to be asked is the multi-round ``tools/call``
(SEP-2322). A result with ``resultType: "input_required"`` carries the questions and a
sealed ``requestState``; the client asks its person and calls again with ``inputResponses``
and the same state. A plain call whose tool runs as a hidden task (held on a front that
streams, or round by round on one that buffers) is carried on so:

- when the task asks, the round ends with its questions and a state that names the task, the
  round, and the parking the questions belong to (``TaskRecord.parking``); the next call with
  that state answers them (never a newer question that reuses a key) and picks the task up
  where it is;
- when the round's time is up and the tool still works (no handle can stand in for its
  result), the round ends asking nothing: the client calls again at once (mcp, Strands and
  PydanticAI wait 50-250 ms) and is held again;
- the task's row takes each round once (``TaskService.take_round``, a conditional write): a
  state replayed, answered twice or echoed on another call is refused and changes nothing
  (another tool or other arguments are refused by the seal, another owner by the seal and
  the row);
- clients give up after ``CLIENT_MAX_ROUNDS`` input_required results in one call: the round
  that would be one more ends the call with an error that says how to call the tool as a
  task, and stops the task (nobody could ever have its result);
- a task waiting on a person's answer is not a hang-up: its caller is expected back only
  when the question's state expires (REQUEST_STATE_TTL_SECONDS), however long the person
  thinks until then.

A handle's ``taskgate_task_result`` (handle_tools.py) asks a task's questions the same way,
so the host's elicitation handler asks the person, not the model.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any, NamedTuple

from ...domain.errors import TaskgateError, TransitionRejected
from ...domain.model import TaskRecord, TaskStatus
from ..wire.exchange import Call
from ..wire.request_state import Carried, TaskRound, refused
from .caller import Caller
from .plan import rounds_exhausted
from .policy import CLIENT_MAX_ROUNDS, Front
from .services import Services

# A parked question's caller is expected back this much after its state expires: the
# answer's own request, and clocks that differ a little.
THINK_GRACE_MS = 60_000


def input_required(requests: dict[str, Any], request_state: str | None) -> dict[str, Any]:
    """An ``InputRequiredResult``: the questions (none: a round that only carries the call
    on), and the sealed state the next round echoes."""
    result: dict[str, Any] = {"resultType": "input_required"}
    if requests:
        result["inputRequests"] = requests
    if request_state is not None:
        result["requestState"] = request_state
    return result


def can_answer(caller: Caller, record: TaskRecord) -> bool:
    """Whether ``caller`` declared what every one of the task's questions needs."""
    return bool(record.input_requests) and all(
        caller.capabilities.allows(request) for request in record.input_requests.values()
    )


class Rounds(NamedTuple):
    """The rounds of one plain call answered by a hidden task: whose call, on which
    request (the tool and its arguments, sealed in every state), how many ``input_required``
    results it has had (``had``), and how long its caller may be away between rounds
    (``watch_ms``, the hang-up window; None: the task is not watched, as a handle's)."""

    services: Services
    owner: str
    method: str
    target: str
    arguments: dict[str, Any]
    front: Front
    had: int = 0
    watch_ms: int | None = None
    # When a round's time is up with the tool still working, the call is handed to the model
    # as a task handle (a tool one can stand in for) rather than carried on.
    hands_over: bool = False

    @property
    def left(self) -> bool:
        """Whether the caller takes another ``input_required`` result in this call."""
        return self.had < CLIENT_MAX_ROUNDS

    def after(self, round_: TaskRound) -> Rounds:
        """These rounds as they stand once ``round_`` came back."""
        return self._replace(had=round_.count)

    def asking(self, record: TaskRecord) -> dict[str, Any] | None:
        """The round that asks the task's questions, or None when the caller takes no more.
        The task's caller is expected back when the question's state expires (think time)."""
        if not self.left or record.parking is None:
            return None
        ttl_ms = self.services.request_states.ttl_ms
        state = self._seal(record, question=record.parking)
        if self.watch_ms is not None:
            try:
                self.services.tasks.watch(record.task_id, ttl_ms + THINK_GRACE_MS)
            except TaskgateError:
                return None  # it ended meanwhile: the caller gets how it ended instead
        return input_required(record.input_requests, state)

    def carrying_on(self, record: TaskRecord) -> dict[str, Any] | None:
        """The round that asks nothing and only carries the call on, or None when the caller
        takes no more."""
        if not self.left:
            return None
        return input_required({}, self._seal(record, question=None))

    def _seal(self, record: TaskRecord, *, question: str | None) -> str:
        round_ = TaskRound(record.task_id, record.call_round + 1, self.had + 1, question)
        return self.services.request_states.seal(
            Carried({}, None, round_),
            owner=self.owner,
            method=self.method,
            target=self.target,
            arguments=self.arguments,
        )

    def resume(self, round_: TaskRound, answers: Mapping[str, Any]) -> TaskRecord:
        """The task ``round_`` names, its round taken (once: a state used before is refused,
        and nothing changes) and its question answered with ``answers``."""
        tasks = self.services.tasks
        try:
            record = tasks.take_round(self.owner, round_.task_id, round_.number, self.watch_ms)
        except TransitionRejected:
            raise refused() from None
        if round_.question is not None and record.parking == round_.question and answers:
            tasks.submit_input(self.owner, record.task_id, dict(answers), parking=round_.question)
            self.services.audit(
                "input_submitted", {"taskId": record.task_id, "owner": self.owner, "keys": sorted(answers)}
            )
            record = tasks.get(self.owner, record.task_id)
        return record

    def stop(self, record: TaskRecord) -> str:
        """Why the call ends when its caller takes no more rounds; its task stops with it
        (nobody could ever have its result)."""
        with contextlib.suppress(TaskgateError):  # it ended meanwhile
            self.services.tasks.cancel(self.owner, record.task_id)
        asking = record.status is TaskStatus.INPUT_REQUIRED
        return rounds_exhausted(record.tool, self.front, asking=asking)


def rounds_of(
    services: Services, call: Call, target: str, arguments: dict[str, Any], caller: Caller
) -> Rounds:
    """The rounds of a call that has had none yet."""
    return Rounds(services, call.owner, call.method, target, arguments, caller.front)
