"""Streamed answer drafts, throttled, reported through the progress callback.

Platforms edit a message (or a card) for each draft and most rate-limit
edits, so drafts go out at most every `min_interval` seconds *and* only once
`min_chars` new characters arrived; the first text goes out at once, since
time to first text is what the user feels. Reports run in the background so
a slow platform edit never holds up reading the model's stream; while one is
in flight newer text simply waits for the next report.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from core.messages import DRAFT_STAGE, Language, Progress

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
        self._shown = ""  # the last text reported ("" = nothing visible)
        self._last_at = 0.0
        self._task: asyncio.Task[None] | None = None

    @property
    def visible(self) -> bool:
        return bool(self._shown)

    async def update(self, text: str) -> None:
        """The whole partial answer so far; reported when the throttle allows."""
        text = text.strip()
        if not text or text == self._shown or (self._task is not None and not self._task.done()):
            return
        if self._shown:
            grown = len(text) - len(self._shown)
            if self._clock() - self._last_at < self._min_interval or grown < self._min_chars:
                return
        self._shown, self._last_at = text, self._clock()
        self._task = asyncio.create_task(self._send(text))

    async def clear(self) -> None:
        """Withdraw a visible draft (the turn went on to call tools)."""
        await self.settle()
        if self._shown:
            self._shown = ""
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
