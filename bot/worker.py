"""The worker: takes jobs from the Redis Stream and answers them through the platform adapter.

At-least-once with one visible answer: a job is acked only after its reply is
delivered; a worker renews its lease while it works, so only a dead (or cut off)
worker's jobs are reclaimed, and a worker checks it still owns a job right
before posting; a delivery record makes a re-run skip instead of posting twice;
after N attempts the job is dead-lettered and the user gets an apology.
Messages of one conversation are answered in arrival order.
"""
from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from typing import Any

from redis.exceptions import RedisError, ResponseError

from adapters.base import Delivered, Responder
from bot.logs import job_context
from bot.retention import dead_letter_bounds, trim_settled_jobs
from bot.wiring import Components
from core.messages import InboundMessage, Progress, Reply, ReplyKind
from core.texts import text

log = logging.getLogger(__name__)

GROUP = "workers"
BLOCK_MS = 1000
REDIS_RETRIES_PER_JOB = 6
TRIM_EVERY_SECONDS = 60.0  # the safety sweep of settled jobs; finished jobs are deleted at once anyway

# KEYS[1] stream. ARGV: group, consumer, job id. Renew our claim only while we still own the job:
# 1 renewed, 0 another worker took it over (our lease lapsed), -1 no longer pending (acked).
_RENEW_IF_OWNER = """
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1)
if #p == 0 then return -1 end
if p[1][2] ~= ARGV[2] then return 0 end
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'JUSTID')
return 1
"""


def consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{id(object()):x}"


