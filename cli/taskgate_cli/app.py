"""``taskgate``: a terminal client for taskgate (or any MCP Tasks) servers."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, TextIO, TypeVar, cast

from . import __version__
from .arguments import UsageError, parse_arguments
from .display import Display, Visible, format_elapsed
from .prompt import Prompter
from .protocol import Client, Client2025, Client2026, Outcome, Question, TaskView
from .schema import describe
from .transport import ConnectionTrouble, Http, RpcError

DEFAULT_URL = "http://127.0.0.1:3000/mcp"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130
# JSON-RPC errors that mean "what you asked for is wrong", not "the work failed".
USAGE_CODES = {-32600, -32601, -32602, -32020, -32021, -32022}
MAX_RETRIES = 6
RESEND_AFTER_SECONDS = 3.0
T = TypeVar("T")

EPILOG = """\
environment:
  TASKGATE_URL     server endpoint (default http://127.0.0.1:3000/mcp)
  TASKGATE_TOKEN   bearer token, sent as "Authorization: Bearer TOKEN"
  TASKGATE_ERA     2026 (default) or 2025

exit codes:
  0 completed   1 failed or isError   2 usage or connection error   130 cancelled

Ctrl-C while `call` or `watch` waits cancels the task (tasks/cancel) and waits
for the server to confirm how it really ended; Ctrl-C again stops waiting.
"""


@dataclass
class Ui:
    out: TextIO
    display: Display
    prompter: Prompter
    json: bool

    def line(self, text: str) -> None:
        self.display.line(text)

    def emit_json(self, value: Any) -> None:
        self.display.clear()
        sys.stdout.write(json.dumps(value, indent=2) + "\n")
        sys.stdout.flush()


def _common(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    env_era = os.environ.get("TASKGATE_ERA", "2026")
    parser.add_argument(
        "--url",
        default=default(os.environ.get("TASKGATE_URL", DEFAULT_URL)),
        help="MCP endpoint (env TASKGATE_URL; default %(default)s)" if not suppress else argparse.SUPPRESS,
    )
    parser.add_argument(
        "--token",
        default=default(os.environ.get("TASKGATE_TOKEN")),
        help="bearer token (env TASKGATE_TOKEN)" if not suppress else argparse.SUPPRESS,
    )
    parser.add_argument(
        "-H",
        "--header",
        action="append",
        default=default([]),
        metavar="'NAME: VALUE'",
        help="extra HTTP header, repeatable" if not suppress else argparse.SUPPRESS,
    )
    parser.add_argument(
        "--era",
        choices=["2026", "2025"],
        default=default(env_era if env_era in ("2026", "2025") else "2026"),
        help="protocol era: 2026 (2026-07-28 tasks extension) or 2025 (2025-11-25 sessions)"
        if not suppress
        else argparse.SUPPRESS,
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=default(False),
        help="machine-readable output on stdout" if not suppress else argparse.SUPPRESS,
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=default(60.0),
        help="seconds to wait for one HTTP answer" if not suppress else argparse.SUPPRESS,
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="taskgate",
        description="Call tools on a taskgate (MCP Tasks) server and follow their tasks.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"taskgate-cli {__version__}")
    _common(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        _common(p, suppress=True)
        return p

    command("tools", "list the server's tools and their arguments")
    call = command("call", "call a tool as a task and follow it to the end")
    call.add_argument("tool")
    call.add_argument(
        "arguments",
        nargs="*",
        metavar="key=value",
        help="typed by the tool's inputSchema (JSON for objects and arrays); key:=json for raw JSON",
    )
    call.add_argument("--detach", action="store_true", help="print the task id and return at once")
    call.add_argument(
        "--no-cancel", action="store_true", help="Ctrl-C stops following the task without cancelling it"
    )
    get = command("get", "show a task's status (and its result or error once it has ended)")
    get.add_argument("task_id", metavar="ID")
    cancel = command("cancel", "cancel a task and wait until the server confirms how it ended")
    cancel.add_argument("task_id", metavar="ID")
    cancel.add_argument("--no-wait", action="store_true", help="return once the cancel is acknowledged")
    watch = command("watch", "follow a task to the end, answering its questions")
    watch.add_argument("task_id", metavar="ID")
    watch.add_argument(
        "--no-cancel", action="store_true", help="Ctrl-C stops watching without cancelling the task"
    )
    return parser


# -- helpers --------------------------------------------------------------------------


def _pause(seconds: float, display: Display) -> None:
    """Sleep, keeping the spinner turning."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        time.sleep(min(0.1, left))
        display.tick()


def _retrying(action: Callable[[], T], ui: Ui) -> T:  # noqa: UP047 (runs on Python 3.10+)
    """Run a safe-to-repeat request, riding out short outages (refused connections,
    timeouts, 429/5xx) with backoff; other failures are raised at once."""
    failures = 0
    while True:
        try:
            return action()
        except ConnectionTrouble as exc:
            if not exc.retryable or failures >= MAX_RETRIES:
                raise
            failures += 1
            delay = exc.retry_after if exc.retry_after is not None else min(0.5 * 2**failures, 10.0)
            ui.display.update(
                ui.display.status or "waiting", f"{exc.message}; retry {failures}/{MAX_RETRIES}"
            )
            _pause(delay, ui.display)


def _result_text(result: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for item in result.get("content") or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "text":
            lines.append(str(item.get("text", "")))
        elif kind in ("image", "audio"):
            size = len(str(item.get("data", ""))) * 3 // 4
            lines.append(f"[{kind} {item.get('mimeType', '')}, {size} bytes]")
        elif kind == "resource_link":
            lines.append(f"[link] {item.get('name', '')} {item.get('uri', '')}".strip())
        elif kind == "resource":
            resource = item.get("resource") or {}
            lines.append(str(resource.get("text") or f"[resource] {resource.get('uri', '')}"))
        else:
            lines.append(json.dumps(item))
    structured = result.get("structuredContent")
    if structured is not None and not lines:
        lines.append(json.dumps(structured, indent=2))
    return lines


def _outcome_json(view: TaskView, outcome: Outcome, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"taskId": view.task_id, "status": outcome.status}
    if view.message:
        out["statusMessage"] = view.message
    if outcome.result is not None:
        out["result"] = outcome.result
    if outcome.error is not None:
        out["error"] = outcome.error
    out.update(extra)
    return out


def _exit_code(outcome: Outcome) -> int:
    if outcome.status == "cancelled":
        return EXIT_CANCELLED
    if outcome.status == "completed" and not (outcome.result or {}).get("isError"):
        return EXIT_OK
    return EXIT_FAILED


def task_ran(view: TaskView) -> float | None:
    """Seconds from the task's creation to its last update, as the server reports them."""
    try:
        created = datetime.fromisoformat(str(view.raw["createdAt"]))
        updated = datetime.fromisoformat(str(view.raw["lastUpdatedAt"]))
    except (KeyError, ValueError):
        return None
    return max(0.0, (updated - created).total_seconds())


def _show_outcome(ui: Ui, view: TaskView, outcome: Outcome, *, cancel_requested: bool = False) -> None:
    sym = ui.display.sym
    took = format_elapsed(ui.display.elapsed())
    if ui.json:
        ui.emit_json(_outcome_json(view, outcome, cancelRequested=cancel_requested))
        return
    status = outcome.status
    tool_error = bool((outcome.result or {}).get("isError"))
    if cancel_requested and status != "cancelled":
        ui.line(f"cancel requested, but the task had already {status}: not cancelled")
    if status == "cancelled":
        # How long the task ran, by the server's clock (created to cancelled): the CLI may
        # have started long after the task did (`taskgate cancel ID`).
        ran = task_ran(view)
        life = f": the task ran {format_elapsed(ran)}" if ran is not None else f" after {took}"
        if cancel_requested:  # what the person asked for: not a failure
            ui.line(f"{sym.stop} cancelled, as asked{life}")
        else:
            ui.line(f"{sym.bad} cancelled by another client{life}")
    elif status == "completed" and not tool_error:
        ui.line(f"{sym.ok} completed in {took}")
    elif tool_error:
        ui.line(f"{sym.bad} {status} with a tool error after {took}")
    else:
        ui.line(f"{sym.bad} {status} after {took}")
    if outcome.result is not None:
        for text in _result_text(outcome.result):
            ui.out.write(text + "\n")
    if outcome.error is not None and status != "cancelled":
        ui.out.write(f"error {outcome.error.get('code', '')}: {outcome.error.get('message', '')}\n")
    ui.out.flush()


# -- following a task -----------------------------------------------------------------


def _ask_all(ui: Ui, questions: list[Question]) -> dict[str, Any] | None:
    ui.display.clear()
    responses: dict[str, Any] = {}
    for question in questions:
        response = ui.prompter.ask(question)
        if response is None:
            return None
        responses[question.key] = response
    return responses


def follow(client: Client, task_id: str, ui: Ui, first: TaskView | None, *, cancel_on_interrupt: bool) -> int:
    """Poll a task to its end, drawing progress and answering its questions.
    Ctrl-C turns into a cancel that is confirmed by the server."""
    answered: dict[str, Any] = {}
    sent_at = 0.0
    view = first
    try:
        while True:
            if view is None:
                view = _retrying(lambda: client.get_task(task_id), ui)
            ui.display.update(view.status, view.message)
            if view.terminal:
                outcome = _retrying(partial(client.outcome, view), ui)
                _show_outcome(ui, view, outcome)
                return _exit_code(outcome)
            if view.status == "input_required":
                asked = client.questions(view)
                fresh = [q for q in asked if q.key not in answered]
                if fresh:
                    responses = _ask_all(ui, fresh)
                    if responses is None:
                        ui.line(f"the task waits for an answer taskgate cannot give; it goes on: {task_id}")
                        return EXIT_FAILED
                    answered.update(responses)
                    _retrying(partial(client.answer, task_id, responses), ui)
                    sent_at = time.monotonic()
                    ui.line("answer sent")
                    view = None
                    continue
                if asked and time.monotonic() - sent_at > RESEND_AFTER_SECONDS:
                    # Still asked after we answered (the answer raced the task parking):
                    # send the same answers again; the server ignores what it already has.
                    again = {q.key: answered[q.key] for q in asked}
                    _retrying(partial(client.answer, task_id, again), ui)
                    sent_at = time.monotonic()
            _pause(view.poll_ms / 1000, ui.display)
            view = None
    except KeyboardInterrupt:
        ui.prompter.end_line()
        if not cancel_on_interrupt:
            ui.line(f"stopped following; the task goes on (taskgate watch {task_id})")
            return EXIT_CANCELLED
        return cancel_and_confirm(client, task_id, ui)
    except ConnectionTrouble:
        ui.line(f"lost the server; the task may go on: taskgate watch {task_id}")
        raise


def _confirm_cancel(client: Client, task_id: str, ui: Ui) -> tuple[TaskView, Outcome] | None:
    """Send ``tasks/cancel`` and poll until the server says how the task ended.
    Returns None when the person stops waiting (a second Ctrl-C)."""
    sym = ui.display.sym
    ui.line(f"cancel requested {sym.dash} waiting for the server{sym.ellipsis}")
    prefix = f"cancel requested{sym.ellipsis} "
    if ui.display.status:
        ui.display.update(ui.display.status, ui.display.message, prefix)
    view: TaskView | None = None
    try:
        try:
            _retrying(lambda: client.cancel(task_id), ui)
        except RpcError as exc:
            # 2025 refuses to cancel a task that has ended; the poll below says how it did.
            ui.line(f"the server answered the cancel: {exc.message}")
        while True:
            view = _retrying(lambda: client.get_task(task_id), ui)
            ui.display.update(view.status, view.message, prefix)
            if view.terminal:
                return view, _retrying(partial(client.outcome, view), ui)
            _pause(min(view.poll_ms / 1000, 0.5), ui.display)
    except KeyboardInterrupt:
        ui.line(
            f"stopped waiting: the server has not confirmed the cancel yet "
            f"(last seen: {view.status if view else 'unknown'}); check with: taskgate get {task_id}"
        )
        return None
    except ConnectionTrouble:
        ui.line(f"lost the server before it confirmed the cancel; check with: taskgate get {task_id}")
        raise


def cancel_and_confirm(client: Client, task_id: str, ui: Ui) -> int:
    confirmed = _confirm_cancel(client, task_id, ui)
    if confirmed is None:
        return EXIT_CANCELLED
    view, outcome = confirmed
    _show_outcome(ui, view, outcome, cancel_requested=True)
    return _exit_code(outcome)


# -- commands -------------------------------------------------------------------------


def cmd_tools(client: Client, args: argparse.Namespace, ui: Ui) -> int:
    tools = client.list_tools()
    if ui.json:
        ui.emit_json(tools)
        return EXIT_OK
    width = max((len(str(t.get("name", ""))) for t in tools), default=4) + 2
    for tool in tools:
        support = (tool.get("execution") or {}).get("taskSupport", "-")
        description = str(tool.get("description") or tool.get("title") or "").strip()
        ui.out.write(f"{tool.get('name', '?'):<{width}}{support:<11}{description}\n")
        schema = tool.get("inputSchema") or {}
        required = set(schema.get("required") or [])
        for name, prop in (schema.get("properties") or {}).items():
            if not isinstance(prop, dict):
                continue
            text = f"{name}{'*' if name in required else ''}: {describe(prop)}"
            if "default" in prop:
                text += f" = {json.dumps(prop['default'])}"
            if prop.get("description"):
                text += f"  {prop['description']}"
            ui.out.write(" " * (width + 11) + text + "\n")
    ui.out.write(f"\n{len(tools)} tools; * = required; call one with: taskgate call TOOL key=value …\n")
    return EXIT_OK


def cmd_call(client: Client, args: argparse.Namespace, ui: Ui) -> int:
    tools = {str(t.get("name")): t for t in client.list_tools()}
    tool = tools.get(args.tool)
    if tool is None:
        raise UsageError(f"no tool named {args.tool!r}; the server has: {', '.join(sorted(tools)) or 'none'}")
    arguments = parse_arguments(args.arguments, tool.get("inputSchema") or {})
    answers: dict[str, Any] = {}
    for _ in range(20):
        reply = client.call_tool(tool, arguments, answers)
        if not reply.questions:
            break
        # 2026: the tool asks before a task exists; answer, then call again with the answers.
        responses = _ask_all(ui, reply.questions)
        if responses is None:
            return EXIT_FAILED
        answers.update(responses)
    else:
        raise UsageError("the server kept asking questions before starting the task")
    if reply.task is None:
        result = reply.result or {}
        result.pop("resultType", None)
        outcome = Outcome("failed" if result.get("isError") else "completed", result=result)
        if ui.json:
            ui.emit_json({"status": outcome.status, "result": result})
        else:
            for text in _result_text(result):
                ui.out.write(text + "\n")
        return _exit_code(outcome)
    task = reply.task
    if args.detach:
        if ui.json:
            ui.emit_json(task.raw)
        else:
            ui.out.write(task.task_id + "\n")
        return EXIT_OK
    ui.line(f"task {task.task_id} ({args.tool}) created")
    return follow(client, task.task_id, ui, task, cancel_on_interrupt=not args.no_cancel)


def cmd_get(client: Client, args: argparse.Namespace, ui: Ui) -> int:
    view = client.get_task(args.task_id)
    outcome = client.outcome(view) if view.terminal else None
    if ui.json:
        extra: dict[str, Any] = dict(view.raw)
        if outcome is not None:
            extra.update(_outcome_json(view, outcome))
        ui.emit_json(extra)
        return EXIT_OK
    out = ui.out

    def row(label: str, value: Any) -> None:
        out.write(f"{label:<14}{value}".rstrip() + "\n")

    row("task", view.task_id)
    row("status", view.status)
    if view.message:
        row("message", view.message)
    for key in ("createdAt", "lastUpdatedAt"):
        if key in view.raw:
            row(key, view.raw[key])
    if view.status == "input_required" and client.era == "2026":
        for question in client.questions(view):
            row("asks", f"[{question.key}] {question.params.get('message', question.method)}")
    if outcome is not None and outcome.result is not None:
        row("result", "(isError)" if outcome.result.get("isError") else "")
        for text in _result_text(outcome.result):
            out.write(f"  {text}\n")
    if outcome is not None and outcome.error is not None:
        row("error", f"{outcome.error.get('message', '')} ({outcome.error.get('code', '')})")
    out.flush()
    return EXIT_OK


def cmd_cancel(client: Client, args: argparse.Namespace, ui: Ui) -> int:
    if args.no_wait:
        client.cancel(args.task_id)
        if ui.json:
            ui.emit_json({"taskId": args.task_id, "cancelRequested": True})
        else:
            ui.out.write(f"cancel requested for {args.task_id}\n")
        return EXIT_OK
    before = client.get_task(args.task_id)
    if before.terminal:
        # Nothing to cancel: say how it ended rather than claim a cancel.
        outcome = client.outcome(before)
        if ui.json:
            ui.emit_json(_outcome_json(before, outcome, cancelRequested=False))
        else:
            ui.out.write(f"task {args.task_id} had already ended: {before.status}; nothing to cancel\n")
        return EXIT_OK if before.status == "cancelled" else EXIT_FAILED
    ui.display.update(before.status, before.message)
    confirmed = _confirm_cancel(client, args.task_id, ui)
    if confirmed is None:
        return EXIT_CANCELLED
    view, outcome = confirmed
    _show_outcome(ui, view, outcome, cancel_requested=True)
    return EXIT_OK if outcome.status == "cancelled" else EXIT_FAILED


def cmd_watch(client: Client, args: argparse.Namespace, ui: Ui) -> int:
    return follow(client, args.task_id, ui, None, cancel_on_interrupt=not args.no_cancel)


COMMANDS: dict[str, Callable[[Client, argparse.Namespace, Ui], int]] = {
    "tools": cmd_tools,
    "call": cmd_call,
    "get": cmd_get,
    "cancel": cmd_cancel,
    "watch": cmd_watch,
}


def _headers(args: argparse.Namespace) -> dict[str, str]:
    headers = {"user-agent": f"taskgate-cli/{__version__}"}
    if args.token:
        headers["authorization"] = f"Bearer {args.token}"
    for raw in args.header or []:
        name, sep, value = raw.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--header expects 'Name: value', got {raw!r}")
        headers[name.strip().lower()] = value.strip()
    return headers


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Everything printed for a person shows what the server and its tools sent, never obeys
    # it: a tool's text, a status message or an error could carry terminal sequences.
    err = cast(TextIO, Visible(sys.stderr))
    out = cast(TextIO, Visible(sys.stderr if args.json else sys.stdout))
    display = Display(out, tty=out.isatty(), quiet=args.json)
    ui = Ui(out, display, Prompter(out, sys.stdin, display.sym), args.json)
    client: Client | None = None
    try:
        http = Http(args.url, _headers(args), timeout=args.timeout)
        client = Client2026(http) if args.era == "2026" else Client2025(http)
        client.open()
        return COMMANDS[args.command](client, args, ui)
    except UsageError as exc:
        display.clear()
        err.write(f"taskgate: {exc}\n")
        return EXIT_USAGE
    except ConnectionTrouble as exc:
        display.clear()
        err.write(f"taskgate: {exc.message}\n")
        return EXIT_USAGE
    except RpcError as exc:
        display.clear()
        if exc.http_status in (401, 403):
            err.write(f"taskgate: HTTP {exc.http_status} {exc.message}: check --token / TASKGATE_TOKEN\n")
            return EXIT_USAGE
        err.write(f"taskgate: the server answered error {exc.code}: {exc.message}\n")
        return EXIT_USAGE if exc.code in USAGE_CODES else EXIT_FAILED
    except KeyboardInterrupt:
        display.clear()
        ui.prompter.end_line()
        err.write("\ntaskgate: interrupted (no task was being followed)\n")
        return EXIT_CANCELLED
    except BrokenPipeError:
        return EXIT_OK
    finally:
        if client is not None:
            with contextlib.suppress(KeyboardInterrupt):
                client.close()
