"""About one new message per second per channel, shared by every process through Redis.

Slack allows roughly 1 chat.postMessage per second per channel (short bursts tolerated).
A process-local limiter would let N workers post N times faster, so each post reserves
the channel's next free slot atomically in Redis (time taken from the Redis server, so
clocks of different hosts do not matter) and sleeps until it. 429s that still happen are
retried by slack_sdk's rate-limit handler with Retry-After.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from core.keys import Keys

log = logging.getLogger(__name__)

# KEYS[1] next free slot (ms). ARGV[1] interval ms. Returns how long the caller waits (ms).
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local free = tonumber(redis.call('GET', KEYS[1]) or '0')
local start = math.max(now, free)
local interval = tonumber(ARGV[1])
redis.call('SET', KEYS[1], start + interval, 'PX', start - now + interval + 1000)
return start - now
"""

MAX_WAIT_SECONDS = 30.0  # beyond this the backlog is a bug or an outage: post and let 429 handling cope


class ChannelPacer:
    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        interval_seconds: float,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._redis = redis
        self._keys = keys
        self._interval_ms = max(0, int(interval_seconds * 1000))
        self._script = redis.register_script(_RESERVE)
        self._sleep = sleep

    async def reserve(self, channel: str) -> float:
        """Reserve the channel's next slot; returns the seconds to wait before posting."""
        if self._interval_ms == 0:
            return 0.0
        key = self._keys.adapter_state("slack", f"pace:{channel}")
        waited_ms = await self._script(keys=[key], args=[self._interval_ms])
        return min(int(waited_ms) / 1000.0, MAX_WAIT_SECONDS)

    async def wait(self, channel: str) -> None:
        """Sleep until this channel may take one more message. Never raises: pacing is best effort."""
        try:
            delay = await self.reserve(channel)
        except (RedisError, OSError):
            log.warning("pacing unavailable (redis error); posting without it")
            return
        if delay > 0:
            await self._sleep(delay)