class Worker:
    def __init__(self, components: Components, name: str | None = None) -> None:
        self.c = components
        self.name = name or consumer_name()
        self._slots = asyncio.Semaphore(components.settings.worker_concurrency)
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopping = asyncio.Event()
        self._last_claim = 0.0
        self._last_trim = -TRIM_EVERY_SECONDS  # sweep once at startup
        self._renew = components.redis.register_script(_RENEW_IF_OWNER)
        # Replies already delivered by a run of the job in this process whose bookkeeping then
        # failed on Redis: the in-process retry records them instead of posting again.
        self._delivered: dict[str, Delivered] = {}

    # --- lifecycle ---------------------------------------------------------------------------

    async def ensure_group(self) -> None:
        try:
            await self.c.redis.xgroup_create(self.c.keys.jobs, GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        """Consume until stop(); then finish the jobs in hand (their leases cover the rest)."""
        backoff = 0.5
        while not self._stopping.is_set():
            try:
                await self.ensure_group()
                await self._sweep_settled()
                await self._consume_once()
                backoff = 0.5
            except (RedisError, OSError) as exc:
                # Down, restarting or still loading its data: back off and try again, never crash.
                log.warning("redis unavailable (%s); retrying in %.1fs", type(exc).__name__, backoff)
                await self._sleep(backoff)
                backoff = min(backoff * 2, 10.0)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _sleep(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self._stopping.wait(), timeout=seconds)
        except TimeoutError:
            pass

    async def _consume_once(self) -> None:
        await self._slots.acquire()
        released = False
        try:
            entries = await self._reclaim() or await self._read_new()
            if not entries:
                return
            job_id, fields = entries[0]
            if self._stopping.is_set():
                await self._release(job_id)  # read while shutting down: hand it straight back
                return
            released = True
            task = asyncio.create_task(self._run_job(job_id, fields))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        finally:
            if not released:
                self._slots.release()

    async def _read_new(self) -> list[tuple[str, dict]]:
        result = await self.c.redis.xreadgroup(GROUP, self.name, {self.c.keys.jobs: ">"}, count=1, block=BLOCK_MS)
        if not result:
            return []
        _, entries = result[0]
        return [(_s(i), f) for i, f in entries]

    async def _reclaim(self) -> list[tuple[str, dict]]:
        """Take over one job whose worker stopped renewing it for longer than the lease."""
        now = time.monotonic()
        if now - self._last_claim < 1.0:
            return []
        self._last_claim = now
        lease_ms = int(self.c.settings.job_lease_seconds * 1000)
        _, entries, *_ = await self.c.redis.xautoclaim(
            self.c.keys.jobs, GROUP, self.name, min_idle_time=lease_ms, start_id="0-0", count=1
        )
        found = [(_s(i), f) for i, f in entries if f]
        if found:
            self._last_claim = 0.0  # a dead worker may have left more: look again at once
        return found

    async def _release(self, job_id: str) -> None:
        """Make a job we will not work on immediately reclaimable by any other worker."""
        lease_ms = int(self.c.settings.job_lease_seconds * 1000)
        await self.c.redis.xclaim(
            self.c.keys.jobs, GROUP, self.name, min_idle_time=0, message_ids=[job_id], idle=lease_ms, justid=True
        )

    # --- one job ---------------------------------------------------------------------------

    async def _run_job(self, job_id: str, fields: dict) -> None:
        try:
            for attempt in range(REDIS_RETRIES_PER_JOB):
                try:
                    await self.process(job_id, fields)
                    return
                except (RedisError, OSError) as exc:
                    # Redis blinked mid-job: the job is still ours, so retry it here rather than
                    # leaving it for a lease to expire. Delivery records keep a re-run from posting twice.
                    log.warning("job %s hit %s; retrying", job_id, type(exc).__name__)
                    await self._sleep(min(0.5 * 2**attempt, 5.0))
            log.error("job %s kept failing on Redis; it stays pending and is reclaimed after its lease", job_id)
        except Exception:  # noqa: BLE001 - a job must never kill the worker
            log.exception("job %s failed; it stays pending and will be retried after its lease", job_id)
        finally:
            self._slots.release()

    async def process(self, job_id: str, fields: dict) -> None:
        keys, redis, settings = self.c.keys, self.c.redis, self.c.settings
        raw = fields.get(b"message") or fields.get("message")
        try:
            message = InboundMessage.from_json(raw)
        except (TypeError, ValueError):
            log.error("job %s has an unreadable payload; dead-lettering it", job_id)
            await self._dead_letter(job_id, fields, reason="unreadable", order_key=None)
            return
        job_context.set({"job_id": job_id, "conversation": message.conversation_key, "platform": message.platform})
        order_key = keys.order(message.conversation_key)
        finished = asyncio.Event()
        heartbeat = asyncio.create_task(self._renew_lease(job_id, finished))
        try:
            await self._wait_for_turn(job_id, order_key)
            earlier = self._delivered.get(job_id)
            if earlier is not None:  # delivered by an earlier run here; only the bookkeeping failed
                await redis.set(keys.delivery(job_id), ",".join(earlier.message_ids) or "-", ex=settings.dedupe_ttl_seconds)
                await self._complete(job_id, order_key)
                self._delivered.pop(job_id, None)
                return
            if await redis.exists(keys.delivery(job_id)):
                await self._complete(job_id, order_key)  # answered before a crash prevented the ack
                return
            attempts = await redis.incr(keys.attempts(job_id))
            await redis.expire(keys.attempts(job_id), settings.dedupe_ttl_seconds)
            adapter = self.c.adapters.get(message.platform)
            if adapter is None:
                log.error("job %s is for platform %s, which is not configured here", job_id, message.platform)
                await self._dead_letter(job_id, fields, reason="platform not configured", order_key=order_key)
                return
            responder = adapter.responder(message, job_id)
            if attempts > settings.job_max_deliveries:
                await self._give_up(job_id, fields, message, responder, order_key)
                return
            reply = await self._limited_reply(message)
            if reply is None:
                reply = await self._answer(job_id, message, responder)
            elif reply is _SILENT:
                if not adapter.capabilities.reply_opened_at_ingress:
                    await self._complete(job_id, order_key)
                    return
                reply = self._rate_notice(message, retry_after=0)  # an open bubble must be closed
            if await self._renew(keys=[keys.jobs], args=[GROUP, self.name, job_id]) != 1:
                # Our lease lapsed (e.g. Redis was away) and another worker owns the job now, or
                # finished it: it answers; posting here as well would answer twice.
                log.warning("job %s was taken over by another worker; not answering it here", job_id)
                return
            delivered = await responder.finish(reply)
            self._delivered[job_id] = delivered
            await redis.set(keys.delivery(job_id), ",".join(delivered.message_ids) or "-", ex=settings.dedupe_ttl_seconds)
            await self._complete(job_id, order_key)
            self._delivered.pop(job_id, None)
            self._observe(job_id, message, reply)
        finally:
            finished.set()  # cancel() alone can be swallowed inside a redis-py call on Python 3.11
            heartbeat.cancel()

    async def _limited_reply(self, message: InboundMessage) -> Reply | object | None:
        """A rate-limit notice (once per window), _SILENT after that, None when the user may go on."""
        if self.c.limiter is None:
            return None
        verdict = await self.c.limiter.check(message.platform, message.channel, message.sender)
        if verdict.allowed:
            return None
        if not verdict.first_refusal:
            return _SILENT
        return self._rate_notice(message, verdict.retry_after_seconds)

    @staticmethod
    def _rate_notice(message: InboundMessage, retry_after: int) -> Reply:
        language = message.language
        minutes = str(max(1, round(retry_after / 60)))
        return Reply(ReplyKind.NOTICE, text("rate_limited", language, minutes=minutes), language)

    async def _wait_for_turn(self, job_id: str, order_key: str) -> None:
        """Answer a conversation's messages in arrival order: wait until this job heads its list."""
        redis = self.c.redis
        checks = 0
        while True:
            head = await redis.lindex(order_key, 0)
            if head is None or _s(head) == job_id:
                return
            checks += 1
            if checks % 20 == 0 and not await self._job_open(_s(head)):
                await redis.lrem(order_key, 1, head)  # its worker finished but died before unlisting it
                continue
            await asyncio.sleep(0.05)

    async def _job_open(self, job_id: str) -> bool:
        redis, stream = self.c.redis, self.c.keys.jobs
        pending = await redis.xpending_range(stream, GROUP, min=job_id, max=job_id, count=1)
        if pending:
            return True
        groups = await redis.xinfo_groups(stream)
        for group in groups:
            if _s(group.get("name") or group.get(b"name") or b"") == GROUP:
                delivered = _s(group.get("last-delivered-id") or group.get(b"last-delivered-id") or b"0-0")
                return _id_tuple(job_id) > _id_tuple(delivered)  # not read yet
        return True

    async def _renew_lease(self, job_id: str, done: asyncio.Event) -> None:
        """Keep our claim fresh while we work, so only a dead worker's jobs are reclaimed."""
        interval = max(self.c.settings.job_lease_seconds / 3, 0.05)
        while not done.is_set():
            try:
                await asyncio.wait_for(done.wait(), timeout=interval)
                return
            except TimeoutError:
                pass
            try:
                if await self._renew(keys=[self.c.keys.jobs], args=[GROUP, self.name, job_id]) != 1:
                    return  # taken over or finished: never claim it back
            except (RedisError, OSError):
                log.warning("could not renew the lease of job %s", job_id)

    async def _complete(self, job_id: str, order_key: str | None) -> None:
        # Ack and delete together: an acked entry is never read again, and keeping it would keep the
        # user's question in Redis forever. XDEL does not touch the group's last-delivered id, so
        # reads, reclaims and the order check (_job_open) work the same without the entry.
        async with self.c.redis.pipeline(transaction=True) as pipe:
            pipe.xack(self.c.keys.jobs, GROUP, job_id)
            pipe.xdel(self.c.keys.jobs, job_id)
            if order_key is not None:
                pipe.lrem(order_key, 1, job_id)
            await pipe.execute()

    async def _sweep_settled(self) -> None:
        """Now and then, trim jobs that are acked but still stored; never a pending or unread one."""
        now = time.monotonic()
        if now - self._last_trim < TRIM_EVERY_SECONDS:
            return
        self._last_trim = now
        settings = self.c.settings
        min_age = max(2 * settings.job_lease_seconds, 60.0)  # well past any reclaim of the job
        _, oldest_kept = dead_letter_bounds(settings.dead_letter_max_entries, settings.dead_letter_max_age_seconds)
        try:
            trimmed = await trim_settled_jobs(self.c.redis, self.c.keys.jobs, GROUP, min_age)
            trimmed_dead = int(await self.c.redis.xtrim(self.c.keys.dead_letters, minid=oldest_kept, approximate=False))
        except ResponseError as exc:  # e.g. a server without XTRIM MINID (< 6.2): answering matters more
            log.warning("retention sweep failed: %s", exc)
            return
        if trimmed or trimmed_dead:
            log.info("retention: trimmed %d settled jobs and %d old dead letters", trimmed, trimmed_dead)

    def _observe(self, job_id: str, message: InboundMessage, reply: Reply) -> None:
        metrics = self.c.metrics
        if metrics is None:
            return
        metrics.answers.labels(message.platform, reply.kind.value).inc()
        enqueued_ms = int(job_id.split("-", 1)[0])
        metrics.job_seconds.labels(message.platform).observe(max(time.time() - enqueued_ms / 1000, 0))

    async def _answer(self, job_id: str, message: InboundMessage, responder: Responder) -> Reply:
        async def progress(update: Progress) -> None:
            try:
                await responder.progress(update)
            except Exception:  # noqa: BLE001 - progress is best effort
                log.warning("progress update failed for job %s", job_id, exc_info=True)

        try:
            return await asyncio.wait_for(
                self.c.conversation.handle(message, progress), timeout=self.c.settings.job_deadline_seconds
            )
        except TimeoutError:
            log.error("job %s passed its deadline", job_id)
            language = message.language
            return Reply(ReplyKind.ERROR, text("internal_error", language), language)
        except RedisError:
            raise  # Redis blinked: _run_job retries the job; an apology now would be followed by the answer
        except Exception:  # noqa: BLE001 - the user gets a short notice, never silence
            log.exception("answering job %s failed", job_id)
            language = message.language
            return Reply(ReplyKind.ERROR, text("internal_error", language), language)

    async def _give_up(
        self, job_id: str, fields: dict, message: InboundMessage, responder: Responder, order_key: str
    ) -> None:
        language = message.language
        try:
            await responder.finish(Reply(ReplyKind.ERROR, text("internal_error", language), language))
        except Exception:  # noqa: BLE001 - the platform itself is failing; the dead letter keeps the job
            log.warning("could not tell the user about dead-lettered job %s", job_id)
        await self._dead_letter(job_id, fields, reason="too many attempts", order_key=order_key)

    async def _dead_letter(self, job_id: str, fields: dict, reason: str, order_key: str | None) -> None:
        redis, keys = self.c.redis, self.c.keys
        payload: dict[Any, Any] = dict(fields)
        payload["job_id"] = job_id
        payload["reason"] = reason
        max_entries, oldest_kept = dead_letter_bounds(
            self.c.settings.dead_letter_max_entries, self.c.settings.dead_letter_max_age_seconds
        )
        async with redis.pipeline(transaction=True) as pipe:
            # Exact trims: dead letters are rare, and "older than the age are gone" must hold to the entry.
            pipe.xadd(keys.dead_letters, payload, maxlen=max_entries, approximate=False)
            pipe.xtrim(keys.dead_letters, minid=oldest_kept, approximate=False)
            pipe.xack(keys.jobs, GROUP, job_id)
            pipe.xdel(keys.jobs, job_id)  # the dead letter holds the payload now
            if order_key is not None:
                pipe.lrem(order_key, 1, job_id)
            await pipe.execute()
        if self.c.metrics is not None:
            self.c.metrics.job_failures.labels(reason).inc()


_SILENT = object()  # rate-limited again within the window: the user was already told


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _id_tuple(stream_id: str) -> tuple[int, int]:
    ms, _, seq = stream_id.partition("-")
    return int(ms), int(seq or 0)


