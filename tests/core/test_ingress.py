import asyncio

from core.ingress import Ingress, SubmitOutcome
from core.messages import InboundMessage


def message(event_id: str = "Ev1", text: str = "hello") -> InboundMessage:
    return InboundMessage("slack", "T1", "C1", "1.0", "U1", text, "m1", event_id, False)


async def test_first_delivery_is_enqueued_and_retries_are_not(redis, keys):
    ingress = Ingress(redis, keys, dedupe_ttl_seconds=60)
    first = await ingress.submit(message())
    again = await ingress.submit(message())
    assert first.outcome is SubmitOutcome.ENQUEUED and first.job_id
    assert again.outcome is SubmitOutcome.DUPLICATE
    assert await redis.xlen(keys.jobs) == 1
    entries = await redis.xrange(keys.jobs)
    assert InboundMessage.from_json(entries[0][1][b"message"]) == message()


async def test_extra_dedupe_id_catches_the_same_message_under_another_event_id(redis, keys):
    ingress = Ingress(redis, keys, dedupe_ttl_seconds=60)
    assert (await ingress.submit(message("ev-a"), "om_1")).outcome is SubmitOutcome.ENQUEUED
    assert (await ingress.submit(message("ev-b"), "om_1")).outcome is SubmitOutcome.DUPLICATE
    assert await redis.xlen(keys.jobs) == 1


async def test_racing_submits_enqueue_exactly_once(redis, keys):
    ingress = Ingress(redis, keys, dedupe_ttl_seconds=60)
    results = await asyncio.gather(*(ingress.submit(message()) for _ in range(50)))
    assert sum(r.outcome is SubmitOutcome.ENQUEUED for r in results) == 1
    assert await redis.xlen(keys.jobs) == 1


async def test_dedupe_marker_expires(redis, keys):
    ingress = Ingress(redis, keys, dedupe_ttl_seconds=60)
    await ingress.submit(message())
    assert 0 < await redis.ttl(keys.dedupe("slack", "Ev1")) <= 60


async def test_non_ascii_and_odd_text_survive_the_queue(redis, keys):
    ingress = Ingress(redis, keys, dedupe_ttl_seconds=60)
    odd = message(text="昇腾 \u0000 \udcff 🚀")
    await ingress.submit(odd)
    entries = await redis.xrange(keys.jobs)
    assert InboundMessage.from_json(entries[0][1][b"message"]).text == odd.text
