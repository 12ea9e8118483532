"""A hidden task's questions and waits reach 2026-07-28 hosts that call tools plainly (issue 28).

mcp 2.3.0's ``Client``, Strands Agents 1.62 and PydanticAI 2.68 (on mcp 2.x) call two long
tools plainly, as they do by default (no tasks opt-in), each through its own MCP wrapper and
its own elicitation handler (tests/e2e/hosts/rounds_py.py):

- ``long_structured`` works, asks its user half-way ("go on?") and returns a structured result
  (an outputSchema, which no task handle can stand in for): the call goes on round by round,
  the question reaches the host's elicitation handler in an ``input_required`` round of the
  call itself, the answer reaches the tool, and the result arrives (the newcomer's tool); and
  without the question, the same structured result after rounds that ask nothing;
- ``long_ask`` does the same with a text result: on the streaming endpoint the held call ends
  with the question's round; behind the stand-in it is handed to the model as a task handle,
  and ``taskgate_task_result`` (the driver plays the model) puts the question to the host's
  handler the same way, never to the model.

Both through the API Gateway stand-in (tests/apigw_front.py, buffered, scaled down to an 8 s
cut: rounds of 4 s) and on the streaming endpoint (a server that holds calls, scaled down to
a 40 s cut: rounds of 10 s). The OpenAI Agents SDK, which has no elicitation hook and raises on
any input_required result, gets a clear refusal naming its limit. By hand with mcp's session:
a question's state answered twice or moved to another call, and a round's state replayed, are
refused, and the calls then finish as if nothing had happened. And the longest plain call of
an outputSchema tool within the clients' 10 rounds: measured at the scaled cut; a longer one is
refused at once, saying how to call it as a task.

Every client runs at once, against one server per endpoint.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.apigw_front import RunningFront, running_front
from tests.e2e.client_starts import Launch, said_it_opened, start_few_at_a_time
from tests.e2e.conftest import Say
from tests.e2e.local_server import run_setup, running_server

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
HOSTS_DIR = ROOT / "tests" / "e2e" / "hosts"
TOOLS = ROOT / ".tools" / "hosts"
TOOL_MODULES = "taskgate_conformance,taskgate_tools,tests.fixture_tools"
# The stand-in's cut, scaled down from API Gateway's 30 s: a round is the cut less 4 s.
BUFFER_CUT = 8.0
ROUND_SECONDS = BUFFER_CUT - 4
LONGEST = ROUND_SECONDS * 11  # the first request and the clients' 10 rounds after it
# The streaming endpoint's, scaled down from 15 minutes: a held round is the cut less 30 s.
STREAM_CUT = 45.0
ASK_SECONDS = 2.0  # asks at 1 s (long_ask is declared to take 12 s: never run inline)
REPORT_SECONDS = 12.0  # three rounds behind the stand-in (over the 10 s a tool may run inline)
STREAM_REPORT_SECONDS = 18.0  # two held rounds of 15 s
PYTHON = {
    "mcp2": TOOLS / "py-pai2" / "bin" / "python",  # mcp 2.3.0's Client (the venv has it)
    "strands": TOOLS / "py-mcp2" / "bin" / "python",
    "pydantic-ai": TOOLS / "py-pai2" / "bin" / "python",
    "openai-agents": TOOLS / "py-mcp2" / "bin" / "python",
}
ASKERS = ("mcp2", "strands", "pydantic-ai")
TIMEOUT = 180.0


@dataclass(frozen=True)
class Run:
    framework: str
    endpoint: str  # "buffered" (the stand-in) or "streaming"
    scenario: str
    seconds: float

    @property
    def name(self) -> str:
        return f"{self.framework}-{self.endpoint}-{self.scenario}-{self.seconds:g}".replace(".", "_")


ENDPOINTS = {"buffered": REPORT_SECONDS, "streaming": STREAM_REPORT_SECONDS}
RUNS = [
    *(Run(f, e, "ask", ASK_SECONDS) for f in (*ASKERS, "openai-agents") for e in ENDPOINTS),
    *(Run(f, e, "newcomer", s) for f in ASKERS for e, s in ENDPOINTS.items()),
    *(Run(f, e, "report", s) for f in (*ASKERS, "openai-agents") for e, s in ENDPOINTS.items()),
    Run("mcp2", "buffered", "replay", REPORT_SECONDS),
    Run("mcp2", "buffered", "report", LONGEST - 3),  # the longest that fits, less some slack
    Run("mcp2", "buffered", "report", LONGEST + 6),  # longer than 10 rounds can carry
    Run("mcp2", "buffered", "abandon", 40),  # given up after 3 s: never back for its next round
]
HANG_UP_SECONDS = 20.0  # scaled down from 90 s (at least three rounds and their reconnects)
STALE_SECONDS = 2.0  # a run whose state (a beat every 0.25 s) is older has stopped


@dataclass
class Outcome:
    run: Run
    out: dict[str, Any]
    records: list[Any]  # the requests its front answered (buffered runs)

    @property
    def requests(self) -> int:
        return len(self.records)

    @property
    def tools_calls(self) -> int:
        return sum(1 for r in self.records if r.rpc == "tools/call")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory, say: Say) -> Iterator[dict[str, Outcome]]:
    run_setup(HOSTS_DIR / "setup.sh", "hosts", timeout=1500)
    work = tmp_path_factory.mktemp("plain-rounds")
    (work / "runs").mkdir()
    buffered = [r for r in RUNS if r.endpoint == "buffered"]
    started = time.monotonic()
    with (
        running_server(
            work / "buffered.log",
            TOOL_MODULES=TOOL_MODULES,
            FRONT_TIMEOUT_SECONDS=f"{BUFFER_CUT:g}",
            CALL_PIECE_SECONDS=f"{ROUND_SECONDS:g}",
            HANG_UP_SECONDS=f"{HANG_UP_SECONDS:g}",
            TASKGATE_TEST_RUNS_DIR=str(work / "runs"),
            MAX_INLINE_CALLS="32",
            # The API function as Lambda runs it: an environment per request, frozen once it has
            # answered, cut at the function's timeout (the front's cut, scaled down).
            TASKGATE_LAMBDA="1",
        ) as buffered_url,
        running_server(
            work / "streaming.log",
            TOOL_MODULES=TOOL_MODULES,
            FRONT_STREAMING="true",
            FRONT_TIMEOUT_SECONDS=f"{STREAM_CUT:g}",
            MAX_INLINE_CALLS="32",
        ) as streaming_url,
        running_front(
            buffered_url.removesuffix("/mcp"), count=len(buffered), timeout_seconds=BUFFER_CUT
        ) as fronts,
    ):
        found = _drive(work, dict(zip(buffered, fronts, strict=True)), streaming_url)
        abandoned = found[Run("mcp2", "buffered", "abandon", 40).name]
        abandoned.out["runState"] = _stopped(work / "runs" / f"{abandoned.run.name}.json", abandoned.out)
        with urllib.request.urlopen(f"{buffered_url.removesuffix('/mcp')}/_lambda", timeout=10) as resp:
            lambda_report = json.load(resp)
    wall = time.monotonic() - started
    # Nothing of any request ran on once it had answered (the waits are the requests' own).
    assert lambda_report["left_running"] == [], lambda_report
    say(
        f"\n[plain rounds] {len(RUNS)} runs at once in {wall:.1f} s (servers and clients included); "
        f"{lambda_report['cold_starts']} cold starts behind the stand-in, the slowest "
        f"{lambda_report['slowest_cold_start_seconds']} s"
    )
    for outcome in found.values():
        out = outcome.out
        asked = [a["message"] for a in out.get("asked", [])]
        told = out.get("error") or (out.get("result") or {}).get("texts") or out.get("report")
        say(
            f"  {outcome.run.name:<42} {out.get('seconds', '?'):>6} s  {outcome.requests:>2} req  "
            f"asked={asked} -> {str(told)[:150]}"
        )
    yield found


def _drive(work: pathlib.Path, fronts: dict[Run, RunningFront], streaming_url: str) -> dict[str, Outcome]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(HOSTS_DIR)}
    launches = []
    for run in RUNS:
        url = f"{fronts[run].url}/mcp" if run in fronts else streaming_url
        command = [
            str(PYTHON[run.framework]),
            str(HOSTS_DIR / "rounds_py.py"),
            run.framework,
            url,
            run.scenario,
            f"{run.seconds:g}",
            run.name,
        ]
        launches.append(Launch(run, command, work / f"{run.name}.out", work / f"{run.name}.err", work, env))
    # A few at a time: twenty-six framework start-ups at once starve the server (client_starts.py).
    procs, launched = start_few_at_a_time(launches, said_it_opened)
    found: dict[str, Outcome] = {}
    for run in RUNS:
        proc = procs[run]
        try:
            proc.wait(timeout=max(1.0, launched[run] + TIMEOUT - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out = work / f"{run.name}.out"
        lines = [json.loads(line) for line in out.read_text().splitlines() if line.startswith("{")]
        results = [line for line in lines if "open" not in line]
        result = results[-1] if results else {"ok": False, "error": "no answer (killed)"}
        found[run.name] = Outcome(run, result, list(fronts[run].front.records) if run in fronts else [])
    return found


def _stopped(path: pathlib.Path, out: dict[str, Any]) -> dict[str, Any]:
    """The abandoned run's state once it has stopped (its beats stale), or as it is at the deadline."""
    aborted = float(out.get("abortedAt") or time.time())
    deadline = aborted + HANG_UP_SECONDS + 4 * ROUND_SECONDS + 10
    while True:
        state = json.loads(path.read_text()) if path.exists() else {"state": "never ran", "updated": 0}
        if (
            state["state"] != "running"
            or time.time() - state["updated"] > STALE_SECONDS
            or time.time() > deadline
        ):
            return {**state, "stoppedAfter": round(state["updated"] - aborted, 1)}
        time.sleep(0.5)


