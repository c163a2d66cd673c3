"""Atomic per-user and per-channel rate limits and daily token budgets (shared and per user), in Redis.

Counters are fixed windows kept by one Lua call each, so every web and worker
replica sees the same numbers (no process-local limits).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from enum import Enum

from redis.asyncio import Redis

from core.keys import Keys
from core.messages import InboundMessage

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


class BudgetState(str, Enum):
    OPEN = "open"
    USER_SPENT = "user_spent"  # this user's share of today is used up; others go on
    ALL_SPENT = "all_spent"  # the shared daily budget is used up


# KEYS[1] counter. ARGV: tokens, ttl. INCRBY and EXPIRE in one step, one key per call (Cluster-safe).
_ADD = """
local n = redis.call('INCRBY', KEYS[1], tonumber(ARGV[1]))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return n
"""
_COUNTER_TTL = 2 * 24 * 3600  # a UTC day, plus slack for clocks and late spends


def budget_user(message: InboundMessage) -> str:
    """Whose share a question spends: the sender on one platform and workspace (WeCom and Feishu ids
    are unique only inside one organisation)."""
    return f"{message.platform}:{message.workspace}:{message.sender}"


class TokenBudget:
    """The model tokens all users may spend per UTC day, and one user's share of it.

    Past either, answers fall back to offline triage. Spending is counted after an answer
    (the cost is known only then), so concurrent questions can overshoot by what is in flight.
    """

    def __init__(self, redis: Redis, keys: Keys, daily_limit: int, user_daily_limit: int = 0) -> None:
        self._redis = redis
        self._keys = keys
        self._limit = daily_limit
        self._user_limit = user_daily_limit
        self._add = redis.register_script(_ADD)

    @staticmethod
    def _day() -> str:
        return time.strftime("%Y-%m-%d", time.gmtime())

    def _key(self) -> str:
        return self._keys.tokens_today(self._day())

    def _user_key(self, user: str) -> str:
        return self._keys.user_tokens_today(self._day(), user)

    async def exhausted(self) -> bool:
        if self._limit <= 0:
            return False
        spent = await self._redis.get(self._key())
        return int(spent or 0) >= self._limit

    async def state(self, user: str) -> BudgetState:
        """Whether `user` may ask the model now (the shared budget is checked first: it says more)."""
        if await self.exhausted():
            return BudgetState.ALL_SPENT
        if self._user_limit > 0:
            spent = await self._redis.get(self._user_key(user))
            if int(spent or 0) >= self._user_limit:
                return BudgetState.USER_SPENT
        return BudgetState.OPEN

    async def spend(self, tokens: int, user: str | None = None) -> int:
        """Adds `tokens` to today's shared count (and to `user`'s); returns the shared total."""
        amount = max(int(tokens), 0)
        total = await self._add(keys=[self._key()], args=[amount, _COUNTER_TTL])
        if user is not None:
            await self._add(keys=[self._user_key(user)], args=[amount, _COUNTER_TTL])
        return int(total)
