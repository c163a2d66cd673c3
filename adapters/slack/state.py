"""Slack state kept in Redis, so every web and worker process sees the same.

- engaged threads: threads the bot answers in, so follow-ups need no new mention;
- job deliveries: which parts of a reply a job already posted (and its placeholder), so a
  re-run of the job after a crash edits or skips instead of posting twice;
- feedback: who found which answer helpful, under the answer's trace id.
"""
from __future__ import annotations

import json
import time

from redis.asyncio import Redis

from adapters.common.feedback import note_feedback
from adapters.common.records import DeliveryRecords
from core.keys import Keys

PLATFORM = "slack"
FEEDBACK_TTL_SECONDS = 180 * 24 * 3600


class EngagedThreads:
    def __init__(self, redis: Redis, keys: Keys, ttl_seconds: int) -> None:
        self._redis, self._keys, self._ttl = redis, keys, ttl_seconds

    @property
    def ttl(self) -> int:
        return self._ttl

    def key(self, team: str, channel: str, thread_ts: str) -> str:
        # an ingress marker: the ingress script checks and sets it with the job, in one round trip
        return self._keys.marker(PLATFORM, f"thread:{team}:{channel}:{thread_ts}")

    async def mark(self, team: str, channel: str, thread_ts: str) -> None:
        await self._redis.set(self.key(team, channel, thread_ts), "1", ex=self._ttl)

    async def is_engaged(self, team: str, channel: str, thread_ts: str) -> bool:
        return bool(await self._redis.exists(self.key(team, channel, thread_ts)))


class JobDeliveries(DeliveryRecords):
    """Slack's per-job delivery records: the shared store (adapters/common/records.py) under "slack"."""

    def __init__(self, redis: Redis, keys: Keys, ttl_seconds: int) -> None:
        super().__init__(redis, keys, PLATFORM, ttl_seconds)


async def record_feedback(
    redis: Redis, keys: Keys, *, trace_id: str, workspace: str, user: str, value: str, channel: str, message_ts: str
) -> None:
    """One vote per person per answer (a later click replaces the earlier one)."""
    entry = json.dumps(
        {"platform": PLATFORM, "workspace": workspace, "user": user, "value": value,
         "channel": channel, "message_ts": message_ts, "at": int(time.time())},
        separators=(",", ":"),
    )
    async with redis.pipeline(transaction=True) as pipe:
        pipe.hset(keys.feedback(trace_id), f"{PLATFORM}:{workspace}:{user}", entry)
        pipe.expire(keys.feedback(trace_id), FEEDBACK_TTL_SECONDS)
        note_feedback(pipe, keys, trace_id)
        await pipe.execute()
