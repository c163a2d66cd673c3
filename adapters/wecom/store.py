"""Redis state the WeCom adapter owns: stream bubbles, clarification cards, feedback.

A stream bubble is pulled (API mode: WeCom's refresh callbacks, answered by any
web replica) or pushed (long connection) until `finish:true`. Its state lives
in one Redis hash, changed only by the Lua scripts below, so the worker writing
the answer and a web replica closing an overdue stream never both win.
"""
from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from adapters.common.choices import ChoiceStore
from adapters.common.feedback import note_feedback
from core.keys import Keys

PLATFORM = "wecom"
STREAM_TTL_SECONDS = 24 * 3600  # refreshes stop after 6 min; feedback can come later
FEEDBACK_TTL_SECONDS = 90 * 24 * 3600

_OPEN = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1]))
return 1
"""

_PROGRESS = """
local s = redis.call('HMGET', KEYS[1], 'finished', 'closed')
if not s[1] then return -1 end
if s[1] == '1' or s[2] == '1' then return 0 end
redis.call('HSET', KEYS[1], 'content', ARGV[1])
return 1
"""

# ARGV: content, card, answer, trace_id, now, note
# -1 unknown stream, 1 written on time, 2 already finished (re-run),
#  0 too late (first time: deliver elsewhere), 3 too late and already handed over
_FINISH = """
local s = redis.call('HMGET', KEYS[1], 'finished', 'closed', 'deadline', 'content')
if not s[1] then return -1 end
redis.call('HSET', KEYS[1], 'answer', ARGV[3], 'trace_id', ARGV[4])
if s[1] == '1' then return 2 end
if s[2] == '1' or tonumber(ARGV[5]) > tonumber(s[3]) then
  if s[2] ~= '1' then
    redis.call('HSET', KEYS[1], 'closed', '1', 'content', s[4] .. '\\n\\n' .. ARGV[6])
  end
  if redis.call('HSETNX', KEYS[1], 'late', '1') == 1 then return 0 end
  return 3
end
redis.call('HSET', KEYS[1], 'content', ARGV[1], 'card', ARGV[2], 'finished', '1')
return 1
"""

# ARGV: now, note_zh, note_en. Returns {content, status, card}; status 0 open, 1 finished,
# 2 closed by this call (overdue), 3 closed earlier. nil for an unknown stream.
_REFRESH = """
local s = redis.call('HMGET', KEYS[1], 'content', 'finished', 'closed', 'deadline', 'card', 'card_sent', 'language')
if not s[2] then return false end
if s[2] == '1' then
  local card = ''
  if s[5] and s[5] ~= '' and s[6] ~= '1' then
    redis.call('HSET', KEYS[1], 'card_sent', '1')
    card = s[5]
  end
  return {s[1], 1, card}
end
if s[3] == '1' then return {s[1], 3, ''} end
if tonumber(ARGV[1]) > tonumber(s[4]) then
  local note = ARGV[3]
  if s[7] == 'zh' then note = ARGV[2] end
  local c = s[1] .. '\\n\\n' .. note
  redis.call('HSET', KEYS[1], 'content', c, 'closed', '1')
  return {c, 2, ''}
