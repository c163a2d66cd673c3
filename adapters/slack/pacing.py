"""About one new message per second per channel, shared by every process through Redis.

Slack allows roughly 1 chat.postMessage per second per channel (short bursts tolerated).
The shared pacer (adapters/common/pacing.py) reserves each channel's next free slot
atomically in Redis; 429s that still happen are retried by slack_sdk's rate-limit handler
with Retry-After.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis

from adapters.common.pacing import Pacer, Rate
from core.keys import Keys


class ChannelPacer:
    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        interval_seconds: float,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._pacer = Pacer(redis, keys, "slack", sleep)
        self._rate = Rate(interval_seconds)

    async def reserve(self, channel: str) -> float:
        """Reserve the channel's next slot; returns the seconds to wait before posting."""
        return await self._pacer.reserve(channel, self._rate)

    async def wait(self, channel: str) -> None:
        """Sleep until this channel may take one more message. Never raises: pacing is best effort."""
        await self._pacer.wait(channel, self._rate)
