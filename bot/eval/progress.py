"""Progress of a long run on stderr: a bar with ETA on a terminal, plain lines otherwise (CI logs)."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

BAR_WIDTH = 30


def format_seconds(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    minutes, secs = divmod(seconds, 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class ProgressDisplay:
    def __init__(
        self, total: int, stream: TextIO, *, tty: bool | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.total = max(total, 0)
        self._stream = stream
        self._tty = stream.isatty() if tty is None else tty
        self._clock = clock
        self._started = clock()
        self._done = 0
        # Plain mode: about twenty lines per run, so a CI log stays readable.
        self._every = max(1, self.total // 20)

    def line(self, done: int, note: str = "") -> str:
        elapsed = self._clock() - self._started
        share = done / self.total if self.total else 1.0
        eta = elapsed / done * (self.total - done) if done else None
        eta_text = "?" if eta is None else format_seconds(eta)
        text = f"{done}/{self.total} {share:4.0%} elapsed {format_seconds(elapsed)} eta {eta_text}"
        if self._tty:
            filled = int(BAR_WIDTH * share)
            text = "[" + "#" * filled + "." * (BAR_WIDTH - filled) + "] " + text
        else:
            text = "eval: " + text
        return f"{text} {note}".rstrip()

    def advance(self, note: str = "") -> None:
        self._done += 1
        if self._tty:
            self._stream.write("\r" + self.line(self._done, note)[:160].ljust(100))
            if self._done >= self.total:
                self._stream.write("\n")
        elif self._done % self._every == 0 or self._done >= self.total:
            self._stream.write(self.line(self._done, note) + "\n")
        self._stream.flush()

    def message(self, text: str) -> None:
        """A line of its own (a skipped question, the budget running out), not lost under the bar."""
        prefix = "\n" if self._tty and 0 < self._done < self.total else ""
        self._stream.write(f"{prefix}eval: {text}\n")
        self._stream.flush()
