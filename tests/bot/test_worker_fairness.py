"""Fair workers on a real Redis: one user's burst holds at most one slot, and what the stream
cannot vouch for (allowlists, rate limits, budgets) is checked again before a slot is taken."""
from __future__ import annotations

import asyncio

import pytest

from bot.worker import Worker
from core.limits import TokenBudget, budget_user
from core.messages import InboundMessage, Reply, ReplyKind
from core.session import RedisSessionStore
from tests.bot.test_worker import msg, run_until_drained, setup
from tests.support.stack import queue_drained


class Answerer:
    """A slow answerer that logs when each answer starts and ends. The first answer is held until
    the worker has read every queued job (or 5 s pass), so what the worker does with the jobs
    behind a busy slot is decided by its logic, not by how fast it happens to read."""

    def __init__(self, redis, keys) -> None:
        self.redis, self.keys = redis, keys
        self.events: list[str] = []
        self.first = True

    async def handle(self, message: InboundMessage, progress) -> Reply:
        self.events.append(f"start {message.text}")
        if self.first:
            self.first = False
            await self.all_read()
        await asyncio.sleep(0.05)
        self.events.append(f"end {message.text}")
        return Reply(ReplyKind.ANSWER, message.text, "en")

    async def all_read(self) -> None:
        for _ in range(100):
            info = await self.redis.xinfo_stream(self.keys.jobs)
            groups = await self.redis.xinfo_groups(self.keys.jobs)
            if groups and groups[0]["last-delivered-id"] == info["last-generated-id"]:
                return
            await asyncio.sleep(0.05)


@pytest.mark.parametrize("slots", [1, 2])
@pytest.mark.parametrize("threads", ["one thread", "a thread each"])
async def test_ten_messages_of_one_user_delay_another_by_at_most_one_answer(make_settings, redis, keys, slots, threads):
    answerer = Answerer(redis, keys)
    components, adapter = setup(make_settings, redis, answerer, worker_concurrency=slots)
    for i in range(1, 11):
        thread = "a" if threads == "one thread" else f"a{i}"
        await components.ingress.submit(msg(f"a{i}", f"A{i}", thread=thread, sender="alice"))
    await components.ingress.submit(msg("b1", "B1", thread="b", sender="bob"))
    await run_until_drained(Worker(components), timeout=30)

    events = answerer.events
    assert len(adapter.delivered) == 11
    assert events.index("start B1") < events.index("end A2")  # B waited for one answer of A's at most
    if slots > 1:
        assert events.index("start B1") < events.index("end A1")  # a free slot was not held by A's queue
    alice = [e for e in events if "A" in e]
    # A's answers keep their order and never overlap: one slot at a time for one user
    assert alice == [f"{edge} A{i}" for i in range(1, 11) for edge in ("start", "end")]


async def test_a_users_second_thread_waits_for_their_first_answer(make_settings, redis, keys):
    answerer = Answerer(redis, keys)
    components, _ = setup(make_settings, redis, answerer, worker_concurrency=4)
    await components.ingress.submit(msg("a1", "A1", thread="t1", sender="alice"))
    await components.ingress.submit(msg("a2", "A2", thread="t2", sender="alice"))
    await components.ingress.submit(msg("b1", "B1", thread="t1", sender="bob"))  # same thread as A1
    await run_until_drained(Worker(components), timeout=15)
    events = answerer.events
    assert events.index("end A1") < events.index("start A2")
    assert events.index("end A1") < events.index("start B1")  # the thread's order holds across users


class HeldUntilNotice:
    """Holds the only slot until the adapter has delivered a notice (or 5 s pass)."""

    def __init__(self, adapter) -> None:
        self.adapter = adapter
        self.notice_while_answering = False

    async def handle(self, message: InboundMessage, progress) -> Reply:
        for _ in range(100):
            if any(d.reply.kind is ReplyKind.NOTICE for d in self.adapter.delivered):
                self.notice_while_answering = True
                break
            await asyncio.sleep(0.05)
        return Reply(ReplyKind.ANSWER, "answered", "en")


async def test_a_rate_limited_message_is_refused_without_waiting_for_a_slot(make_settings, redis):
    components, adapter = setup(make_settings, redis, None, worker_concurrency=1, rate_limit_user_per_hour=1)
    components.conversation = held = HeldUntilNotice(adapter)
    assert (await components.limiter.check("recording", "c", "carol")).allowed  # carol's one question this hour
    await components.ingress.submit(msg("a1", "long question", thread="a", sender="alice"))
    await components.ingress.submit(msg("c2", "one more", thread="c", sender="carol"))
    await run_until_drained(Worker(components), timeout=15)
    assert held.notice_while_answering  # carol was told while alice's answer held the only slot
    assert [d.reply.kind for d in adapter.delivered] == [ReplyKind.NOTICE, ReplyKind.ANSWER]


class Recorder:
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def handle(self, message: InboundMessage, progress) -> Reply:
        self.seen.append(message.sender)
        return Reply(ReplyKind.ANSWER, f"answer for {message.sender}", "en")


async def test_a_job_injected_for_a_sender_outside_the_allowlists_is_never_run(make_settings, redis, keys):
    recorder = Recorder()
    components, adapter = setup(make_settings, redis, recorder, allowed_users=["alice"])
    worker = Worker(components)
    await worker.ensure_group()
    # Someone who can write to the stream skips ingress (and its allowlist check) altogether.
    for sender in ("mallory", "alice"):
        await redis.xadd(keys.jobs, {"message": msg(f"e-{sender}", "q", thread=sender, sender=sender).to_json()})
    await run_until_drained(worker)
    assert recorder.seen == ["alice"]
    assert [d.reply.text for d in adapter.delivered] == ["answer for alice"]
    assert await queue_drained(components)  # dropped, not left pending to be retried
    assert components.metrics.job_failures.labels("not allowed")._value.get() == 1


class CountingResearcher:
    def __init__(self) -> None:
        self.calls = 0

    async def answer(self, request, progress):
        self.calls += 1
        raise AssertionError("the model must not run for a user over budget")


async def test_a_job_injected_for_a_user_over_budget_never_reaches_the_model(make_settings, redis, keys):
    from core.conversation import Conversation

    researcher = CountingResearcher()
    budget = TokenBudget(redis, keys, daily_limit=1_000_000, user_daily_limit=1000, reserve=100)
    conversation = Conversation(RedisSessionStore(redis, keys, 600), researcher=researcher, budget=budget)
    components, adapter = setup(make_settings, redis, conversation)
    message = msg("e1", "vllm-ascend on 910B fails with ACL error 507015", thread="m", sender="mallory")
    held = await budget.reserve(budget_user(message))
    await budget.settle(held, 1000)  # mallory's share of today is spent
    worker = Worker(components)
    await worker.ensure_group()
    await redis.xadd(keys.jobs, {"message": message.to_json()})
    await run_until_drained(worker)
    assert researcher.calls == 0
    assert len(adapter.delivered) == 1 and "your share of today's research budget" in adapter.delivered[0].reply.text
