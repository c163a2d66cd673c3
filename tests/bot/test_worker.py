import asyncio

from adapters.common.records import DeliveryRecords
from bot.wiring import build_components
from bot.worker import GROUP, Worker
from core.ingress import Ingress
from core.messages import InboundMessage, Progress, Reply, ReplyKind
from tests.support.recording_adapter import RecordingAdapter
from tests.support.stack import queue_drained


class EchoConversation:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.seen: list[str] = []

    async def handle(self, message: InboundMessage, progress) -> Reply:
        self.seen.append(message.text)
        await progress(Progress("thinking"))
        if self.fail:
            raise ValueError("boom")
        return Reply(ReplyKind.ANSWER, f"echo: {message.text}", "en")


def msg(event_id: str, text: str = "q", thread: str = "t1", sender: str = "u") -> InboundMessage:
    return InboundMessage("recording", "w", "c", thread, sender, text, event_id, event_id, True)


async def run_until_drained(worker: Worker, timeout: float = 10.0) -> None:
    task = asyncio.create_task(worker.run())
    try:
        for _ in range(int(timeout / 0.05)):
            if await queue_drained(worker.c) and not worker._tasks:
                return
            await asyncio.sleep(0.05)
        raise TimeoutError("queue not drained")
    finally:
        worker.stop()
        await task


def setup(make_settings, redis, conversation, **overrides):
    settings = make_settings(**overrides)
    components = build_components(settings, redis=redis, conversation=conversation, with_adapters=False)
    adapter = RecordingAdapter()
    components.adapters = {"recording": adapter}
    return components, adapter


async def test_a_job_is_answered_once_and_acked(make_settings, redis):
    components, adapter = setup(make_settings, redis, EchoConversation())
    ingress: Ingress = components.ingress
    await ingress.submit(msg("e1", "hello"))
    await ingress.submit(msg("e1", "hello"))  # a platform retry
    await run_until_drained(Worker(components))
    assert [d.reply.text for d in adapter.delivered] == ["echo: hello"]
    assert adapter.progress and adapter.progress[0][1] == "thinking"
    pending = await redis.xpending(components.keys.jobs, GROUP)
    assert pending["pending"] == 0


async def test_a_failing_conversation_still_gets_an_error_notice(make_settings, redis):
    components, adapter = setup(make_settings, redis, EchoConversation(fail=True))
    await components.ingress.submit(msg("e1", "hello"))
    await run_until_drained(Worker(components))
    assert len(adapter.delivered) == 1
    assert adapter.delivered[0].reply.kind is ReplyKind.ERROR


async def test_a_job_left_by_a_dead_worker_is_reclaimed_and_answered_once(make_settings, redis):
    components, adapter = setup(make_settings, redis, EchoConversation(), job_lease_seconds=0.2)
    await components.ingress.submit(msg("e1", "hello"))
    dead = Worker(components, name="dead")
    await dead.ensure_group()
    taken = await redis.xreadgroup(GROUP, "dead", {components.keys.jobs: ">"}, count=1)
    assert taken  # the dead worker holds the job and never answers
    await asyncio.sleep(0.3)
    await run_until_drained(Worker(components, name="alive"))
    assert [d.reply.text for d in adapter.delivered] == ["echo: hello"]


async def test_a_delivered_but_unacked_job_is_not_answered_twice(make_settings, redis):
    components, adapter = setup(make_settings, redis, EchoConversation(), job_lease_seconds=0.2)
    result = await components.ingress.submit(msg("e1", "hello"))
    worker = Worker(components, name="first")
    await worker.ensure_group()
    await redis.xreadgroup(GROUP, "first", {components.keys.jobs: ">"}, count=1)
    # the first worker delivered, then crashed before XACK
    await DeliveryRecords(redis, components.keys, "recording", 60).mark_finished(result.job_id, ("msg-0",))
    await asyncio.sleep(0.3)
    await run_until_drained(Worker(components, name="second"))
    assert adapter.delivered == []


async def test_a_job_whose_delivery_keeps_failing_is_dead_lettered(make_settings, redis):
    components, adapter = setup(make_settings, redis, EchoConversation(), job_lease_seconds=0.1, job_max_deliveries=2)
    adapter.fail_finishes = 2  # the two real attempts fail; the apology then gets through
    await components.ingress.submit(msg("e1", "hello"))
    await run_until_drained(Worker(components), timeout=15)
    assert await redis.xlen(components.keys.dead_letters) == 1
    assert [d.reply.kind for d in adapter.delivered] == [ReplyKind.ERROR]


async def test_an_unreadable_payload_is_dead_lettered(make_settings, redis):
    components, adapter = setup(make_settings, redis, EchoConversation())
    worker = Worker(components)
    await worker.ensure_group()
    await redis.xadd(components.keys.jobs, {"message": "{not json"})
    await run_until_drained(worker)
    dead = await redis.xrange(components.keys.dead_letters)
    assert len(dead) == 1 and dead[0][1][b"reason"] == b"unreadable"
    assert adapter.delivered == []


