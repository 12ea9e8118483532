"""The tool's only door to the outside: progress, questions, cancellation, checkpoints.

Asking works by replay. A tool that calls ``ask`` for an answer it does not have
yet stops there (``InputNeeded``); the worker parks the task, and once the
client answers, the tool runs again from the top with the answer available.
Work done before the question should be cheap or guarded by ``checkpoint``.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .errors import CheckpointTooLarge as CheckpointTooLarge
from .errors import ProtocolError as ProtocolError  # re-exported: the context is where tools look
from .errors import ToolError as ToolError
from .input import (
    ElicitUrl,
    ListRoots,
    MissingCapability,
    Root,
    Sample,
    Sampled,
    check_elicit_answer,
    required_capability,
)
from .jobs import JobResult, read_result
from .peer import LOG_LEVELS, NO_PEER, Peer, at_least, python_level, tool_logger

if TYPE_CHECKING:
    from .jobs import Job, JobSpec

# A question of any kind; ``ask_all`` takes form and URL elicitations, ``gather`` all four.
Question = Any


# Scratch directories: ``<tmp>/taskgate-scratch-*``, each holding an exclusive lock on a
# file inside for as long as its run lives. A run that never reached ``close`` (a Lambda
# timeout, a crash, a killed server) leaves its directory unlocked, since the lock goes
# with the process; the next run to make a scratch directory on that machine removes it.
_SCRATCH_PREFIX = "taskgate-scratch-"
_IN_USE = ".in-use"


def _make_scratch() -> tuple[Path, int]:
    remove_abandoned_scratch()
    path = Path(tempfile.mkdtemp(prefix=_SCRATCH_PREFIX))
    # The lock file appears under its name already locked (a rename is atomic), so no
    # sweep ever finds it unlocked while its run lives.
    fd = os.open(path / f"{_IN_USE}.new", os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename(path / f"{_IN_USE}.new", path / _IN_USE)
    return path, fd


def remove_abandoned_scratch() -> list[Path]:
    """Remove the scratch directories whose run is gone (no process holds their lock);
    the ones removed. A run still going, in any process, holds its directory's lock; a
    directory without a lock file is not one this removes."""
    removed = []
    for path in Path(tempfile.gettempdir()).glob(_SCRATCH_PREFIX + "*"):
        try:
            fd = os.open(path / _IN_USE, os.O_RDWR)
        except OSError:
            continue  # being made, removed meanwhile, or not ours
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a live run's
        else:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
        finally:
            os.close(fd)
    return removed


class InputNeeded(Exception):
    """Raised by ``ask``: these requests must be answered before the tool can go on."""

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        super().__init__(f"input needed: {', '.join(requests)}")
        self.requests = requests


class TaskCancelled(Exception):
    """The task was cancelled (or ended) under the tool; stop now."""


class NeedsTask(Exception):
    """Raised by ``hand_off`` in a call run inline: only a task can wait on a job, so the
    caller runs the call again as a (hidden) task, where the tool runs from the top and
    its ``hand_off`` parks the task (protocol/calls/plan.py, ``decide_job``)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"needs a task to hand off: {key}")
        self.key = key


class HandedOff(Exception):
    """Raised by ``hand_off`` once the job is stored: the step ends, and the task waits
    for the job at no compute."""

    def __init__(self, key: str) -> None:
        super().__init__(f"handed off: {key}")
        self.key = key


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
    def parse(cls, raw: Any, key: str = "answer") -> Answer:
        """Read an ``ElicitResult``; anything else is the client's error (-32602)."""
        action, content = check_elicit_answer(key, raw)
        return cls(action=action, content=content)


class TaskControl(Protocol):
    """How the context reaches the task's durable state (the worker provides it)."""

    def progress(self, status: str, value: float, total: float | None, message: str | None) -> None:
        """``status`` is the task's statusMessage; the rest, the numbers the tool reported."""

    def log(self, level: str, data: Any) -> None: ...

    def is_cancelled(self) -> bool: ...

    def checkpoint(self, state: Any) -> None: ...

    def hand_off(self, key: str, spec: JobSpec) -> None:
        """Store the job for the state machine to start (and, for a callback, send its URL)."""


class Listener(Protocol):
    """Hears every progress report and log line a tool makes, as it makes it (before any of
    them is cut, filtered or left unwritten): ``taskgate.testing`` records them this way."""

    def progress(self, ctx: ToolContext, value: float, total: float | None, message: str | None) -> None: ...

    def log(self, ctx: ToolContext, level: str, message: str, data: Any) -> None: ...


