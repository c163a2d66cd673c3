"""Terminal progress: status lines, and the streamed answer printed as it arrives.

Drafts (`Progress(stage=DRAFT_STAGE)`) carry the whole partial answer each
time, so only the new tail is printed. They go to stderr, like the status
lines: stdout keeps exactly one clean, verified answer per question (scripts
pipe it; `--json` parses it), while a person at the terminal watches the
answer being written and then reads the verified version.
"""
from __future__ import annotations

from typing import TextIO

from adapters.terminal.render import strip_controls
from core.messages import DRAFT_STAGE, Progress


class TerminalProgress:
    def __init__(self, out: TextIO, *, enabled: bool) -> None:
        self._out = out
        self._enabled = enabled
        self._printed = ""  # the draft text already on screen

    async def __call__(self, update: Progress) -> None:
        if not self._enabled:
            return
        # Model output must not drive the terminal (colours, cursor moves, OSC 52 clipboard writes).
        shown = strip_controls(update.text)
        if update.stage != DRAFT_STAGE:
            self._end_draft()
            print(f"… {shown}", file=self._out, flush=True)
            return
        if shown.startswith(self._printed):
            self._out.write(shown[len(self._printed) :])
        else:  # withdrawn or rewritten (the turn went on to call tools): start a fresh line
            self._out.write("\n")
            if shown:
                self._out.write(shown)
        self._out.flush()
        self._printed = shown

    def finish(self) -> None:
        """The answer is complete: close the streamed line before the verified answer prints."""
        if self._enabled:
            self._end_draft()

    def _end_draft(self) -> None:
        if self._printed:
            self._out.write("\n\n")
            self._out.flush()
            self._printed = ""
