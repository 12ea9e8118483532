"""How much of its execution's history a task has used.

A Standard execution keeps at most 25,000 history events, and Step Functions fails
the execution when it would write one more. A task loops inside one execution:
every question round (RunTool, then AwaitInput), every job a tool hands off (RunTool,
then the states that start the job, wait for it and record its outcome) and every
continued step (RunTool again after a checkpoint ran short of time) adds events, and so does every retry.
Left alone, a checkpointing tool would be cut off after about 45 days of
14-minute steps, and a chatty one after about 2,200 question rounds, with a
bare ``States.Runtime`` failure.

The worker counts instead: each write that sends the execution round again (the
questions, the checkpoint that yields) adds what that round will record, in the
same write, and a step that starts with the budget spent ends the task failed
with a reason a person can read. The counts are upper bounds of what Step
Functions records (tests/integration/test_engine.py checks them against the
history of real executions of task.asl.json under moto).
"""

from __future__ import annotations

# Step Functions' quota: events in one execution's history.
EXECUTION_HISTORY_LIMIT = 25_000
# Kept back for the step that starts last (its own events, its retries, RecordFailure
# and the execution's start and end).
HISTORY_RESERVE = 1_000
HISTORY_BUDGET = EXECUTION_HISTORY_LIMIT - HISTORY_RESERVE

# RunTool: TaskStateEntered, TaskScheduled, TaskStarted, TaskFailed (the signal),
# TaskStateExited; one spare.
EVENTS_PER_CONTINUED_STEP = 6
# RunTool as above, then AwaitInput: TaskStateEntered, TaskScheduled, TaskStarted,
# TaskSubmitted, TaskSucceeded, TaskStateExited; one spare.
EVENTS_PER_QUESTION_ROUND = 12
# RunTool as above; LoadJob (TaskStateEntered, TaskScheduled, TaskStarted, TaskSucceeded,
# TaskStateExited); StartJob (ChoiceStateEntered, ChoiceStateExited); the wait
# (TaskStateEntered, TaskScheduled, TaskStarted, TaskSubmitted, TaskSucceeded,
# TaskStateExited); RecordJobOutcome (five, as LoadJob); one spare.
EVENTS_PER_HAND_OFF = 24
# A retried attempt: TaskScheduled, TaskStarted, TaskFailed.
EVENTS_PER_RETRY = 3


def events_for_continue(retries: int) -> int:
    return EVENTS_PER_CONTINUED_STEP + EVENTS_PER_RETRY * max(0, retries)


def events_for_question_round(retries: int) -> int:
    return EVENTS_PER_QUESTION_ROUND + EVENTS_PER_RETRY * max(0, retries)


def events_for_hand_off(retries: int) -> int:
    return EVENTS_PER_HAND_OFF + EVENTS_PER_RETRY * max(0, retries)


def exhausted_message(used: int, budget: int) -> str:
    return (
        f"The task reached the most steps one execution can record (about {used} of "
        f"{budget} history events used by its question rounds and continued steps); "
        "start a new task to carry on."
    )
