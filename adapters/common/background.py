"""Fire-and-forget platform calls made after a webhook is answered (button follow-ups,
callback answers), kept so shutdown can wait for them instead of dropping them."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

log = logging.getLogger(__name__)


class BackgroundTasks:
    def __init__(self, name: str) -> None:
        self._name = name  # the platform, for the log line
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Awaitable[Any]) -> None:
        async def run() -> None:
            try:
                await coro
            except Exception as exc:  # noqa: BLE001 - cosmetic follow-ups must not surface
                # the type only: an error's text may quote a request URL (with a token in it)
                log.info("%s follow-up call failed: %s", self._name, type(exc).__name__)

        task = asyncio.ensure_future(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self, timeout: float = 5.0) -> None:
        if not self._tasks:
            return
        _, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
        for task in pending:
            task.cancel()