def _get(
    outcomes: dict[str, Outcome], framework: str, endpoint: str, scenario: str, seconds: float
) -> Outcome:
    return outcomes[Run(framework, endpoint, scenario, seconds).name]


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("framework", ASKERS)
def test_the_newcomers_tool_asks_through_the_hosts_handler_and_returns_its_structured_result(
    outcomes: dict[str, Outcome], framework: str, endpoint: str
) -> None:
    seconds = ENDPOINTS[endpoint]
    outcome = _get(outcomes, framework, endpoint, "newcomer", seconds)
    out = outcome.out
    assert out["ok"], out
    assert [a["message"] for a in out["asked"]] == ["Half-way there: go on?"]
    # went_on: the tool read the host's answer; the structured result passed the client's check.
    assert out["result"]["structured"] == {
        "run": outcome.run.name,
        "seconds": seconds,
        "ticks": seconds * 4,
        "went_on": True,
    }
    assert out["callSeconds"] >= seconds and out["handleCalls"] == 0  # one plain call, never a handle
    if endpoint == "buffered":
        # Rounds of 4 s behind the 8 s cut, one of them the question's: never a cut.
        rounds = math.ceil(seconds / ROUND_SECONDS)
        assert rounds + 1 <= outcome.tools_calls <= rounds + 2
        assert not any(r.cut for r in _front_records(outcome))


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("framework", ASKERS)
def test_a_long_tool_that_asks_puts_its_question_to_the_hosts_handler_never_the_model(
    outcomes: dict[str, Outcome], framework: str, endpoint: str
) -> None:
    outcome = _get(outcomes, framework, endpoint, "ask", ASK_SECONDS)
    out = outcome.out
    assert out["ok"], out
    assert [a["message"] for a in out["asked"]] == ["Half-way there: go on?"]
    # "went on when asked": the tool read the host's answer (a refusal would stop it half-way).
    run = outcome.run.name
    assert out["result"]["texts"] == [f"long_ask {run}: went on when asked, finished after 2 seconds"]
    if endpoint == "streaming":
        assert out["handleCalls"] == 0  # the held call itself ended with the question's round
    else:
        # Handed over at once (declared long, no outputSchema): the model's taskgate_task_result
        # call put the question to the host, and a later one had the result.
        assert 1 <= out["handleCalls"] <= 3


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("framework", ASKERS)
def test_a_long_tool_with_an_output_schema_is_called_plainly_to_its_structured_result(
    outcomes: dict[str, Outcome], framework: str, endpoint: str
) -> None:
    seconds = ENDPOINTS[endpoint]
    outcome = _get(outcomes, framework, endpoint, "report", seconds)
    out = outcome.out
    assert out["ok"], out
    assert out["asked"] == []
    assert out["result"]["structured"]["run"] == outcome.run.name
    assert out["result"]["structured"]["went_on"] is False
    assert out["callSeconds"] >= seconds
    if endpoint == "buffered":
        rounds = math.ceil(seconds / ROUND_SECONDS)
        assert rounds <= outcome.tools_calls <= rounds + 1


