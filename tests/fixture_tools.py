"""Tools that exist only for the test suite. Importing this module registers them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from taskgate.tools import ToolContext, tool


class BigResultInput(BaseModel):
    kilobytes: int = Field(ge=1, le=16384)


@tool(description="Return a text result of the given size (tests the S3 offload).", task_support="required")
def big_result(args: BigResultInput, ctx: ToolContext) -> str:
    # Distinct lines, so a truncated or reordered result would not compare equal.
    line = "0123456789abcdef" * 4 + "\n"
    lines = [f"{i:08d}:{line}" for i in range(args.kilobytes * 1024 // (len(line) + 9) + 1)]
    return "".join(lines)[: args.kilobytes * 1024]


class QuietInput(BaseModel):
    seconds: float = Field(ge=0, le=60)


@tool(description="Work without reporting progress.", task_support="required")
def quiet_work(args: QuietInput, ctx: ToolContext) -> str:
    import time

    time.sleep(args.seconds)
    return "quiet done"


class NoInput(BaseModel):
    pass


@tool(description="Return one block of every content type.", task_support="optional")
def content_gallery(args: NoInput, ctx: ToolContext) -> list[dict[str, Any]]:
    from taskgate.tools import content as c

    return [
        c.text("A gallery"),
        c.image(b"\x89PNG fake", "image/png"),
        c.audio(b"RIFF fake", "audio/wav"),
        c.embedded("test://gallery/blob", blob=b"\x00\x01", mime_type="application/octet-stream"),
        c.resource_link("test://gallery/report", "report", mime_type="text/csv", size=12),
    ]


class Forecast(BaseModel):
    city: str
    celsius: float


class CityInput(BaseModel):
    city: str


@tool(description="A structured result with an output schema.", task_support="optional")
def forecast(args: CityInput, ctx: ToolContext) -> Forecast:
    return Forecast(city=args.city, celsius=21.5)


@tool(description="Send the user to a URL (URL-mode elicitation).", task_support="optional")
def sign_in(args: NoInput, ctx: ToolContext) -> str:
    answer = ctx.elicit_url("sign_in", "Sign in to continue", "https://example.com/sign-in")
    return f"sign-in: {answer.action}"


@tool(description="Sample twice with automatic keys, then list the roots.", task_support="optional")
def two_samples(args: NoInput, ctx: ToolContext) -> str:
    first = ctx.sample("One?", max_tokens=5)
    second = ctx.sample("Two?", max_tokens=5)
    roots = ctx.list_roots()
    return f"{first.text}+{second.text} in {len(roots)} roots"


class RolloutInput(BaseModel):
    service: str = Field(description="The service to roll out")
    waves: int = Field(default=3, ge=1, le=20, description="How many waves")
    pause: float = Field(default=0.01, ge=0, le=5, description="Seconds each wave takes")
    confirm: bool = Field(default=True, description="Ask the user first")


@tool(description="Roll a service out in waves once the user confirms (an async def tool).")
async def async_rollout(args: RolloutInput, ctx: ToolContext) -> str:
    import asyncio

    from taskgate.tools import Elicit, ToolError

    ctx.log("info", f"planning {args.service}")
    if args.confirm:
        answer = ctx.ask(
            "confirm",
            Elicit(
                message=f"Roll out {args.service} in {args.waves} waves?",
                properties={"ok": {"type": "boolean"}},
                required=["ok"],
            ),
        )
        if not (answer.accepted and answer.content.get("ok")):
            raise ToolError(f"{args.service}: not confirmed")
    for wave in range(1, args.waves + 1):
        await asyncio.sleep(args.pause)
        ctx.progress(f"wave {wave} of {args.waves}", progress=wave, total=args.waves)
        ctx.log("info", f"wave {wave} done", {"service": args.service})
    return f"{args.service} rolled out in {args.waves} waves"


def unicode_text(kilobytes: int) -> str:
    """Exactly ``kilobytes`` KiB of UTF-8 (or a few bytes less, at a character), in
    distinct lines of 2-, 3- and 4-byte characters: ASCII escaping would make it
    two to three times longer."""
    size = kilobytes * 1024
    lines, total, i = [], 0, 0
    while total < size:
        line = f"{i:07d} 日本語のテキスト — ĉu vi parolas? ΑΒΓ 🙂\n"
        lines.append(line)
        total += len(line.encode())
        i += 1
    return "".join(lines).encode()[:size].decode(errors="ignore")


class UnicodeInput(BaseModel):
    kilobytes: int = Field(ge=1, le=4096)
    seconds: float = Field(default=0, ge=0, le=30)


@tool(description="Return non-ASCII text of the given size, after a pause.", task_support="optional")
def unicode_result(args: UnicodeInput, ctx: ToolContext) -> str:
    import time

    time.sleep(args.seconds)
    return unicode_text(args.kilobytes)


@tool(
    description="Close the SSE stream, then return non-ASCII text of the given size (SEP-1699).",
    task_support="forbidden",
)
def unicode_after_close(args: UnicodeInput, ctx: ToolContext) -> str:
    ctx.close_stream()
    return unicode_text(args.kilobytes)


class QuotesInput(BaseModel):
    count: int = Field(ge=0, le=4_000_000)


@tool(description="Return a text of double quotes: the JSON that escapes most.", task_support="required")
def quotes_result(args: QuotesInput, ctx: ToolContext) -> str:
    return '"' * args.count


@tool(
    description="Return a text result of the given size after closing the call's stream (the response is logged).",
    task_support="optional",
)
def big_text(args: BigResultInput, ctx: ToolContext) -> str:
    ctx.close_stream()  # the client resumes for the response, which the stream's log must replay
    return big_result(args, ctx)


class ErrorDataInput(BaseModel):
    data: Any = None


@tool(description="End with a JSON-RPC error carrying the given data.", task_support="required")
def error_with_data(args: ErrorDataInput, ctx: ToolContext) -> str:
    from taskgate.tools import ProtocolError

    raise ProtocolError(-32050, "failed with data", args.data)


def _confirm_first(args: NoInput, ctx: ToolContext) -> None:
    from taskgate.tools import Elicit, ToolError

    answer = ctx.ask("go_ahead", Elicit("Run the gated job?", {"ok": {"type": "boolean"}}, ["ok"]))
    if not (answer.accepted and answer.content.get("ok") is True):
        raise ToolError("The gated job was not confirmed.")


@tool(
    description="A job its prepare step must confirm first.", task_support="optional", prepare=_confirm_first
)
def gated_job(args: NoInput, ctx: ToolContext) -> str:
    return "the gated job ran"


class LongInput(BaseModel):
    minutes: float = Field(default=2, ge=0, le=600, description="How long the job says it takes")
    steps: int = Field(default=5, ge=0, le=1000)
    ask: bool = False
    check_cancelled: bool = False
    # After its steps, hand a state machine's execution off (the task waits on it).
    hand_off_to: str = ""


@tool(
    description="Declared long (minutes), but quick here: reports numbered progress and logs each step.",
    task_support="optional",
    expected_seconds=lambda args: args.minutes * 60,
)
def long_job(args: LongInput, ctx: ToolContext) -> str:
    from taskgate.tools import Elicit

    if args.ask:
        ctx.ask("go", Elicit(message="Go on?", properties={"ok": {"type": "boolean"}}))
    for step in range(1, args.steps + 1):
        ctx.log("info", f"step {step} of {args.steps}")
        ctx.progress(f"step {step}", progress=step, total=args.steps)
        if args.check_cancelled and ctx.cancelled():
            return "stopped early"
    if args.hand_off_to:
        from taskgate.tools import StepFunctionsExecution

        ctx.hand_off("child", StepFunctionsExecution(args.hand_off_to, {}))
    return f"long job done after {args.steps} steps"


@tool(
    description="Declared long, with an output schema (so it is never handed out as a job).",
    task_support="optional",
    expected_seconds=300,
)
def long_forecast(args: CityInput, ctx: ToolContext) -> Forecast:
    return Forecast(city=args.city, celsius=3.0)


# --- the hosts matrix (tests/e2e/test_hosts.py) ----------------------------------------------
# Where `long_work` keeps each run's state, so a test can see from outside whether the work
# still runs after its caller cancelled (a plain call has no task to ask about).
RUNS_DIR_VARIABLE = "TASKGATE_TEST_RUNS_DIR"
TICK_SECONDS = 0.25


class LongWorkInput(BaseModel):
    seconds: float = Field(default=45, ge=0, le=3600, description="How long to work")
    run: str = Field(default="", pattern=r"^[A-Za-z0-9_.-]{0,80}$", description="A name for this run")


def _keep_run_state(run: str, **state: Any) -> None:
    import json
    import os
    import time
    from pathlib import Path

    folder = os.environ.get(RUNS_DIR_VARIABLE)
    if not folder or not run:
        return
    path = Path(folder) / f"{run}.json"
    scratch = path.with_suffix(f".{os.getpid()}.tmp")
    scratch.write_text(json.dumps({**state, "updated": time.time()}))
    scratch.replace(path)  # a reader never sees half a file


@tool(
    description="Work for a number of seconds, reporting progress every 0.25 s and stopping when cancelled.",
    task_support="optional",
    # Declared long: a plain call of more than a few seconds runs as a hidden task.
    expected_seconds=lambda args: args.seconds,
)
def long_work(args: LongWorkInput, ctx: ToolContext) -> str:
    return _work("long_work", args, ctx)


@tool(
    description="Work for a number of seconds, reporting progress every 0.25 s and stopping when cancelled."
)
def undeclared_work(args: LongWorkInput, ctx: ToolContext) -> str:
    """``long_work`` written as the README's first tool is: it declares nothing (issue 27)."""
    return _work("undeclared_work", args, ctx)


