"""Issue 16 item 3: the jobs stream and the dead letters stay bounded (real Redis, own prefix)."""
from __future__ import annotations

import asyncio
import time

from bot.retention import trim_settled_jobs
from bot.worker import GROUP, Worker
from tests.bot.test_worker import EchoConversation, msg, run_until_drained, setup


async def test_after_200_answered_jobs_the_stream_keeps_no_question(make_settings, redis):
    components, adapter = setup(
        make_settings, redis, EchoConversation(), worker_concurrency=8,
        rate_limit_user_per_hour=1000, rate_limit_channel_per_hour=1000,
    )
    for i in range(200):
        # 200 users: one job per user runs at a time (fair workers), so one user would serialise them all
        await components.ingress.submit(msg(f"e{i}", f"question {i}", thread=f"t{i}", sender=f"u{i}"))
    assert await redis.xlen(components.keys.jobs) == 200
    await run_until_drained(Worker(components), timeout=60)
    assert len(adapter.delivered) == 200
    assert await redis.xlen(components.keys.jobs) == 0  # acked and deleted: nothing in flight, no tail
    assert not [k async for k in redis.scan_iter(match=f"*{components.keys.prefix}*:order:*")]


async def test_a_crashed_workers_job_is_reclaimed_answered_once_and_then_deleted(make_settings, redis):
    components, adapter = setup(make_settings, redis, EchoConversation(), job_lease_seconds=0.2)
    await components.ingress.submit(msg("e1", "hello"))
    await components.ingress.submit(msg("e2", "later", thread="t2"))
    dead = Worker(components, name="dead")
    await dead.ensure_group()
    assert await redis.xreadgroup(GROUP, "dead", {components.keys.jobs: ">"}, count=1)  # then it crashes
    await asyncio.sleep(0.3)
    await run_until_drained(Worker(components, name="alive"))
    assert sorted(d.reply.text for d in adapter.delivered) == ["echo: hello", "echo: later"]
    assert await redis.xlen(components.keys.jobs) == 0
    assert (await redis.xpending(components.keys.jobs, GROUP))["pending"] == 0


async def test_the_sweep_trims_settled_entries_but_never_a_pending_or_unread_job(redis, keys):
    """Entries an older version acked but kept: trimmed by age, up to the oldest pending or unread job."""
    stream = keys.jobs
    for ms in (1000, 2000, 3000):
        await redis.xadd(stream, {"message": f"old {ms}"}, id=f"{ms}-0")
    await redis.xgroup_create(stream, GROUP, id="0")
    read = await redis.xreadgroup(GROUP, "crashed", {stream: ">"}, count=3)
    assert len(read[0][1]) == 3
    await redis.xack(stream, GROUP, "1000-0", "3000-0")  # 2000-0 stays pending: its worker crashed
    await redis.xadd(stream, {"message": "unread"}, id="4000-0")

    assert await trim_settled_jobs(redis, stream, GROUP, min_age_seconds=0) == 1
    assert [i for i, _ in await redis.xrange(stream)] == [b"2000-0", b"3000-0", b"4000-0"]

    # the pending job is still reclaimable with its payload
    _, claimed, *_ = await redis.xautoclaim(stream, GROUP, "alive", min_idle_time=0, start_id="0-0", count=1)
    assert claimed[0][0] == b"2000-0" and claimed[0][1] == {b"message": b"old 2000"}
    await redis.xack(stream, GROUP, "2000-0")
    assert await trim_settled_jobs(redis, stream, GROUP, min_age_seconds=0) == 2
    assert [i for i, _ in await redis.xrange(stream)] == [b"4000-0"]  # never read: kept


async def test_the_sweep_keeps_recent_entries_and_tolerates_a_missing_stream(redis, keys):
    assert await trim_settled_jobs(redis, keys.jobs, GROUP, min_age_seconds=60) == 0  # no stream yet
    await redis.xgroup_create(keys.jobs, GROUP, id="0", mkstream=True)
    await redis.xadd(keys.jobs, {"message": "recent"})
    await redis.xreadgroup(GROUP, "w", {keys.jobs: ">"}, count=1)
    [(entry_id, _)] = await redis.xrange(keys.jobs)
    await redis.xack(keys.jobs, GROUP, entry_id)
    assert await trim_settled_jobs(redis, keys.jobs, GROUP, min_age_seconds=60) == 0  # younger than a minute
    assert await redis.xlen(keys.jobs) == 1


async def test_dead_letters_are_bounded_by_count_and_by_age(make_settings, redis):
    components, adapter = setup(
        make_settings, redis, EchoConversation(), dead_letter_max_entries=3, dead_letter_max_age_seconds=3600
    )
    dead_letters = components.keys.dead_letters
    two_hours_ago = int((time.time() - 7200) * 1000)
    await redis.xadd(dead_letters, {"job_id": "ancient", "reason": "old"}, id=f"{two_hours_ago}-0")
    worker = Worker(components)
    await worker.ensure_group()
    for i in range(5):
        await redis.xadd(components.keys.jobs, {"message": f"{{not json {i}"})
    await run_until_drained(worker)
    kept = await redis.xrange(dead_letters)
    assert len(kept) == 3  # the newest three
    assert [f[b"message"] for _, f in kept] == [b"{not json 2", b"{not json 3", b"{not json 4"]
    assert await redis.xlen(components.keys.jobs) == 0  # dead-lettered jobs leave the stream too


async def test_the_startup_sweep_drops_dead_letters_past_their_age(make_settings, redis):
    components, _ = setup(make_settings, redis, EchoConversation(), dead_letter_max_age_seconds=3600)
    dead_letters = components.keys.dead_letters
    now_ms = int(time.time() * 1000)
    await redis.xadd(dead_letters, {"job_id": "old"}, id=f"{now_ms - 7_200_000}-0")
    await redis.xadd(dead_letters, {"job_id": "recent"}, id=f"{now_ms - 60_000}-0")
    await run_until_drained(Worker(components))
    assert [f[b"job_id"] for _, f in await redis.xrange(dead_letters)] == [b"recent"]
