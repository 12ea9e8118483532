"""The live status line: one redrawn line on a terminal, one line per change elsewhere."""

from __future__ import annotations

import re
import shutil
import time
from typing import TextIO

# What a terminal would act on rather than show: C0 controls (ESC starts the sequences that
# move the cursor, recolour, retitle the window or write to the clipboard), DEL, C1 controls
# (0x9b is a one-byte CSI), and the bidirectional overrides that reorder what is shown.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile("[\t\n]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character written as an escape (ESC as ``\\x1b``):
    what a server or a tool sends is shown, never obeyed. Newlines and tabs stay."""
    return _CONTROLS.sub(_escape, text)


def one_line(text: str) -> str:
    """``visible``, with newlines and tabs escaped too: for the one status line."""
    return _LINE_BREAKS.sub(_escape, visible(text))


class Visible:
    """A text stream whose ``write`` shows control characters instead of passing them to
    the terminal. The CLI's own escape sequences (the redrawn status line) go through
    ``raw``."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(visible(text))

    def raw(self, text: str) -> int:
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    @property
    def encoding(self) -> str | None:
        return getattr(self.stream, "encoding", None)


def _raw(out: TextIO, text: str) -> None:
    write = getattr(out, "raw", None)
    (write or out.write)(text)


_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")
_OF = re.compile(r"(\d+(?:\.\d+)?)[A-Za-z]*\s+of\s+(\d+(?:\.\d+)?)")
_SLASH = re.compile(r"(?<![\d.])(\d+)\s*/\s*(\d+)(?![\d.])")


def fraction(message: str | None) -> float | None:
    """A completed fraction read from a status message: ``40%``, ``2.0s of 5s``, ``3/12``."""
    if not message:
        return None
    if match := _PERCENT.search(message):
        return min(max(float(match.group(1)) / 100, 0.0), 1.0)
    for pattern in (_OF, _SLASH):
        if (match := pattern.search(message)) and float(match.group(2)) > 0:
            return min(max(float(match.group(1)) / float(match.group(2)), 0.0), 1.0)
    return None


class Symbols:
    """Unicode where the output can encode it, ASCII otherwise."""

    def __init__(self, encoding: str | None) -> None:
        try:
            "⠋—…✓✗■█░".encode(encoding or "ascii")
            fancy = True
        except (UnicodeEncodeError, LookupError):
            fancy = False
        self.frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏" if fancy else "|/-\\"
        self.dash = "—" if fancy else "-"
        self.ellipsis = "…" if fancy else "..."
        self.ok = "✓" if fancy else "OK"
        self.bad = "✗" if fancy else "X"
        self.stop = "■" if fancy else "-"
        self.full = "█" if fancy else "#"
        self.empty = "░" if fancy else "-"
        self.ask = "?"


def format_elapsed(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class Display:
    """Shows a task's status and statusMessage while the CLI waits on it.

    On a terminal: a spinner line redrawn in place with ``\\r`` and erase-line
    (never wider than the terminal, so it never wraps). Elsewhere (a pipe, a
    file, CI logs): one plain line each time the status or message changes.
    ``quiet`` shows nothing (``--json``).
    """

    BAR_WIDTH = 16

    def __init__(self, out: TextIO, *, tty: bool, quiet: bool = False) -> None:
        self.out = out
        self.tty = tty
        self.quiet = quiet
        self.sym = Symbols(getattr(out, "encoding", None))
        self.started = time.monotonic()
        self.status = ""
        self.message: str | None = None
        self.prefix = ""
        self._frame = 0
        self._drawn = False
        self._last_plain: tuple[str, str, str | None] | None = None

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def update(self, status: str, message: str | None, prefix: str = "") -> None:
        self.status, self.message, self.prefix = status, message, prefix
        if self.quiet:
            return
        if self.tty:
            self._draw()
        elif (prefix, status, message) != self._last_plain:
            self._last_plain = (prefix, status, message)
            text = one_line(f"{prefix}{status}" + (f": {message}" if message else ""))
            self.out.write(f"[{format_elapsed(self.elapsed()):>7}] {text}\n")
            self.out.flush()

    def tick(self) -> None:
        """Advance the spinner (terminal only)."""
        if self.tty and not self.quiet and self.status:
            self._frame += 1
            self._draw()

    def _draw(self) -> None:
        width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
        frames = self.sym.frames
        status = one_line(self.prefix + self.status)
        parts = [frames[self._frame % len(frames)], format_elapsed(self.elapsed()), status]
        done = fraction(self.message)
        if done is not None and self.status in ("working", "input_required"):
            filled = round(done * self.BAR_WIDTH)
            bar = self.sym.full * filled + self.sym.empty * (self.BAR_WIDTH - filled)
            parts.append(f"{bar} {done * 100:3.0f}%")
        if self.message:
            parts.append(one_line(self.message))
        line = "  ".join(parts)
        if len(line) > width:
            line = line[: width - len(self.sym.ellipsis)] + self.sym.ellipsis
        _raw(self.out, "\r\x1b[2K")
        self.out.write(line)
        self.out.flush()
        self._drawn = True

    def clear(self) -> None:
        """Erase the spinner line so that something else can be printed."""
        if self._drawn:
            _raw(self.out, "\r\x1b[2K")
            self.out.flush()
            self._drawn = False

    def line(self, text: str) -> None:
        """Print a permanent line above the spinner (which the next tick redraws)."""
        if self.quiet:
            return
        self.clear()
        self.out.write(one_line(text) + "\n")
        self.out.flush()
