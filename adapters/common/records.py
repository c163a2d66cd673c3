"""What one job already delivered, kept in Redis so a re-run after a crash edits instead of posting.

One hash per job and platform: `placeholder` (the message that shows progress and becomes the
answer), `streamed` (a reply delivered in full by a native stream), `part:<n>` (the message ids
of rendered part n, comma-separated: one part can land as several messages when a platform
falls back to plain text), any platform extras (`x:<name>`, e.g. a Feishu CardKit entity), and
`finished` (the worker's mark: the whole reply is out, a re-run only acknowledges the job).
The worker may run a job twice (lease expiry, crash); every platform and the worker read the
same record, so a job's delivery leaves one key in Redis.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from redis.asyncio import Redis

from core.keys import Keys

_PART = "part:"
_EXTRA = "x:"
_FINISHED = "finished"

# KEYS: the record. ARGV: the reply's message ids, the least ttl. One round trip; the record lives
# at least `ttl` from now, and a platform's longer ttl (Feishu, WeCom: a day) is never shortened.
_MARK_FINISHED = """
redis.call('HSET', KEYS[1], 'finished', ARGV[1])
if redis.call('TTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
"""


@dataclass
class DeliveryRecord:
    placeholder: str = ""
    streamed: str = ""
    parts: dict[int, tuple[str, ...]] = field(default_factory=dict)
    extra: dict[str, str] = field(default_factory=dict)

    def delivered(self) -> list[str]:
        """Every message id of the reply, in part order."""
        return [i for n in sorted(self.parts) for i in self.parts[n]]


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class DeliveryRecords:
    def __init__(self, redis: Redis, keys: Keys, platform: str, ttl_seconds: int) -> None:
        self._redis, self._keys, self._platform, self._ttl = redis, keys, platform, ttl_seconds

    def key(self, job_id: str) -> str:
        return self._keys.adapter_state(self._platform, f"delivery:{job_id}")

    async def load(self, job_id: str) -> DeliveryRecord:
        record = DeliveryRecord()
        for k, v in (await self._redis.hgetall(self.key(job_id))).items():
            name, value = _text(k), _text(v)
            if name == "placeholder":
                record.placeholder = value
            elif name == "streamed":
                record.streamed = value
            elif name.startswith(_PART) and name[len(_PART):].isdigit():
                record.parts[int(name[len(_PART):])] = tuple(i for i in value.split(",") if i)
            elif name.startswith(_EXTRA):
                record.extra[name[len(_EXTRA):]] = value
        return record

    async def _set(self, job_id: str, name: str, value: str) -> None:
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(self.key(job_id), name, value)
            pipe.expire(self.key(job_id), self._ttl)
            await pipe.execute()

    async def save_placeholder(self, job_id: str, message_id: str) -> None:
        await self._set(job_id, "placeholder", message_id)

    async def save_streamed(self, job_id: str, message_id: str) -> None:
        await self._set(job_id, "streamed", message_id)

    async def save_part(self, job_id: str, index: int, message_ids: tuple[str, ...]) -> None:
        await self._set(job_id, f"{_PART}{index}", ",".join(message_ids))

    async def save_extra(self, job_id: str, name: str, value: str) -> None:
        await self._set(job_id, f"{_EXTRA}{name}", value)

    async def mark_finished(self, job_id: str, message_ids: tuple[str, ...]) -> None:
        """The whole reply is delivered: a later run of the job (its ack was lost) must not answer again."""
        await self._redis.eval(_MARK_FINISHED, 1, self.key(job_id), ",".join(message_ids) or "-", self._ttl)

    async def is_finished(self, job_id: str) -> bool:
        return bool(await self._redis.hexists(self.key(job_id), _FINISHED))

    async def next_sequence(self, job_id: str, name: str = "seq") -> int:
        """A counter that only grows across workers and re-runs (CardKit's `sequence`)."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hincrby(self.key(job_id), f"{_EXTRA}{name}", 1)
            pipe.expire(self.key(job_id), self._ttl)
            value, _ = await pipe.execute()
        return int(value)
