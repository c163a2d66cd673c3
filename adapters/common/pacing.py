"""Message pacing shared by every process through Redis (Slack channels, Telegram chats).

Platforms limit how fast a bot may post into one conversation (Slack: about one message a
second per channel; Telegram: about one a second per chat, 20 a minute per group). A
process-local limiter lets N workers post N times faster, so each post reserves a slot
atomically in Redis with the generic cell rate algorithm: up to `burst` posts at once, then
one per `interval`. Time comes from the Redis server, so clocks of different hosts do not
matter. Pacing is best effort: a Redis error posts without it (429 handling still copes).
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

from core.keys import Keys

log = logging.getLogger(__name__)

# KEYS[1] theoretical arrival time (ms). ARGV[1] interval ms, ARGV[2] burst. Returns the wait (ms).
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
local wait = math.max(0, tat - now - (tonumber(ARGV[2]) - 1) * interval)
redis.call('SET', KEYS[1], tat + interval, 'PX', tat - now + interval + 1000)
return wait
"""

MAX_WAIT_SECONDS = 30.0  # beyond this the backlog is a bug or an outage: post and let 429 handling cope


@dataclass(frozen=True)
class Rate:
    interval: float  # seconds between two posts once the burst is spent
    burst: int = 1  # posts allowed back to back


class Pacer:
    """Reserves posting slots per (platform, scope) key, shared by every process."""

    def __init__(
        self, redis: Redis, keys: Keys, platform: str, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    ) -> None:
        self._keys = keys
        self._platform = platform
        self._script = redis.register_script(_RESERVE)
        self._sleep = sleep

    async def reserve(self, scope: str, rate: Rate) -> float:
        """Reserve the next slot of `scope`; returns the seconds to wait before posting."""
        interval_ms = max(0, int(rate.interval * 1000))
        if interval_ms == 0:
            return 0.0
        key = self._keys.adapter_state(self._platform, f"pace:{scope}")
        waited_ms = await self._script(keys=[key], args=[interval_ms, max(1, rate.burst)])
        return min(int(waited_ms) / 1000.0, MAX_WAIT_SECONDS)

    async def wait(self, scope: str, rate: Rate) -> None:
        """Sleep until `scope` may take one more post. Never raises: pacing is best effort."""
        try:
            delay = await self.reserve(scope, rate)
        except (RedisError, OSError):
            log.warning("%s pacing unavailable (redis error); posting without it", self._platform)
            return
        if delay > 0:
            await self._sleep(delay)