@tool(
    description="Work for a number of seconds, reporting progress every 0.25 s (learned apart from undeclared_work)."
)
def sized_work(args: LongWorkInput, ctx: ToolContext) -> str:
    """Another tool that declares nothing, timed on its own: known quick from a short run, then
    called with a long one (issue 27: a known-quick tool that overruns)."""
    return _work("sized_work", args, ctx)


def _work(name: str, args: LongWorkInput, ctx: ToolContext) -> str:
    import time

    from taskgate.tools.context import TaskCancelled

    started = time.time()
    ticks = max(1, round(args.seconds / TICK_SECONDS))
    state = {"started": started, "task": ctx.task_id}
    try:
        for tick in range(1, ticks + 1):
            if ctx.cancelled():
                raise TaskCancelled(ctx.task_id or "plain call")
            _keep_run_state(args.run, state="running", beats=tick, **state)
            ctx.progress(f"{args.run or 'work'}: {tick} of {ticks}", progress=tick, total=ticks)
            time.sleep(TICK_SECONDS)
    except TaskCancelled:
        _keep_run_state(args.run, state="cancelled", beats=tick, **state)
        raise
    except BaseException as exc:
        _keep_run_state(args.run, state=f"ended: {type(exc).__name__}", beats=tick, **state)
        raise
    _keep_run_state(args.run, state="completed", beats=ticks, **state)
    return f"{name} {args.run} finished after {args.seconds:g} seconds"