class NoTaskControl:
    """Control for a tool run inline (not as a task): nothing durable to report to, and
    no job can be handed off here (nothing would wait for it): the call becomes a task."""

    def progress(self, status: str, value: float, total: float | None, message: str | None) -> None:
        return None

    def log(self, level: str, data: Any) -> None:
        return None

    def is_cancelled(self) -> bool:
        return False

    def checkpoint(self, state: Any) -> None:
        return None

    def hand_off(self, key: str, spec: JobSpec) -> None:
        raise NeedsTask(key)


class ToolContext:
    def __init__(
        self,
        *,
        task_id: str | None = None,
        answers: dict[str, Any] | None = None,
        state: Any = None,
        control: TaskControl | None = None,
        peer: Peer | None = None,
        owner: str | None = None,
        job_outcomes: dict[str, Any] | None = None,
    ) -> None:
        self.task_id = task_id
        # Who called: the identity the task belongs to (None only outside a request).
        # Data a tool keeps between calls must be kept per owner.
        self.owner = owner
        self._scratch: Path | None = None
        self._scratch_lock: int | None = None
        self._answers = dict(answers or {})
        self._control: TaskControl = control or NoTaskControl()
        self.state = state
        self.stream_closed = False
        # Every question key asked in this run, answered or not.
        self.asked: set[str] = set()
        self.peer = peer or NO_PEER
        self._progress = 0.0
        # The highest value sent on a plain call's own stream (each must be higher).
        self._notified: float | None = None
        self._auto_keys: dict[str, int] = {}
        self._job_outcomes = dict(job_outcomes or {})
        self.listeners: list[Listener] = []

    @property
    def is_task(self) -> bool:
        return self.task_id is not None

    @property
    def scratch_dir(self) -> Path:
        """A directory of this run's own (created on first use), removed when the step
        or the plain call ends, however it ends (a run killed before it could clean up
        leaves it to the next run on that machine, which removes it): for working files.
        It is never shared with another task or caller and never survives a step: keep
        what must in ``checkpoint`` or in your own storage, per ``owner``."""
        if self._scratch is None:
            self._scratch, self._scratch_lock = _make_scratch()
        return self._scratch

    def close(self) -> None:
        """Remove the scratch directory (called by taskgate when the run ends)."""
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
        if self._scratch_lock is not None:
            os.close(self._scratch_lock)
            self._scratch_lock = None

    def progress(
        self, message: str | None = None, *, progress: float | None = None, total: float | None = None
    ) -> None:
        """Report progress: ``notifications/progress`` with these numbers to a client that
        sent a ``progressToken`` (on a plain call's stream, or, for a task, on the stream
        its client waits on), and a task's ``statusMessage`` (raises TaskCancelled if the
        task has ended). ``progress`` must grow from call to call; without it, each call
        counts one step. A value that does not grow past the highest one sent is not sent
        (MCP requires each to be higher): the statusMessage still changes. A tool that asks
        runs again from the top once answered, so what it reported before the question comes
        again: keep its position with ``checkpoint`` and resume from ``state``."""
        value = progress if progress is not None else self._progress + 1
        self._progress = value
        for listener in self.listeners:
            listener.progress(self, value, total, message)
        # A plain call's control reports nothing, but stops the tool if its caller went away.
        status = message if message is not None else _fraction(value, total)
        self._control.progress(status, value, total, message)
        token, notify = self.peer.progress_token, self.peer.notify
        if token is None or notify is None or (self._notified is not None and value <= self._notified):
            return
        self._notified = value
        params: dict[str, Any] = {"progressToken": token, "progress": value}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        notify({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    def log(self, level: str, message: str, data: Any = None) -> None:
        """Log ``message`` (and JSON ``data``) at an RFC 5424 ``level``: a
        ``notifications/message`` to the client when it asked for this level or a less
        severe one (2025-11-25: ``logging/setLevel``; 2026-07-28: the request's ``_meta``
        logLevel) - on a plain call's stream, or, for a task, on the stream its client
        waits on - and always a line in the function's log."""
        if level not in LOG_LEVELS:
            raise ValueError(f"log level must be one of {', '.join(LOG_LEVELS)}, not {level!r}")
        for listener in self.listeners:
            listener.log(self, level, message, data)
        tool_logger.log(
            python_level(level), message, extra={"taskId": self.task_id} if self.task_id else None
        )
        payload = message if data is None else {"message": message, "data": data}
        # A task keeps the line for its client's stream when that client asked for this level.
        self._control.log(level, payload)
        threshold, notify = self.peer.log_level, self.peer.notify
        if threshold is None or notify is None or not at_least(level, threshold):
            return
        notify(
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": level, "data": payload}}
        )

    def supports(self, kind: str) -> bool:
        """Whether the client declared ``kind``: "elicitation" (form mode),
        "elicitation.url", "sampling" or "roots". A tool can pick what it asks."""
        caps = self.peer.capabilities
        if kind == "elicitation":
            return caps.elicitation("form")
        if kind == "elicitation.url":
            return caps.elicitation("url")
        if kind == "sampling":
            return caps.sampling
        if kind == "roots":
            return caps.roots
        raise ValueError(f"unknown client capability {kind!r}")

    def cancelled(self) -> bool:
        """True once the task has ended under the tool (a cancel), or once a plain call's
        caller has gone away: the tool should stop."""
        return self._control.is_cancelled()

    def checkpoint(self, state: Any) -> None:
        """Persist ``state``: the next run of this tool (after a question, or in a fresh
        invocation when this one is nearly out of time) starts with it as ``ctx.state``.

        Work done before a checkpoint is never repeated, so a tool that checkpoints
        often can run for hours across invocations of at most 15 minutes each.
        """
        self._control.checkpoint(state)
        self.state = state

    def hand_off(self, key: str, job: Job, *, check: bool = True) -> JobResult:
        """Hand ``job`` off and wait for it at no compute: the step ends here, and the tool
        runs again from the top once the job has ended, when this returns its outcome.
        ``key`` must be unique over the task's life (like a question's). A failed job
        raises ``JobFailed``; with ``check=False`` its result says so instead."""
        spec = job.spec(self.task_id or "", key)
        if key in self._job_outcomes:
            return read_result(key, spec.kind, spec.label(key), self._job_outcomes[key], check=check)
        self._control.hand_off(key, spec)
        raise HandedOff(key)

    def close_stream(self) -> None:
        """Ask the server to end the client's SSE stream before the result is sent
        (SEP-1699): the client reconnects with Last-Event-ID and gets the result from
        the stored event log. For long inline calls behind proxies that cut idle
        connections; a no-op where the answer is plain JSON."""
        self.stream_closed = True

    def ask(self, key: str, question: Elicit | ElicitUrl) -> Answer:
        """Ask one question. ``key`` must be unique over the task's life."""
        return self.ask_all({key: question})[key]

    def ask_all(self, questions: dict[str, Elicit | ElicitUrl]) -> dict[str, Answer]:
        """Ask several questions at once; all of them are pending together."""
        raw = self._pending(questions)
        return {k: Answer.parse(raw[k], k) for k in questions}

    def elicit_url(self, key: str, message: str, url: str) -> Answer:
        """Send the user to ``url`` (URL-mode elicitation); the answer says whether they went."""
        return self.ask(key, ElicitUrl(message=message, url=url))

    def sample(self, request: Sample | str, *, key: str | None = None, **options: Any) -> Sampled:
        """Ask the client's LLM (``sampling/createMessage``). ``request`` is a ``Sample`` or
        a prompt text (``options``: max_tokens, system_prompt, temperature, …). Keys
        default to the call's position among this run's samples, stable under replay."""
        question = request if isinstance(request, Sample) else Sample.prompt(request, **options)
        key = key or self._auto_key("sampling")
        return Sample.parse(key, self._pending({key: question})[key])

    def list_roots(self, *, key: str | None = None) -> list[Root]:
        """Ask the client for its roots (``roots/list``)."""
        key = key or self._auto_key("roots")
        return ListRoots.parse(key, self._pending({key: ListRoots()})[key])

    def gather(self, questions: dict[str, Question]) -> dict[str, Any]:
        """Ask questions of different kinds in one round: each answer comes back read
        for its kind (``Answer``, ``Sampled``, or a list of ``Root``)."""
        raw = self._pending(questions)
        out: dict[str, Any] = {}
        for key, question in questions.items():
            if isinstance(question, Sample):
                out[key] = Sample.parse(key, raw[key])
            elif isinstance(question, ListRoots):
                out[key] = ListRoots.parse(key, raw[key])
            else:
                out[key] = Answer.parse(raw[key], key)
        return out

    def carried(self) -> dict[str, Any]:
        """The answers this run was asked for and has: what a next round must still know."""
        return {k: self._answers[k] for k in self.asked if k in self._answers}

    def _auto_key(self, kind: str) -> str:
        n = self._auto_keys.get(kind, 0) + 1
        self._auto_keys[kind] = n
        return f"{kind}-{n}"

    def _pending(self, questions: dict[str, Question]) -> dict[str, Any]:
        """The raw answers, or ``InputNeeded`` with every unanswered question; never a
        request the client did not declare (``MissingCapability``, nothing is asked)."""
        self.asked.update(questions)
        missing = {k: q.to_request() for k, q in questions.items() if k not in self._answers}
        for request in missing.values():
            if not self.peer.capabilities.allows(request):
                raise MissingCapability(*required_capability(request))
        if missing:
            raise InputNeeded(missing)
        return {k: self._answers[k] for k in questions}


def _fraction(value: float, total: float | None) -> str:
    return f"{value:g}/{total:g}" if total is not None else f"{value:g}"
