"""Slack state kept in Redis, so every web and worker process sees the same.

- engaged threads: threads the bot answers in, so follow-ups need no new mention;
- job deliveries: which parts of a reply a job already posted (and its placeholder), so a
  re-run of the job after a crash edits or skips instead of posting twice;
- feedback: who found which answer helpful, under the answer's trace id.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from redis.asyncio import Redis

from core.keys import Keys

PLATFORM = "slack"
FEEDBACK_TTL_SECONDS = 180 * 24 * 3600


class EngagedThreads:
    def __init__(self, redis: Redis, keys: Keys, ttl_seconds: int) -> None:
        self._redis, self._keys, self._ttl = redis, keys, ttl_seconds

    def _key(self, team: str, channel: str, thread_ts: str) -> str:
        return self._keys.adapter_state(PLATFORM, f"thread:{team}:{channel}:{thread_ts}")

    async def mark(self, team: str, channel: str, thread_ts: str) -> None:
        await self._redis.set(self._key(team, channel, thread_ts), "1", ex=self._ttl)

    async def is_engaged(self, team: str, channel: str, thread_ts: str) -> bool:
        return bool(await self._redis.exists(self._key(team, channel, thread_ts)))


@dataclass
class JobRecord:
    """What one job already posted: part index → message ts, and its placeholder ts."""

    placeholder: str = ""
    parts: dict[int, str] = field(default_factory=dict)
    streamed: str = ""


class JobDeliveries:
    def __init__(self, redis: Redis, keys: Keys, ttl_seconds: int) -> None:
        self._redis, self._keys, self._ttl = redis, keys, ttl_seconds

    def _key(self, job_id: str) -> str:
        return self._keys.adapter_state(PLATFORM, f"job:{job_id}")

    async def load(self, job_id: str) -> JobRecord:
        raw = await self._redis.hgetall(self._key(job_id))
        record = JobRecord()
        for k, v in raw.items():
            name = k.decode() if isinstance(k, bytes) else k
            value = v.decode() if isinstance(v, bytes) else v
            if name == "placeholder":
                record.placeholder = value
            elif name == "streamed":
                record.streamed = value
            elif name.startswith("part:") and name[5:].isdigit():
                record.parts[int(name[5:])] = value
        return record

    async def save(self, job_id: str, name: str, ts: str) -> None:
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(self._key(job_id), name, ts)
            pipe.expire(self._key(job_id), self._ttl)
            await pipe.execute()


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
        await pipe.execute()
