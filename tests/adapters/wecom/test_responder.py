"""The WeCom responder's bubble: streamed drafts through the shared engine, and re-runs that
deliver the rest of a long answer exactly once (shared per-job record)."""
from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from adapters.base import Capabilities
from adapters.common.records import DeliveryRecords
from adapters.wecom.outbox import Outbox
from adapters.wecom.responder import WeComResponder
from adapters.wecom.response_url import ResponseUrlClient
from adapters.wecom.store import CardStore, StreamStore
from core.messages import DRAFT_STAGE, InboundMessage, Progress, Reply, ReplyKind

SID = "s-bubble-1"


def message() -> InboundMessage:
    ctx = {"mode": "ws", "stream_id": SID, "req_id": "req-1", "chat_id": "chat-1", "language": "en"}
    return InboundMessage("wecom", "corp", "chat-1", "chat-1", "u1", "q", "m1", "e1", False, reply_context=ctx)


@pytest.fixture
async def parts(redis: Any, keys: Any) -> Any:
    streams = StreamStore(redis, keys)
    await streams.open(SID, "…", 300.0, mode="ws", language="en")
    async with httpx.AsyncClient() as http:

        def make(outbox: Outbox, interval: float = 0.0) -> WeComResponder:
            return WeComResponder(
                message(), "job-1", streams=streams, cards=CardStore(redis, keys, 600),
                response_url=ResponseUrlClient(http, redis, keys, "http://127.0.0.1:9"), outbox=outbox,
                records=DeliveryRecords(redis, keys, "wecom", 600),
                capabilities=Capabilities(True, True, True, 20_480, interval, reply_opened_at_ingress=True),
            )

        yield streams, make


async def sends(redis: Any, outbox: Outbox) -> int:
    entries = await redis.xrange(outbox.key)
    return sum(1 for _, fields in entries if fields.get(b"kind") == b"send")


async def test_a_draft_grows_in_the_bubble_and_the_answer_replaces_it(parts: Any, redis: Any, keys: Any) -> None:
    streams, make = parts
    responder = make(Outbox(redis, keys))
    await responder.progress(Progress("Searching issues…"))
    await responder.progress(Progress("Set `enable_prefix", stage=DRAFT_STAGE))
    assert (await streams.fields(SID, "content"))["content"] == "Set `enable_prefix"
    await responder.finish(Reply(ReplyKind.ANSWER, "Set `enable_prefix_caching=False`.", "en"))
    assert (await streams.fields(SID, "content"))["content"] == "Set `enable_prefix_caching=False`."


async def test_drafts_are_throttled_on_min_edit_interval(parts: Any, redis: Any, keys: Any) -> None:
    streams, make = parts
    responder = make(Outbox(redis, keys), interval=0.3)
    for text in ("a", "a b", "a b c"):
        await responder.progress(Progress(text, stage=DRAFT_STAGE))
    assert (await streams.fields(SID, "content"))["content"] == "a"  # the rest waits for the interval
    await asyncio.sleep(0.5)
    assert (await streams.fields(SID, "content"))["content"] == "a b c"


async def test_a_rerun_sends_the_rest_of_a_long_answer_exactly_once(parts: Any, redis: Any, keys: Any) -> None:
    streams, make = parts
    text = "\n\n".join(f"Paragraph {i}: " + "detail " * 200 for i in range(40))  # > 2 bubbles
    outbox = Outbox(redis, keys)
    first = make(outbox)
    # the worker dies while sending the second active part
    calls = {"n": 0}
    real_put = outbox.put

    async def dying_put(frame: Any, **kw: Any) -> Any:
        if kw.get("kind") == "send":
            calls["n"] += 1
            if calls["n"] == 2:
                raise ConnectionError("worker died")
        return await real_put(frame, **kw)

    outbox.put = dying_put  # type: ignore[method-assign]
    with pytest.raises(ConnectionError):
        await first.finish(Reply(ReplyKind.ANSWER, text, "en"))
    assert await sends(redis, outbox) == 1

    clean = Outbox(redis, keys)
    await make(clean).finish(Reply(ReplyKind.ANSWER, text, "en"))  # the job runs again
    total = await sends(redis, clean)
    await make(clean).finish(Reply(ReplyKind.ANSWER, text, "en"))  # and once more: nothing new
    assert await sends(redis, clean) == total
    shown = [f.get(b"frame", b"").decode() for _, f in await redis.xrange(clean.key) if f.get(b"kind") == b"send"]
    assert all(sum(f"Paragraph {i}:" in s for s in shown) <= 1 for i in range(40))
    assert total >= 2
