"""Atomic per-user and per-channel rate limits and a global daily token budget, in Redis.

Counters are fixed windows kept by one Lua call each, so every web and worker
replica sees the same numbers (no process-local limits).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from redis.asyncio import Redis

from core.keys import Keys

# KEYS[1] counter. ARGV: window seconds. Returns {count, ttl}.
_HIT = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1])) end
return {n, redis.call('TTL', KEYS[1])}
"""


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    retry_after_seconds: int = 0
    first_refusal: bool = False  # tell the user once per window, not on every message


class RateLimiter:
    def __init__(self, redis: Redis, keys: Keys, per_user_hour: int, per_channel_hour: int, window: int = 3600) -> None:
        self._redis = redis
        self._keys = keys
        self._limits = {"user": per_user_hour, "channel": per_channel_hour}
        self._window = window
        self._hit = redis.register_script(_HIT)

    async def check(self, platform: str, channel: str, user: str) -> Verdict:
        bucket = int(time.time() // self._window)
        for scope, ident in (("user", f"{platform}:{user}"), ("channel", f"{platform}:{channel}")):
            limit = self._limits[scope]
            if limit <= 0:
                continue
            key = self._keys.rate(scope, ident, bucket)
            count, ttl = await self._hit(keys=[key], args=[self._window])
            if int(count) > limit:
                told = await self._redis.set(key + ":told", "1", nx=True, ex=max(int(ttl), 1))
                return Verdict(False, max(int(ttl), 1), first_refusal=bool(told))
        return Verdict(True)


class TokenBudget:
    """The model tokens all users may spend per UTC day; past it, answers fall back to offline triage."""

    def __init__(self, redis: Redis, keys: Keys, daily_limit: int) -> None:
        self._redis = redis
        self._keys = keys
        self._limit = daily_limit

    def _key(self) -> str:
        return self._keys.tokens_today(time.strftime("%Y-%m-%d", time.gmtime()))

    async def exhausted(self) -> bool:
        if self._limit <= 0:
            return False
        spent = await self._redis.get(self._key())
        return int(spent or 0) >= self._limit

    async def spend(self, tokens: int) -> int:
        key = self._key()
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.incrby(key, max(int(tokens), 0))
            pipe.expire(key, 2 * 24 * 3600)
            total, _ = await pipe.execute()
        return int(total)
