"""The worker: takes jobs from the Redis Stream and answers them through the platform adapter.

At-least-once with one visible answer: a job is acked only after its reply is
delivered; a worker renews its lease while it works, so only a dead (or cut off)
worker's jobs are reclaimed, and a worker checks it still owns a job right
before posting; a delivery record makes a re-run skip instead of posting twice;
after N attempts the job is dead-lettered and the user gets an apology.

Fair turns: a job runs only when it heads its conversation's list, so a conversation is answered
in arrival order. A job read before its turn is parked: it stays pending, holds no slot, and when
the job ahead of it settles it is handed off (claimed by the `HANDOFF` consumer and listed in the
ready list) for any worker to take at once. A worker also runs one job per user at a time: a
user's next job (in another thread) waits in the worker without a slot until the first ends, so a
burst of one user holds at most one slot per worker. The allowlists and the rate limits are
checked before a slot is taken, so neither a burst nor a job injected into the stream holds one.
"""
from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections import deque
from typing import Any

from redis.exceptions import RedisError, ResponseError

from adapters.base import Delivered, Responder
from adapters.common.records import DeliveryRecords
from bot.logs import job_context
from bot.report.usage import open_tally
from bot.retention import dead_letter_bounds, trim_settled_jobs
from bot.wiring import Components
from core.messages import InboundMessage, Progress, Reply, ReplyKind
from core.limits import budget_user
from core.texts import text

log = logging.getLogger(__name__)

GROUP = "workers"
BLOCK_MS = 1000
# While jobs this worker parked may be handed off, it reads in short blocks, so a job whose turn came
# is taken within this instead of after a full BLOCK_MS (a blocked read is not woken by the ready list).
PARKED_BLOCK_MS = 100
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


HANDOFF = "handoff"  # the consumer that holds a parked job whose turn has come, until a worker takes it

# KEYS[1] stream, KEYS[2] ready list, KEYS[3..] the job's order lists. ARGV: group, handoff consumer,
# job id, ready-list ttl. Settles a job: acks and deletes it, takes it off its lists, and hands each
# list's new head (once) to the ready list when it was read already (else a plain read finds it).
# Claiming the head for HANDOFF in the same step makes a worker that read it before now see, when
# it renews its claim, that the job is no longer its own: only the worker taking it off the ready
# list runs it.
_SETTLE = """
redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
redis.call('XDEL', KEYS[1], ARGV[3])
local handed = {}
for i = 3, #KEYS do
  redis.call('LREM', KEYS[i], 1, ARGV[3])
  local head = redis.call('LINDEX', KEYS[i], 0)
  if head and not handed[head] then
    handed[head] = true
    local p = redis.call('XPENDING', KEYS[1], ARGV[1], head, head, 1)
    if #p > 0 then
      redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, head, 'JUSTID')
      redis.call('RPUSH', KEYS[2], head)
      redis.call('EXPIRE', KEYS[2], tonumber(ARGV[4]))
    end
  end
end
return 1
"""

