"""The ``taskgate`` command shows what a server and its tools send, and never lets the
terminal obey it (issue 21, N11): a tool's text, a status message, a tool's description
or an error can carry escape sequences that clear the screen, retitle the window, write
to the clipboard (OSC 52) or reorder what is shown. The CLI runs whole here, its HTTP
replaced by the unit tier's server on the fakes."""

from __future__ import annotations

import io
import json
from typing import Any, TextIO, cast

import pytest
from pydantic import BaseModel
from taskgate_cli import app
from taskgate_cli.display import Display, Visible, one_line, visible
from taskgate_cli.transport import Reply, reply_of

from taskgate.tools import ToolContext, ToolRegistry
from taskgate.tools.errors import ProtocolError
from taskgate.tools.registry import Tool
from tests.fakes import World

HOSTILE = "\x1b]0;pwned\x07\x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b[2J\x1b[31mred\x1b[0m\r\x9b1m\u202egnp.exe\x7f"


class NoInput(BaseModel):
    pass


def _hostile(args: Any, ctx: ToolContext) -> str:
    ctx.progress(f"step {HOSTILE}")
    return f"result {HOSTILE}\nsecond line\tafter a tab"


def _hostile_error(args: Any, ctx: ToolContext) -> str:
    raise ProtocolError(-32099, f"refused {HOSTILE}")


class InProcess:
    """The CLI's transport, answered by the unit tier's server (executions run between
    requests, as the state machine runs beside the API)."""

    def __init__(self, world: World) -> None:
        self.world = world

    def send(
        self, method: str, headers: dict[str, str], body: Any = None, *, timeout: float | None = None
    ) -> Reply:
        self.world.settle()
        headers = {k.lower(): v for k, v in headers.items()}
        server = self.world.server
        if method == "POST":
            reply = server.handle(body, headers, "anonymous")
        elif method == "GET":
            reply = server.handle_get(headers, "anonymous")
        else:
            reply = server.handle_delete(headers, "anonymous")
        if reply.stream is not None:
            raw = "".join(reply.stream).encode()
        else:
            raw = json.dumps(reply.body).encode() if reply.body is not None else b""
        return reply_of(reply.status, reply.headers, raw)


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> World:
    tools = ToolRegistry()
    tools.add(Tool("hostile", f"describes itself {HOSTILE}", NoInput, _hostile))
    tools.add(Tool("hostile_error", "fails", NoInput, _hostile_error, task_support="required"))
    world = World(tools)
    monkeypatch.setattr(app, "Http", lambda url, headers, timeout: InProcess(world))
    monkeypatch.setattr(app, "_pause", lambda seconds, display: None)
    return world


def _shown(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    return captured.out + captured.err


@pytest.mark.parametrize("era", ["2026", "2025"])
@pytest.mark.parametrize(
    "argv",
    [["tools"], ["call", "hostile"], ["call", "hostile_error"]],
)
def test_server_and_tool_text_is_shown_not_obeyed(
    cli: World, capsys: pytest.CaptureFixture[str], era: str, argv: list[str]
) -> None:
    app.main(["--era", era, *argv])
    shown = _shown(capsys)
    # Not one control character reaches the terminal; each is written out instead.
    assert not any(ch in shown for ch in "\x1b\x07\r\x9b\x7f\u202e"), repr(shown)
    assert "\\x1b]0;pwned\\x07" in shown and "\\u202e" in shown and "\\x9b" in shown


def test_a_result_keeps_its_lines_and_tabs(cli: World, capsys: pytest.CaptureFixture[str]) -> None:
    app.main(["call", "hostile"])
    shown = _shown(capsys)
    assert "\nsecond line\tafter a tab\n" in shown


@pytest.mark.parametrize("tty", [True, False])
def test_the_status_line_draws_its_own_sequences_only(tty: bool) -> None:
    out = io.StringIO()
    display = Display(cast(TextIO, Visible(out)), tty=tty)
    display.update("working", "step \x1b]0;pwned\x07\u202e\nnext")
    drawn = out.getvalue()
    if tty:
        # Its own erase-and-redraw, then one line: the message's newline written out too.
        assert drawn.startswith("\r\x1b[2K") and drawn.count("\x1b") == 1
        drawn = drawn[len("\r\x1b[2K") :]
    assert not any(ch in drawn.rstrip("\n") for ch in "\x1b\x07\r\n\x9b\u202e"), repr(drawn)
    assert "step \\x1b]0;pwned" in drawn and "\\x0anext" in drawn


def test_visible_and_one_line() -> None:
    assert visible("a\x1b[2Jb\nc\td\x00\x85") == "a\\x1b[2Jb\nc\td\\x00\\x85"
    assert one_line("a\nb\tc\rd") == "a\\x0ab\\x09c\\x0dd"
    assert visible("plain text, émoji 👍 and 中文") == "plain text, émoji 👍 and 中文"


# -- a cancel the person asked for (issue 31, item 7) ----------------------------------------


class Confirm(BaseModel):
    pass


def _asks(args: Any, ctx: ToolContext) -> str:
    from taskgate.tools import Elicit

    ctx.ask("go", Elicit(message="Go on?", properties={"ok": {"type": "boolean"}}))
    return "went on"


@pytest.mark.parametrize("era", ["2026", "2025"])
def test_a_cancel_asked_for_reads_as_done_and_counts_the_tasks_own_time(
    cli: World, capsys: pytest.CaptureFixture[str], era: str
) -> None:
    cli.tools.add(Tool("asks", "asks first", Confirm, _asks, task_support="required"))
    assert app.main(["--era", era, "--json", "call", "asks", "--detach"]) == 0
    task_id = json.loads(capsys.readouterr().out)["taskId"]
    cli.settle()  # the task parks on its question
    cli.clock.advance(12_300)  # and waits there 12.3 s before someone cancels it
    assert app.main(["--era", era, "cancel", task_id]) == 0
    shown = _shown(capsys)
    assert "cancelled, as asked: the task ran 12.3s" in shown, shown
    assert "✗" not in shown and "X cancelled" not in shown
