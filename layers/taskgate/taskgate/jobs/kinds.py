"""What taskgate knows of each kind of job, in one registry the kinds fill.

A ``Kind`` says how a person is told about a job of it (its noun, the name that tells it
apart), how its failure reads (the service's description of a failed job, in the service's
own words), and what the state machine and the IAM need of it: the state ``StartJob``
chooses for it in statemachines/task.asl.json, the integration that state runs, and the
actions the task's state machine, the API (a job's status) and a cancel (its stop) are
granted in template.yaml. tests/unit/test_job_kinds.py holds those two files to this
registry, in both directions. A kind of job is its module here (its spec class and its
``Kind``), its adapter (adapters/), and the lines that test points to.
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, NamedTuple


class JobKind(enum.StrEnum):
    """The kinds taskgate ships (jobs/execution.py, batch.py, ecs.py, glue.py, callback.py); a
    job's kind is any name in the registry below. Kept here, not in vocabulary.py, so that a
    kind's module registers itself without loading the vocabulary."""

    EXECUTION = "execution"
    BATCH = "batch"
    ECS = "ecs"
    GLUE = "glue"
    CALLBACK = "callback"


# A named tuple and a plain class, not dataclasses: a tool that names a job class makes them
# at its first tools/call's cold start, where a dataclass costs about 0.4 ms to make.
class Kind(NamedTuple):
    """What taskgate knows of one kind of job."""

    name: str
    # How a person calls one ("Batch job").
    noun: str
    # What tells one apart: the job's own name (a Batch job, an ECS task definition), or what it
    # runs on (the state machine, the Glue job); the callback's key for a callback.
    named_by: Literal["name", "target", "key"] = "name"
    # The words of a failed job's description (its keys lower-cased), in the order a person
    # reads them; None: the failure's Cause is read as it is.
    reasons: Callable[[dict[str, Any]], list[str]] | None = None
    # A job that finished but failed after all, read from its output: (the error's name, why);
    # None: it did not.
    failed_output: Callable[[Any], tuple[str, str] | None] | None = None
    # The task waits for a callback URL's delivery (a task token), not for a service.
    callback: bool = False
    # The state machine: the states StartJob chooses for a job of this kind, and the
    # integration (its Task's Resource without "arn:${Partition}:states:::") they run.
    states: tuple[str, ...] = ()
    integration: str = ""
    # The IAM (template.yaml): what the task state machine runs one with (RunJobsPolicy; a
    # .sync integration also manages the EventBridge rule named ``events_rule``), what the
    # API reads of its status (JobStatusPolicy) and what a cancel stops it with (JobStopPolicy).
    run_actions: frozenset[str] = frozenset()
    events_rule: str = ""
    status_actions: frozenset[str] = frozenset()
    stop_actions: frozenset[str] = frozenset()


class Registry:
    """The kinds of job, by name."""

    def __init__(self, *, shipped: tuple[str, ...] = ()) -> None:
        self.kinds: dict[str, Kind] = {}
        # The modules (in this package) of the kinds taskgate ships, imported and so
        # registered on the first read: each costs a cold start its classes, and most
        # requests read none.
        self.shipped = shipped
        self._loaded = False

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            for module in self.shipped:
                importlib.import_module(f"{__package__}.{module}")

    def add(self, kind: Kind) -> Kind:
        if kind.name in self.kinds:
            raise ValueError(f"job kind {kind.name!r} is registered twice")
        self.kinds[kind.name] = kind
        return kind

    @contextmanager
    def added(self, kind: Kind) -> Iterator[Kind]:
        """``kind`` registered for the block (a test's own kind of job)."""
        self.add(kind)
        try:
            yield kind
        finally:
            del self.kinds[kind.name]

    def __getitem__(self, name: str) -> Kind:
        self._load()
        found = self.kinds.get(name)
        if found is None:
            raise KeyError(f"no job kind {name!r} is registered (known: {', '.join(self.kinds)})")
        return found

    def __iter__(self) -> Iterator[Kind]:
        self._load()
        return iter(list(self.kinds.values()))


# Every kind of job taskgate knows: the modules of this package add theirs when they are
# imported (by the first read, or by a tool that names their job class); a kind of one's own
# adds itself the same way.
KINDS = Registry(shipped=("batch", "callback", "ecs", "execution", "glue"))