def _front_records(outcome: Outcome) -> list[Any]:
    return outcome.records


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_openai_agents_is_refused_clearly_naming_its_limit(
    outcomes: dict[str, Outcome], endpoint: str
) -> None:
    report = _get(outcomes, "openai-agents", endpoint, "report", ENDPOINTS[endpoint]).out
    assert not report["ok"]
    assert "declared none of elicitation, sampling or roots" in report["error"], report
    assert "io.modelcontextprotocol/tasks" in report["error"]
    # Its tool asks: the task ends at the question, saying what the client lacks (behind the
    # stand-in the call was handed over, and the handle's result says it).
    ask = _get(outcomes, "openai-agents", endpoint, "ask", ASK_SECONDS).out
    told = ask.get("error") or " ".join(ask["result"]["texts"])
    assert ask["asked"] == []
    assert "Missing required client capability: elicitation (form mode)" in told, ask
    assert "did not declare" in told


def test_a_state_replayed_answered_twice_or_moved_is_refused_and_the_task_unharmed(
    outcomes: dict[str, Outcome],
) -> None:
    out = _get(outcomes, "mcp2", "buffered", "replay", REPORT_SECONDS).out
    assert out["ok"], out
    refused = {"code": -32602, "message": "Invalid or expired requestState"}
    assert out["answeredTwice"] == refused and out["anotherCall"] == refused and out["replayed"] == refused
    name = Run("mcp2", "buffered", "replay", REPORT_SECONDS).name
    # The first answer stands (a "decline" would have stopped it half-way), and the call ends.
    assert out["question"] == "Half-way there: go on?"
    assert out["report"]["structured"] == {"run": name, "seconds": 12.0, "ticks": 48, "went_on": True}