# -- jobs handed off (taskgate.tools.jobs) ---------------------------------------------

# The callback URLs the callback fixture handed out, by task id: the tests play the outside system.
CALLBACK_URLS: dict[str, list[str]] = {}
# How many times each job fixture's tool ran, by task id: a tool runs again after each
# job, and must never start a job twice.
JOB_RUNS: dict[str, int] = {}


def _count_run(ctx: ToolContext) -> None:
    JOB_RUNS[ctx.task_id or ""] = JOB_RUNS.get(ctx.task_id or "", 0) + 1


class ChildInput(BaseModel):
    state_machine_arn: str
    input: dict[str, Any] = Field(default_factory=dict)
    check: bool = True


@tool(description="Run another state machine and return its output.", task_support="required")
def wait_for_child(args: ChildInput, ctx: ToolContext) -> dict[str, Any]:
    from taskgate.tools import StepFunctionsExecution

    _count_run(ctx)
    result = ctx.hand_off(
        "child", StepFunctionsExecution(args.state_machine_arn, args.input), check=args.check
    )
    return {"ok": result.ok, "output": result.output, "error": result.error, "reason": result.reason}


@tool(description="Run another state machine twice, with a question between.", task_support="required")
def two_children(args: ChildInput, ctx: ToolContext) -> dict[str, Any]:
    from taskgate.tools import Elicit, StepFunctionsExecution

    _count_run(ctx)
    first = ctx.hand_off("first", StepFunctionsExecution(args.state_machine_arn, {"n": 1}))
    again = ctx.ask("again", Elicit("Run it again?", {"go": {"type": "boolean"}}))
    if not again.accepted:
        return {"first": first.output}
    second = ctx.hand_off("second", StepFunctionsExecution(args.state_machine_arn, {"n": 2}))
    return {"first": first.output, "second": second.output}