# KEYS[1] stream, KEYS[2] ready list. ARGV: group, consumer, handoff consumer. Takes the first listed
# job still waiting for a worker (HANDOFF holds it; any other owner already took it) and claims it.
# Returns its id, or false when none is waiting.
_TAKE_HANDED_OFF = """
while true do
  local id = redis.call('LPOP', KEYS[2])
  if not id then return false end
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)
  if #p > 0 and p[1][2] == ARGV[3] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, id, 'JUSTID')
    return id
  end
end
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
        self._parked_until = 0.0  # until then a job parked here may be handed off any moment
        # One job per user at a time in this worker: whose job runs, and their next ones, which wait
        # here without a slot and are admitted again (before any other job) when it ends.
        self._busy_users: set[str] = set()
        self._user_queue: dict[str, deque[tuple[str, dict]]] = {}
        self._readmit: deque[tuple[str, dict]] = deque()
        self._renew = components.redis.register_script(_RENEW_IF_OWNER)
        self._settle = components.redis.register_script(_SETTLE)
        self._take_handed_off = components.redis.register_script(_TAKE_HANDED_OFF)
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
        await self._release_waiting()

    async def _release_waiting(self) -> None:
        """Jobs waiting in this worker for their user's turn go straight back to the others."""
        waiting = [*self._readmit, *(job for queue in self._user_queue.values() for job in queue)]
        self._readmit.clear()
        self._user_queue.clear()
        for job_id, _ in waiting:
            try:
                await self._release(job_id)
            except (RedisError, OSError):  # their lease hands them on anyway
                log.warning("could not hand back job %s at shutdown", job_id)

    async def _sleep(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self._stopping.wait(), timeout=seconds)
        except TimeoutError:
            pass

    async def _consume_once(self) -> None:
        """Take one job (one whose turn came first, then a dead worker's, then a new one) and run
        it, park it or refuse it. Waits for a slot only with a job that can run in hand, so the
        next free slot goes to it and not to a later message of a busy user."""
        entries = self._next_readmitted() or await self._take_ready() or await self._reclaim() or await self._read_new()
        if not entries:
            return
        job_id, fields = entries[0]
        if self._stopping.is_set():
            await self._release(job_id)  # read while shutting down: hand it straight back
            return
        await self._admit(job_id, fields)

    def _next_readmitted(self) -> list[tuple[str, dict]]:
        return [self._readmit.popleft()] if self._readmit else []

    async def _take_slot(self) -> bool:
        """A slot for the job in hand; False when stop() came first."""
        acquire = asyncio.ensure_future(self._slots.acquire())
        stop = asyncio.ensure_future(self._stopping.wait())
        await asyncio.wait({acquire, stop}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if not acquire.done():
            acquire.cancel()
            return False
        if self._stopping.is_set():
            self._slots.release()
            return False
        return True

    async def _read_new(self) -> list[tuple[str, dict]]:
        block = PARKED_BLOCK_MS if time.monotonic() < self._parked_until else BLOCK_MS
        result = await self.c.redis.xreadgroup(GROUP, self.name, {self.c.keys.jobs: ">"}, count=1, block=block)
        if not result:
            return []
        _, entries = result[0]
        return [(_s(i), f) for i, f in entries]

    async def _take_ready(self) -> list[tuple[str, dict]]:
        """A parked job whose turn came (handed off when the job ahead of it settled)."""
        keys = self.c.keys
        job_id = await self._take_handed_off(keys=[keys.jobs, keys.ready_jobs], args=[GROUP, self.name, HANDOFF])
        if not job_id:
            return []
        entries = await self.c.redis.xrange(keys.jobs, min=_s(job_id), max=_s(job_id), count=1)
        return [(_s(i), f) for i, f in entries if f]

    async def _reclaim(self) -> list[tuple[str, dict]]:
        """Take over one job whose worker stopped renewing it for longer than the lease (a dead
        worker's, or one parked whose hand-off was lost)."""
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

    # --- admission: before a slot --------------------------------------------------------------

    async def _admit(self, job_id: str, fields: dict) -> None:
        """Re-check what the stream cannot vouch for, wait for the job's turn without a slot, then
        run it in a slot; a refusal is delivered without one."""
        raw = fields.get(b"message") or fields.get("message")
        try:
            message = InboundMessage.from_json(raw)
        except (TypeError, ValueError):
            log.error("job %s has an unreadable payload; dead-lettering it", job_id)
            await self._dead_letter(job_id, fields, reason="unreadable", lists=())
            return
        lists = (self.c.keys.order(message.conversation_key),)
        if not self.c.ingress.access.allows(message):
            # Ingress never queues such a message: this one was injected, or the allowlists were
            # narrowed since. Never run it; like ingress, answer nothing.
            log.warning("job %s is from a sender the allowlists do not admit; dropped unanswered", job_id)
            await self._complete(job_id, lists)
            if self.c.metrics is not None:
                self.c.metrics.job_failures.labels("not allowed").inc()
            return
        if not await self._its_turn(job_id, lists):
            # Parked: it stays pending, and is handed off when the job ahead of it settles, at the
            # latest within one answer's deadline.
            self._parked_until = time.monotonic() + self.c.settings.job_deadline_seconds
            return
        if await self._renew(keys=[self.c.keys.jobs], args=[GROUP, self.name, job_id]) != 1:
            return  # handed off while we looked: the worker taking it off the ready list runs it
        user = budget_user(message)
        if user in self._busy_users:
            self._user_queue.setdefault(user, deque()).append((job_id, fields))  # after their running job
            self._parked_until = time.monotonic() + self.c.settings.job_deadline_seconds
            return
        refusal = await self._limited_reply(message)
        if refusal is None:
            if not await self._take_slot():
                await self._release(job_id)
                return
            self._start(job_id, fields, message, None, user=user, holds_slot=True)
        else:
            self._start(job_id, fields, message, refusal, user=user, holds_slot=False)  # a notice needs no slot

    async def _its_turn(self, job_id: str, lists: tuple[str, ...]) -> bool:
        """True when the job heads every list it waits in. A head whose job is gone (its worker
        settled it but died before unlisting it) is settled here, which hands the turn on."""
        redis = self.c.redis
        for order_key in lists:
            while True:
                head = await redis.lindex(order_key, 0)
                if head is None or _s(head) == job_id:
                    break
                if await self._job_open(_s(head)):
                    return False
                await self._settle_job(_s(head), (order_key,))
        return True

    def _start(
        self, job_id: str, fields: dict, message: InboundMessage, preset: object, *, user: str, holds_slot: bool
    ) -> None:
        self._busy_users.add(user)
        task = asyncio.create_task(self._run_job(job_id, fields, message, preset, holds_slot))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda _: self._user_done(user))

    def _user_done(self, user: str) -> None:
        """The user's job ended (answered, refused or failed): their next one may go."""
        self._busy_users.discard(user)
        waiting = self._user_queue.get(user)
        if waiting:
            self._readmit.append(waiting.popleft())
        if not waiting:
            self._user_queue.pop(user, None)

    # --- one job ---------------------------------------------------------------------------

    async def _run_job(self, job_id: str, fields: dict, message: InboundMessage, preset: object, holds_slot: bool) -> None:
        try:
            for attempt in range(REDIS_RETRIES_PER_JOB):
                try:
                    await self.process(job_id, fields, message, preset)
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
            if holds_slot:
                self._slots.release()

    async def process(self, job_id: str, fields: dict, message: InboundMessage, preset: object = None) -> None:
        """Answer a job whose turn it is. `preset`: a refusal decided at admission (a Reply, or
        _SILENT when the user was told already) instead of an answer."""
        keys, redis, settings = self.c.keys, self.c.redis, self.c.settings
        job_context.set({"job_id": job_id, "conversation": message.conversation_key, "platform": message.platform})
        lists = (keys.order(message.conversation_key),)
        finished = asyncio.Event()
        heartbeat = asyncio.create_task(self._renew_lease(job_id, finished))
        # The adapters' delivery record of this job (placeholder, parts) also carries our "finished" mark
        records = DeliveryRecords(redis, keys, message.platform, settings.dedupe_ttl_seconds)
        try:
            earlier = self._delivered.get(job_id)
            if earlier is not None:  # delivered by an earlier run here; only the bookkeeping failed
                await records.mark_finished(job_id, earlier.message_ids)
                await self._complete(job_id, lists)
                self._delivered.pop(job_id, None)
                return
            if await records.is_finished(job_id):
                await self._complete(job_id, lists)  # answered before a crash prevented the ack
                return
            attempts = await redis.incr(keys.attempts(job_id))
            await redis.expire(keys.attempts(job_id), settings.dedupe_ttl_seconds)
            adapter = self.c.adapters.get(message.platform)
            if adapter is None:
                log.error("job %s is for platform %s, which is not configured here", job_id, message.platform)
                await self._dead_letter(job_id, fields, reason="platform not configured", lists=lists)
                return
            responder = adapter.responder(message, job_id)
            if attempts > settings.job_max_deliveries:
                await self._give_up(job_id, fields, message, responder, lists)
                return
            tally = open_tally()  # the model tokens this job spends, for its answer record
            if preset is None:
                reply = await self._answer(job_id, message, responder)
            elif preset is _SILENT:
                if not adapter.capabilities.reply_opened_at_ingress:
                    await self._complete(job_id, lists)
                    return
                reply = self._rate_notice(message, retry_after=0)  # an open bubble must be closed
            else:
                reply = preset  # type: ignore[assignment]
            if await self._renew(keys=[keys.jobs], args=[GROUP, self.name, job_id]) != 1:
                # Our lease lapsed (e.g. Redis was away) and another worker owns the job now, or
                # finished it: it answers; posting here as well would answer twice.
                log.warning("job %s was taken over by another worker; not answering it here", job_id)
                return
            delivered = await responder.finish(reply)
            self._delivered[job_id] = delivered
            await records.mark_finished(job_id, delivered.message_ids)
            await self._complete(job_id, lists)
            self._delivered.pop(job_id, None)
            await self._observe(job_id, message, reply, tally.tokens)
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

    async def _complete(self, job_id: str, lists: tuple[str, ...]) -> None:
        # Ack and delete together: an acked entry is never read again, and keeping it would keep the
        # user's question in Redis forever. XDEL does not touch the group's last-delivered id, so
        # reads, reclaims and the order check (_job_open) work the same without the entry.
        await self._settle_job(job_id, lists)

    async def _settle_job(self, job_id: str, lists: tuple[str, ...], client: Any = None) -> None:
        keys = self.c.keys
        await self._settle(
            keys=[keys.jobs, keys.ready_jobs, *lists],
            args=[GROUP, HANDOFF, job_id, self.c.settings.dedupe_ttl_seconds],
            client=client,
        )

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

    async def _observe(self, job_id: str, message: InboundMessage, reply: Reply, tokens: int) -> None:
        """Count a delivered reply in /metrics and in the answer log, with one latency, so the admin
        report and the metrics agree."""
        enqueued_ms = int(job_id.split("-", 1)[0])
        latency = max(time.time() - enqueued_ms / 1000, 0)
        metrics = self.c.metrics
        if metrics is not None:
            metrics.answers.labels(message.platform, reply.kind.value).inc()
            metrics.job_seconds.labels(message.platform).observe(latency)
        if self.c.answer_log is not None:
            try:
                await self.c.answer_log.record(message, reply, latency=latency, tokens=tokens)
            except (RedisError, OSError) as exc:  # the user has the answer; a lost report line is no reason to retry
                log.warning("could not store the answer record of job %s: %s", job_id, type(exc).__name__)

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
        self, job_id: str, fields: dict, message: InboundMessage, responder: Responder, lists: tuple[str, ...]
    ) -> None:
        language = message.language
        try:
            await responder.finish(Reply(ReplyKind.ERROR, text("internal_error", language), language))
        except Exception:  # noqa: BLE001 - the platform itself is failing; the dead letter keeps the job
            log.warning("could not tell the user about dead-lettered job %s", job_id)
        await self._dead_letter(job_id, fields, reason="too many attempts", lists=lists)

    async def _dead_letter(self, job_id: str, fields: dict, reason: str, lists: tuple[str, ...]) -> None:
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
            await self._settle_job(job_id, lists, client=pipe)  # the dead letter holds the payload now
            await pipe.execute()
        if self.c.metrics is not None:
            self.c.metrics.job_failures.labels(reason).inc()


_SILENT = object()  # rate-limited again within the window: the user was already told


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _id_tuple(stream_id: str) -> tuple[int, int]:
    ms, _, seq = stream_id.partition("-")
    return int(ms), int(seq or 0)


