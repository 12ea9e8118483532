"""The tool's only door to the outside: progress, questions, cancellation, checkpoints.

Asking works by replay. A tool that calls ``ask`` for an answer it does not have
yet stops there (``InputNeeded``); the worker parks the task, and once the
client answers, the tool runs again from the top with the answer available.
Work done before the question should be cheap or guarded by ``checkpoint``.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


class ToolError(Exception):
    """The tool ran and failed in its own terms: a result with ``isError: true``."""


class CheckpointTooLarge(ToolError):
    """Raised by ``ctx.checkpoint`` when the state would not fit in the task's row
    (``MAX_CHECKPOINT_BYTES``, or less when the row is nearly full): nothing was
    saved. Uncaught, the tool ends with an error result that says so; a tool can
    catch it and checkpoint less, keeping bulky state in its own storage."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"The checkpoint state is {size} bytes; the limit is {limit}. Nothing was saved: "
            "checkpoint less (keep bulky state in your own storage, keyed by ctx.task_id)."
        )
        self.size = size
        self.limit = limit


class ProtocolError(Exception):
    """The request itself failed: a JSON-RPC error, reported as a failed task."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_error(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


class InputNeeded(Exception):
    """Raised by ``ask``: these requests must be answered before the tool can go on."""

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        super().__init__(f"input needed: {', '.join(requests)}")
        self.requests = requests


class TaskCancelled(Exception):
    """The task was cancelled (or ended) under the tool; stop now."""


class TaskYield(Exception):
    """Raised by ``checkpoint`` when this invocation is nearly out of time: the step
    ends and the next one resumes the tool from the saved state."""


@dataclass(frozen=True)
class Elicit:
    """A form-mode elicitation: a message and a flat JSON schema of what to ask."""

    message: str
    properties: dict[str, Any]
    required: list[str] = field(default_factory=list)

    def to_request(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": self.properties}
        if self.required:
            schema["required"] = list(self.required)
        return {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": self.message, "requestedSchema": schema},
        }


@dataclass(frozen=True)
class Answer:
    """The client's reply to one ``Elicit``: ``action`` is accept, decline or cancel."""

    action: str
    content: dict[str, Any]

    @property
    def accepted(self) -> bool:
        return self.action == "accept"

    @classmethod
    def parse(cls, raw: Any) -> Answer:
        if isinstance(raw, dict):
            content = raw.get("content")
            return cls(
                action=str(raw.get("action", "accept")),
                content=content if isinstance(content, dict) else {},
            )
        return cls(action="accept", content={"value": raw})


class TaskControl(Protocol):
    """How the context reaches the task's durable state (the worker provides it)."""

    def progress(self, message: str) -> None: ...

    def is_cancelled(self) -> bool: ...

    def checkpoint(self, state: Any) -> None: ...


class _NoTask:
    """Control for a tool run inline (not as a task): nothing durable to report to."""

    def progress(self, message: str) -> None:
        return None

    def is_cancelled(self) -> bool:
        return False

    def checkpoint(self, state: Any) -> None:
        return None


class ToolContext:
    def __init__(
        self,
        *,
        task_id: str | None = None,
        answers: dict[str, Any] | None = None,
        state: Any = None,
        control: TaskControl | None = None,
        owner: str | None = None,
    ) -> None:
        self.task_id = task_id
        # Who called: the identity the task belongs to (None only outside a request).
        # Data a tool keeps between calls must be kept per owner.
        self.owner = owner
        self._scratch: Path | None = None
        self._answers = dict(answers or {})
        self._control: TaskControl = control or _NoTask()
        self.state = state
        self.stream_closed = False
        # Every question key asked in this run, answered or not.
        self.asked: set[str] = set()

    @property
    def is_task(self) -> bool:
        return self.task_id is not None

    @property
    def scratch_dir(self) -> Path:
        """A directory of this run's own (created on first use), removed when the step
        or the plain call ends, however it ends: for working files. It is never
        shared with another task or caller and never survives a step: keep what must
        in ``checkpoint`` or in your own storage, per ``owner``."""
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="taskgate-scratch-"))
        return self._scratch

    def close(self) -> None:
        """Remove the scratch directory (called by taskgate when the run ends)."""
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def progress(self, message: str) -> None:
        """Publish a status message; raises TaskCancelled if the task has ended."""
        self._control.progress(message)

    def cancelled(self) -> bool:
        return self._control.is_cancelled()

    def checkpoint(self, state: Any) -> None:
        """Persist ``state``: the next run of this tool (after a question, or in a fresh
        invocation when this one is nearly out of time) starts with it as ``ctx.state``.

        Work done before a checkpoint is never repeated, so a tool that checkpoints
        often can run for hours across invocations of at most 15 minutes each.
        """
        self._control.checkpoint(state)
        self.state = state

    def close_stream(self) -> None:
        """Ask the server to end the client's SSE stream before the result is sent
        (SEP-1699): the client reconnects with Last-Event-ID and gets the result from
        the stored event log. For long inline calls behind proxies that cut idle
        connections; a no-op where the answer is plain JSON."""
        self.stream_closed = True

    def ask(self, key: str, question: Elicit) -> Answer:
        """Ask one question. ``key`` must be unique over the task's life."""
        return self.ask_all({key: question})[key]

    def ask_all(self, questions: dict[str, Elicit]) -> dict[str, Answer]:
        """Ask several questions at once; all of them are pending together."""
        self.asked.update(questions)
        missing = {k: q.to_request() for k, q in questions.items() if k not in self._answers}
        if missing:
            raise InputNeeded(missing)
        return {k: Answer.parse(self._answers[k]) for k in questions}