class CallbackInput(BaseModel):
    timeout_seconds: int | None = None
    heartbeat_seconds: int | None = None


@tool(
    description="Wait for an outside system to call back, and return what it sent.", task_support="required"
)
def wait_for_callback(args: CallbackInput, ctx: ToolContext) -> dict[str, Any]:
    from taskgate.tools import Callback

    _count_run(ctx)
    task_id = ctx.task_id or ""

    def send(url: str) -> None:
        CALLBACK_URLS.setdefault(task_id, []).append(url)

    job = Callback(send=send, timeout_seconds=args.timeout_seconds, heartbeat_seconds=args.heartbeat_seconds)
    result = ctx.hand_off("partner", job)
    return {"output": result.output}


class JobInput(BaseModel):
    kind: str = Field(pattern="^(batch|ecs|glue)$")
    # The Batch job queue, the ECS cluster or the Glue job.
    target: str
    # The Batch job definition or the ECS task definition.
    definition: str = ""
    subnets: list[str] = Field(default_factory=list)
    security_groups: list[str] = Field(default_factory=list)


@tool(
    description="Run a Batch job, an ECS task or a Glue job and return how it ended.", task_support="optional"
)
def run_job(args: JobInput, ctx: ToolContext) -> dict[str, Any]:
    from taskgate.tools import BatchJob, EcsTask, GlueJobRun

    _count_run(ctx)
    job: BatchJob | EcsTask | GlueJobRun
    if args.kind == "batch":
        job = BatchJob(args.target, args.definition, parameters={"day": "2027-01-15"})
    elif args.kind == "ecs":
        job = EcsTask(args.target, args.definition, args.subnets, args.security_groups)
    else:
        job = GlueJobRun(args.target, {"--day": "2027-01-15"})
    result = ctx.hand_off("job", job)
    return {"output": result.output}


@tool(
    description="The example pipeline's executions and their status, as the server's AWS knows them.",
    task_support="forbidden",
)
def pipeline_runs(args: NoInput, ctx: ToolContext) -> dict[str, Any]:
    """For end-to-end tests: whether a cancel stopped the child execution (the server's
    AWS is moto, inside the server's own process)."""
    import os

    from moto.stepfunctions.responses import get_backend

    # moto's own records, not an AWS call: this test-only tool needs no grant of the stack's.
    arn = os.environ["PIPELINE_STATE_MACHINE_ARN"]
    _, _, _, region, account, *_ = arn.split(":")
    found = get_backend(account, region).list_executions(arn)
    # Paginated in moto's parser backend: (executions, next token).
    runs = found[0] if isinstance(found, tuple) else found
    return {"runs": [{"name": r.name, "status": r.status} for r in runs]}


# -- the local server's Lambda mode (tests/e2e/test_lambda_mode.py) --------------------------


class BeatInput(BaseModel):
    seconds: float = Field(default=5, ge=0, le=120, description="How long to beat")
    run: str = Field(default="", pattern=r"^[A-Za-z0-9_.-]{0,80}$", description="A name for this run")


def _beat(run: str, seconds: float) -> None:
    """Keep ``run``'s state, a beat every 0.05 s, for ``seconds`` of its own working time:
    from outside, whether and when this work ran."""
    import time

    started, beats, worked = time.time(), 0, 0.0
    while worked < seconds:
        beats += 1
        _keep_run_state(run, state="running", beats=beats, started=started)
        time.sleep(0.05)
        worked += 0.05
    _keep_run_state(run, state="completed", beats=beats, started=started)


@tool(
    description="Answer at once, leaving a thread that works on (the work Lambda freezes).",
    task_support="forbidden",
)
def leave_running(args: BeatInput, ctx: ToolContext) -> str:
    import threading

    threading.Thread(
        target=_beat, args=(args.run, args.seconds), name=f"beat-{args.run}", daemon=True
    ).start()
    return "answered; a thread works on"


@tool(description="Work inside the request for a number of seconds, beating.", task_support="forbidden")
def inline_work(args: BeatInput, ctx: ToolContext) -> str:
    _beat(args.run, args.seconds)
    return f"inline_work {args.run} finished after {args.seconds:g} seconds"


# -- progress that only goes forward (issue 27 item 4) -----------------------------------------


