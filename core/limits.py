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


# KEYS[1] counter. ARGV: tokens (may be negative), ttl. INCRBY and EXPIRE in one step, one key per
# call (Cluster-safe: the shared and the per-user counters hash to different slots).
_ADD = """
local n = redis.call('INCRBY', KEYS[1], tonumber(ARGV[1]))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return n
"""
# KEYS[1] counter. ARGV: tokens, limit (0: none), ttl. Adds the tokens only if they fit under the
# limit, in one step: two answers checking at once cannot both take the last of a budget.
# Returns the new count, or -1 (refused, nothing added).
_HOLD = """
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
local tokens = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
if limit > 0 and (spent >= limit or spent + tokens > limit) then return -1 end
local n = redis.call('INCRBY', KEYS[1], tokens)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return n
"""
_COUNTER_TTL = 2 * 24 * 3600  # a UTC day, plus slack for clocks and late settlements


def budget_user(message: InboundMessage) -> str:
    """Whose share a question spends: the sender on one platform and workspace (WeCom and Feishu ids
    are unique only inside one organisation)."""
    return f"{message.platform}:{message.workspace}:{message.sender}"


@dataclass(frozen=True)
class Reservation:
    """What one answer holds of today's budgets until it is settled with its real usage."""

    state: BudgetState
    user: str = ""
    day: str = ""  # settled on the day it was taken, even when the answer ends after midnight
    shared: int = 0  # tokens held on the shared counter
    own: int = 0  # tokens held on the user's counter


class TokenBudget:
    """The model tokens all users may spend per UTC day, and one user's share of it.

    Past either, answers fall back to offline triage. Before an answer, `reserve` holds an estimate
    of its cost on both counters, atomically and only if it fits; `settle` then replaces the
    estimate with the real usage. So concurrent questions cannot together pass a budget by more
    than what their answers cost beyond the estimate. An answer that fails before settling keeps
    its estimate charged (never undercounted).
    """

    def __init__(
        self, redis: Redis, keys: Keys, daily_limit: int, user_daily_limit: int = 0, reserve: int = 0
    ) -> None:
        self._redis = redis
        self._keys = keys
        self._limit = daily_limit
        self._user_limit = user_daily_limit
        self._reserve = max(int(reserve), 0)  # the estimated cost of one answer
        self._add = redis.register_script(_ADD)
        self._hold = redis.register_script(_HOLD)

    @staticmethod
    def _day() -> str:
        return time.strftime("%Y-%m-%d", time.gmtime())

    async def reserve(self, user: str) -> Reservation:
        """Holds one answer's estimate for `user`, or says which budget is spent (the shared one
        first: it says more). An estimate above a limit holds the whole limit, so a budget smaller
        than the estimate still allows one answer a day."""
        day = self._day()
        shared_key, user_key = self._keys.tokens_today(day), self._keys.user_tokens_today(day, user)
        shared = self._estimate_under(self._limit)
        if await self._hold(keys=[shared_key], args=[shared, self._limit, _COUNTER_TTL]) < 0:
            return Reservation(BudgetState.ALL_SPENT)
        own = self._estimate_under(self._user_limit)
        if await self._hold(keys=[user_key], args=[own, self._user_limit, _COUNTER_TTL]) < 0:
            await self._add(keys=[shared_key], args=[-shared, _COUNTER_TTL])  # give the shared hold back
            return Reservation(BudgetState.USER_SPENT)
        return Reservation(BudgetState.OPEN, user, day, shared, own)

    async def settle(self, reservation: Reservation, tokens: int) -> None:
        """Replaces the reservation's estimate by the `tokens` the answer really used."""
        if reservation.state is not BudgetState.OPEN:
            return
        used = max(int(tokens), 0)
        day = reservation.day
        await self._add(keys=[self._keys.tokens_today(day)], args=[used - reservation.shared, _COUNTER_TTL])
        await self._add(
            keys=[self._keys.user_tokens_today(day, reservation.user)], args=[used - reservation.own, _COUNTER_TTL]
        )

    def _estimate_under(self, limit: int) -> int:
        return min(self._reserve, limit) if limit > 0 else self._reserve