class SlowFirstConversation:
    """The first message takes a while; a later one in the same thread must still come after it."""

    def __init__(self) -> None:
        self.order: list[str] = []

    async def handle(self, message: InboundMessage, progress) -> Reply:
        self.order.append(f"start {message.text}")
        if message.text == "first":
            await asyncio.sleep(0.5)
        self.order.append(f"end {message.text}")
        return Reply(ReplyKind.ANSWER, message.text, "en")


async def test_messages_in_one_thread_are_answered_in_order_across_workers(make_settings, redis):
    conversation = SlowFirstConversation()
    components, adapter = setup(make_settings, redis, conversation)
    await components.ingress.submit(msg("e1", "first"))
    await components.ingress.submit(msg("e2", "second"))
    await components.ingress.submit(msg("e3", "other thread", thread="t2", sender="someone else"))
    a, b = Worker(components, name="a"), Worker(components, name="b")
    tasks = [asyncio.create_task(a.run()), asyncio.create_task(b.run())]
    try:
        for _ in range(200):
            if len(adapter.delivered) == 3:
                break
            await asyncio.sleep(0.05)
    finally:
        a.stop(), b.stop()
        await asyncio.gather(*tasks)
    thread_one = [e for e in conversation.order if "thread" not in e]
    assert thread_one == ["start first", "end first", "start second", "end second"]
    # the other thread was not blocked behind the slow one
    assert conversation.order.index("end other thread") < conversation.order.index("end first")
    assert not await redis.exists(components.keys.order("recording:w:c:t1"))


async def test_a_rate_limited_user_is_told_once(make_settings, redis):
    components, adapter = setup(make_settings, redis, EchoConversation(), rate_limit_user_per_hour=1)
    for i in range(3):
        await components.ingress.submit(msg(f"e{i}", f"q{i}"))
    await run_until_drained(Worker(components))
    kinds = [d.reply.kind for d in adapter.delivered]
    assert kinds == [ReplyKind.ANSWER, ReplyKind.NOTICE]
    assert "try again" in adapter.delivered[1].reply.text


class Sleepy:
    async def handle(self, message, progress) -> Reply:
        await asyncio.sleep(5)
        return Reply(ReplyKind.ANSWER, "too late", "en")


async def test_a_job_past_its_deadline_gets_one_error_notice(make_settings, redis):
    components, adapter = setup(make_settings, redis, Sleepy(), job_deadline_seconds=0.2)
    await components.ingress.submit(msg("e1", "hello"))
    await run_until_drained(Worker(components))
    assert [d.reply.kind for d in adapter.delivered] == [ReplyKind.ERROR]


class RedisBlinks:
    """Redis fails once in the middle of answering (e.g. the session save), then works."""

    def __init__(self) -> None:
        self.calls = 0

    async def handle(self, message, progress) -> Reply:
        from redis.exceptions import ConnectionError as RedisConnectionError

        self.calls += 1
        if self.calls == 1:
            raise RedisConnectionError("Connection closed by server.")
        return Reply(ReplyKind.ANSWER, "the answer", "en")


async def test_a_redis_blink_mid_answer_retries_without_posting_an_apology(make_settings, redis):
    conversation = RedisBlinks()
    components, adapter = setup(make_settings, redis, conversation)
    await components.ingress.submit(msg("e1", "hello"))
    await run_until_drained(Worker(components))
    assert [d.reply.text for d in adapter.delivered] == ["the answer"]
    assert conversation.calls == 2


async def test_a_platform_with_an_open_reply_bubble_always_gets_it_closed(make_settings, redis):
    from adapters.base import Capabilities

    components, adapter = setup(make_settings, redis, EchoConversation(), rate_limit_user_per_hour=1)
    adapter.capabilities = Capabilities(True, True, True, 20_480, 1.0, reply_opened_at_ingress=True)
    for i in range(3):
        await components.ingress.submit(msg(f"e{i}", f"q{i}"))
    await run_until_drained(Worker(components))
    assert [d.reply.kind for d in adapter.delivered] == [ReplyKind.ANSWER, ReplyKind.NOTICE, ReplyKind.NOTICE]


class Gate:
    """Answers once released, so a test can stop the worker while a job is in hand."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def handle(self, message, progress) -> Reply:
        self.started.set()
        await self.release.wait()
        return Reply(ReplyKind.ANSWER, "finished after stop", "en")


async def test_graceful_shutdown_finishes_the_job_in_hand_and_takes_no_new_one(make_settings, redis):
    gate = Gate()
    components, adapter = setup(make_settings, redis, gate)
    await components.ingress.submit(msg("e1", "in hand"))
    worker = Worker(components)
    task = asyncio.create_task(worker.run())
    await asyncio.wait_for(gate.started.wait(), 10)
    worker.stop()
    await components.ingress.submit(msg("e2", "arrives during shutdown", thread="t9"))
    gate.release.set()
    await asyncio.wait_for(task, 10)
    assert [d.reply.text for d in adapter.delivered] == ["finished after stop"]
    # the job that arrived during shutdown is answered by the next worker at once, not after a lease
    gate_two = EchoConversation()
    components.conversation = gate_two
    await run_until_drained(Worker(components, name="next"), timeout=5)
    assert [d.reply.text for d in adapter.delivered] == ["finished after stop", "echo: arrives during shutdown"]