class HalfWayInput(BaseModel):
    steps: int = Field(default=18, ge=2, le=200, description="How many steps")
    pause: float = Field(default=0.0, ge=0, le=10, description="Seconds each step takes")


@tool(
    description="Report each step, and ask half way without a checkpoint (a question runs it again from the top)."
)
def half_way_question(args: HalfWayInput, ctx: ToolContext) -> str:
    import time

    from taskgate.tools import Elicit

    for step in range(1, args.steps + 1):
        ctx.progress(f"step {step} of {args.steps}", progress=step, total=args.steps)
        if step == args.steps // 2:
            answer = ctx.ask(
                "go_on", Elicit(message="Half way: carry on?", properties={"ok": {"type": "boolean"}})
            )
            if not answer.accepted:
                return "stopped half way"
        time.sleep(args.pause)
    return f"done after {args.steps} steps"


@tool(
    description="Sleep in one blocking call inside the request (no check a stop could reach).",
    task_support="forbidden",
)
def blocking_sleep(args: BeatInput, ctx: ToolContext) -> str:
    import time

    time.sleep(args.seconds)
    _keep_run_state(args.run, state="completed", beats=1, started=time.time())
    return f"slept {args.seconds:g} seconds"


# -- plain calls carried on in rounds (issue 28, tests/e2e/test_plain_rounds.py) ----------------


class LongAskInput(BaseModel):
    seconds: float = Field(default=90, ge=0, le=3600, description="How long to work in all")
    run: str = Field(default="", pattern=r"^[A-Za-z0-9_.-]{0,80}$", description="A name for this run")
    ask: bool = Field(default=False, description="Ask the user half-way whether to go on")
    # The unit tier declares a long tool that runs at once (the fake clock stands in for time).
    quick: bool = Field(default=False, description="Do not actually wait")


def _ticks(seconds: float) -> int:
    return max(2, round(seconds / TICK_SECONDS))


def _work_and_ask(args: LongAskInput, ctx: ToolContext) -> str:
    """Progress every tick; half-way (when ``ask``) one question, after a checkpoint, so the
    run after the answer picks up at the half and its progress goes on forward."""
    import time

    from taskgate.tools import Elicit

    ticks = _ticks(args.seconds)
    half = ticks // 2
    first = 1 if ctx.state is None else half + 1
    went = ""
    for tick in range(first, ticks + 1):
        if args.ask and tick == half + 1:
            if ctx.state is None:
                ctx.checkpoint({"half": True})
            question = Elicit("Half-way there: go on?", {"confirm": {"type": "boolean"}}, ["confirm"])
            answer = ctx.ask("go_on", question)
            if not (answer.accepted and answer.content.get("confirm")):
                return "stopped half-way"
            went = "went on when asked, "
        _keep_run_state(args.run, state="running", beats=tick, task=ctx.task_id)
        ctx.progress(f"{args.run or 'work'}: {tick} of {ticks}", progress=tick, total=ticks)
        time.sleep(0 if args.quick else args.seconds / ticks)
    _keep_run_state(args.run, state="completed", beats=ticks, task=ctx.task_id)
    return went


@tool(
    description="Work, ask the user half-way whether to go on, then finish (progress every 0.25 s).",
    task_support="optional",
    # Declared long enough never to run inside a request, however quick a run is.
    expected_seconds=lambda args: max(args.seconds, 12.0),
)
def long_ask(args: LongAskInput, ctx: ToolContext) -> str:
    """The newcomer's tool without a schema: progress, one question half-way, a result."""
    went = _work_and_ask(args, ctx)
    if went == "stopped half-way":
        return f"long_ask {args.run}: stopped half-way"
    return f"long_ask {args.run}: {went}finished after {args.seconds:g} seconds"


class Report(BaseModel):
    run: str
    seconds: float
    ticks: int
    went_on: bool


@tool(
    description="Work, optionally ask half-way, and return a structured report (it has an outputSchema).",
    task_support="optional",
    expected_seconds=lambda args: args.seconds,
)
def long_report(args: LongAskInput, ctx: ToolContext) -> Report:
    """The newcomer's tool: progress, (``ask``) one question half-way, a structured result."""
    went = _work_and_ask(args, ctx)
    return Report(
        run=args.run, seconds=args.seconds, ticks=_ticks(args.seconds), went_on=went.startswith("went on")
    )
