"""What `chat` reads as one message: a typed line, or a whole multi-line paste.

A pasted log must reach the bot as one question, as it does on the platforms, not one question
per line. Three rules, in this order:

- A bracketed paste (the terminal wraps it in ESC[200~ … ESC[201~ once we ask for that) is one
  piece of text, blank lines included; the Enter after it sends it.
- A line followed within `PASTE_WINDOW_SECONDS` by more lines is a paste the terminal did not
  mark (nobody types that fast): the lines that follow are added until a blank line or the end
  of input sends the message.
- Any other line is sent when Enter is pressed, as before.

Piped input arrives all at once, so the second rule makes a script's messages blank-line
separated: `printf 'first\\n\\nsecond\\n' | python -m bot chat` sends two.

The reader works on the file descriptor, not on `sys.stdin`: Python's text buffer would hide
lines already read from the descriptor, and `select` must see what is really waiting.
"""
from __future__ import annotations

import contextlib
import os
import select
import sys
from collections.abc import Iterator
from typing import TextIO

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
PASTE_WINDOW_SECONDS = 0.1  # far below a person's Enter-then-next-line; above a paste's chunk gaps over ssh
_ENABLE_BRACKETED_PASTE = "\x1b[?2004h"
_DISABLE_BRACKETED_PASTE = "\x1b[?2004l"


class _Timeout:
    """Nothing arrived within the wait."""


TIMEOUT = _Timeout()


class MessageReader:
    """Reads chat messages from a file descriptor (a terminal or a pipe), one paste per message."""

    def __init__(self, fd: int, *, hints: TextIO | None = None, window: float = PASTE_WINDOW_SECONDS) -> None:
        self._fd = fd
        self._hints = hints  # where "pasted N lines" goes; None for piped input
        self._window = window
        self._pending = b""  # bytes read from fd that do not end in a newline yet
        self._eof = False

    def read_message(self) -> str | None:
        """The next message, or None at the end of input. Blocks; run it in a thread."""
        lines: list[str] = []
        pasted = False  # more lines followed the first one at once: a blank line ends the message
        hinted = False
        while True:
            entry = self._entry(timeout=self._window if lines else None)
            if entry is TIMEOUT:
                if not pasted:
                    return _joined(lines)  # a line nothing followed: typed, Enter sent it
                if not hinted:
                    self._hint(len(lines))
                    hinted = True
                entry = self._entry(timeout=None)
            if not isinstance(entry, str):  # end of input sends what was collected
                return _joined(lines) if lines else None
            if lines:
                pasted = True
            if not entry.strip():
                if hinted or (pasted and self._hints is None):
                    return _joined(lines)  # the explicit send: a blank line after the paste
                if not lines:
                    continue  # Enter on an empty prompt sends nothing
                # a blank line inside an unmarked paste at a terminal belongs to the paste
            lines.append(entry)

    def _hint(self, count: int) -> None:
        if self._hints is not None:
            self._hints.write(f"… {count} lines pasted; press Enter on an empty line to send\n")
            self._hints.flush()

    def _entry(self, timeout: float | None) -> str | _Timeout | None:
        """One line as the person entered it: a whole bracketed paste counts as one."""
        line = self._line(timeout)
        if not isinstance(line, str) or PASTE_START not in line:
            return line
        parts: list[str] = []
        inside = False
        while True:
            # markers may start and end anywhere in a line; text outside them was typed around the paste
            for index, piece in enumerate(line.split(PASTE_START)):
                before_end, ended, after_end = piece.partition(PASTE_END)
                if index > 0:
                    inside = True
                if ended:
                    inside = False
                    parts.append(before_end + after_end.replace(PASTE_END, ""))
                else:
                    parts.append(before_end)
            if not inside:
                return "".join(parts)
            parts.append("\n")  # the paste goes on past this line
            next_line = self._line(None)
            if not isinstance(next_line, str):  # input ended inside a paste: keep what came
                return "".join(parts).rstrip("\n")
            line = next_line

    def _line(self, timeout: float | None) -> str | _Timeout | None:
        """The next raw line without its newline; TIMEOUT; None at the end of input."""
        while b"\n" not in self._pending:
            if self._eof:
                if not self._pending:
                    return None
                rest, self._pending = self._pending, b""
                return _decode(rest)
            if timeout is not None and not select.select([self._fd], [], [], timeout)[0]:
                return TIMEOUT
            chunk = os.read(self._fd, 65536)
            if not chunk:
                self._eof = True
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return _decode(line)


def _decode(raw: bytes) -> str:
    # whole lines are decoded, so a multi-byte character is never cut between two reads
    return raw.decode("utf-8", errors="replace").rstrip("\r")


def _joined(lines: list[str]) -> str:
    return "\n".join(lines).strip("\n")


@contextlib.contextmanager
def terminal_paste_mode(fd: int, out: TextIO) -> Iterator[bool]:
    """Ask the terminal to mark pastes, for as long as the chat runs; yields whether it was asked.

    Only when both ends are a terminal (the request would otherwise land in a file). Echoing of
    control characters is turned off meanwhile, so the markers do not show up as `^[[200~`.
    """
    if not (os.isatty(fd) and out.isatty()):
        yield False
        return
    import termios  # noqa: PLC0415 - POSIX only, and only for a terminal

    saved = termios.tcgetattr(fd)
    quiet = list(saved)
    quiet[3] = quiet[3] & ~termios.ECHOCTL
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    out.write(_ENABLE_BRACKETED_PASTE)
    out.flush()
    try:
        yield True
    finally:
        out.write(_DISABLE_BRACKETED_PASTE)
        out.flush()
        termios.tcsetattr(fd, termios.TCSANOW, saved)


def stdin_reader() -> MessageReader:
    """The reader for `chat`: hints only when a person is typing."""
    fd = sys.stdin.fileno()
    return MessageReader(fd, hints=sys.stdout if os.isatty(fd) else None)