end
return {s[1], 0, ''}
"""


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _s(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else ("" if value is None else str(value))


@dataclass(frozen=True)
class StreamView:
    content: str
    status: int  # 0 open, 1 finished, 2 closed now (overdue), 3 closed earlier
    card: dict[str, Any] | None

    @property
    def finish(self) -> bool:
        return self.status != 0


class StreamStore:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys
        self._open = redis.register_script(_OPEN)
        self._progress = redis.register_script(_PROGRESS)
        self._finish = redis.register_script(_FINISH)
        self._refresh = redis.register_script(_REFRESH)

    def _key(self, stream_id: str) -> str:
        return self._keys.adapter_state(PLATFORM, f"stream:{_digest(stream_id)}")

    @property
    def deadlines_key(self) -> str:
        return self._keys.adapter_state(PLATFORM, "stream-deadlines")

    async def claim(self, msgid: str, ttl: int) -> tuple[str, bool]:
        """The stream id for a message: a new one, or the one a redelivery of it already got."""
        key = self._keys.adapter_state(PLATFORM, f"msg-stream:{_digest(msgid)}")
        stream_id = "s" + secrets.token_hex(12)
        if await self._redis.set(key, stream_id, nx=True, ex=ttl):
            return stream_id, True
        existing = await self._redis.get(key)
        return (_s(existing), False) if existing else (stream_id, True)

    async def open(self, stream_id: str, content: str, window_seconds: float, **meta: str) -> bool:
        deadline = time.time() + window_seconds
        fields: list[str] = ["content", content, "finished", "0", "closed", "0", "deadline", repr(deadline)]
        for name, value in meta.items():
            fields += [name, value]
        created = bool(await self._open(keys=[self._key(stream_id)], args=[STREAM_TTL_SECONDS, *fields]))
        if created and meta.get("mode") == "ws":
            await self._redis.zadd(self.deadlines_key, {stream_id: deadline})
        return created

    async def progress(self, stream_id: str, content: str) -> bool:
        return int(await self._progress(keys=[self._key(stream_id)], args=[content])) == 1

    async def finish(
        self, stream_id: str, content: str, *, card: dict[str, Any] | None, answer: str, trace_id: str, note: str
    ) -> int:
        result = await self._finish(
            keys=[self._key(stream_id)],
            args=[content, json.dumps(card, ensure_ascii=False) if card else "", answer, trace_id, time.time(), note],
        )
        await self._redis.zrem(self.deadlines_key, stream_id)
        return int(result)

    async def refresh(self, stream_id: str, notes: dict[str, str], now: float | None = None) -> StreamView | None:
        """The bubble's current state; an overdue open stream is closed with the note in its language."""
        when = now if now is not None else time.time()
        raw = await self._refresh(keys=[self._key(stream_id)], args=[when, notes["zh"], notes["en"]])
        if not raw:
            return None
        card = _s(raw[2])
        return StreamView(_s(raw[0]), int(raw[1]), json.loads(card) if card else None)

    async def fields(self, stream_id: str, *names: str) -> dict[str, str]:
        values = await self._redis.hmget(self._key(stream_id), list(names))
        return {n: _s(v) for n, v in zip(names, values) if v is not None}

    async def overdue(self, now: float | None = None, limit: int = 50) -> list[str]:
        now = now if now is not None else time.time()
        raw = await self._redis.zrangebyscore(self.deadlines_key, "-inf", now, start=0, num=limit)
        return [_s(r) for r in raw]

    async def forget_deadline(self, stream_id: str) -> None:
        await self._redis.zrem(self.deadlines_key, stream_id)


class CardStore:
    """What a clarification card's buttons mean, so a click can be checked and resumed: WeCom's
    face of the shared choices store (adapters/common/choices.py), keyed by the card's task_id."""

    def __init__(self, redis: Redis, keys: Keys, ttl_seconds: int) -> None:
        self.choices = ChoiceStore(redis, keys, PLATFORM, ttl_seconds)

    async def save(self, task_id: str, record: dict[str, Any]) -> None:
        """`record`: {"options": {key: label}, "language": ..., and what the answer needs later}."""
        extra = {k: v for k, v in record.items() if k not in ("options", "language")}
        options = dict(record.get("options") or {}).items()
        await self.choices.save(options, str(record.get("language") or "zh"), token=task_id, extra=extra)

    async def load(self, task_id: str) -> dict[str, Any] | None:
        found = await self.choices.load(task_id)
        if found is None:
            return None
        return {"options": {c.key: c.label for c in found.options}, "language": found.language, **found.extra}


class FeedbackStore:
    """Thumbs up/down from `feedback_event`, kept next to the answer they judge."""

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    async def record(
        self, *, trace_id: str, feedback_id: str, user_id: str, entry: dict[str, Any], answer: str
    ) -> str:
        key = self._keys.feedback(trace_id or f"wecom-{feedback_id}")
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hsetnx(key, "answer", answer)
            pipe.hset(key, "platform", PLATFORM)
            pipe.hset(key, "feedback_id", feedback_id)
            pipe.hset(key, f"user:{user_id}", json.dumps(entry, ensure_ascii=False))
            pipe.expire(key, FEEDBACK_TTL_SECONDS)
            if trace_id:  # a vote the bot cannot tie to an answer has no place in the report
                note_feedback(pipe, self._keys, trace_id)
            await pipe.execute()
        return key