def test_a_call_its_host_gave_up_on_stops_when_it_does_not_come_back_for_its_round(
    outcomes: dict[str, Outcome], say: Say
) -> None:
    """Nothing tells the function behind a front that buffers that a host went away: a host
    that does not come back for its next round within HANG_UP_SECONDS has its task stopped."""
    out = _get(outcomes, "mcp2", "buffered", "abandon", 40).out
    assert out["ok"] and out["abandoned"], out
    state = out["runState"]
    assert state["state"] == "running" and state["beats"] < 160  # stopped, never completed
    assert 0 < state["stoppedAfter"] <= HANG_UP_SECONDS + ROUND_SECONDS + 3, state
    say(
        f"[plain rounds] a call given up after 3 s stopped {state['stoppedAfter']} s after (hang-up {HANG_UP_SECONDS:g} s)"
    )


def test_the_longest_plain_call_of_an_output_schema_tool_within_ten_rounds(
    outcomes: dict[str, Outcome], say: Say
) -> None:
    longest = _get(outcomes, "mcp2", "buffered", "report", LONGEST - 3)
    out = longest.out
    assert out["ok"], out
    assert out["result"]["structured"]["seconds"] == LONGEST - 3
    assert longest.tools_calls <= 11  # the first request and at most 10 rounds
    beyond = _get(outcomes, "mcp2", "buffered", "report", LONGEST + 6)
    assert not beyond.out["ok"] and beyond.out["callSeconds"] < ROUND_SECONDS  # refused at once
    assert f"lasts at most {LONGEST:.0f} s here" in beyond.out["error"]
    assert "io.modelcontextprotocol/tasks" in beyond.out["error"]
    say(
        f"[plain rounds] longest outputSchema call at a {BUFFER_CUT:g} s cut: {LONGEST:g} s possible; "
        f"a {LONGEST - 3:g} s tool took {out['callSeconds']} s in {longest.tools_calls} tools/call requests; "
        f"a {LONGEST + 6:g} s one refused in {beyond.out['callSeconds']} s"
    )
