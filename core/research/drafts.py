"""Streamed answer drafts, throttled, reported through the progress callback.

Platforms edit a message (or a card) for each draft and most rate-limit
edits, so drafts go out at most every `min_interval` seconds *and* only once
`min_chars` new characters arrived; the first text goes out at once, since
time to first text is what the user feels. Reports run in the background so
a slow platform edit never holds up reading the model's stream; while one is
in flight newer text simply waits for the next report.

What is reported is the draft's safe view (core/research/draft_guard.py), not the model's text: no
link is clickable and no code block is shown before `verify_answer` has passed the finished answer.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from core.messages import DRAFT_STAGE, Language, Progress
from core.research.draft_guard import DraftGuard

log = logging.getLogger(__name__)

PROGRESS_TIMEOUT_SECONDS = 5.0


class DraftReporter:
    def __init__(
        self,
        progress: Callable[[Progress], Awaitable[None]],
        language: Language,
        *,
        min_interval: float = 0.3,
        min_chars: int = 40,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._progress = progress
        self._language = language
        self._min_interval = min_interval
        self._min_chars = min_chars
        self._clock = clock
        self._guard = DraftGuard(language)
        self._shown = ""  # the model's text behind the last report ("" = nothing visible)
        self._sent = ""  # the last view reported
        self._last_at = 0.0
        self._task: asyncio.Task[None] | None = None

    @property
    def visible(self) -> bool:
        return bool(self._shown)

    async def update(self, text: str) -> None:
        """The whole partial answer so far; reported when the throttle allows."""
        raw, text = text, text.strip()
        if not text or text == self._shown or (self._task is not None and not self._task.done()):
            return
        if self._shown:
            grown = len(text) - len(self._shown)
            if self._clock() - self._last_at < self._min_interval or grown < self._min_chars:
                return
        view = self._guard.view(raw).strip()  # the raw text: its trailing blank completes a word
        if not view or view == self._sent:
            return  # nothing safe to show yet (a word or a code block still being written)
        self._shown, self._sent, self._last_at = text, view, self._clock()
        self._task = asyncio.create_task(self._send(view))

    async def clear(self) -> None:
        """Withdraw a visible draft (the turn went on to call tools)."""
        await self.settle()
        self._guard = DraftGuard(self._language)  # the next turn's text starts afresh
        if self._shown:
            self._shown = self._sent = ""
            await self._send("")

    async def clear_any(self) -> None:
        """Withdraw whatever draft another reporter may have left (this one never showed any)."""
        await self._send("")

    async def settle(self) -> None:
        """Wait for the report in flight, so nothing arrives after the caller moves on."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _send(self, text: str) -> None:
        # Drafts are cosmetic: a failing or stuck platform edit must not end or stall the answer.
        try:
            async with asyncio.timeout(PROGRESS_TIMEOUT_SECONDS):
                await self._progress(Progress(text, stage=DRAFT_STAGE, language=self._language))
        except Exception as exc:
            log.warning("draft progress failed: %s", type(exc).__name__)
