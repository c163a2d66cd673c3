"""Stream state in Redis: the worker writing the answer and a web replica closing an
overdue bubble go through Lua scripts, so exactly one of them wins."""
from __future__ import annotations

import json
import time

from adapters.wecom.store import CardStore, FeedbackStore, StreamStore

NOTES = {"zh": "（超时）", "en": "(late)"}


async def test_open_progress_finish_refresh(redis, keys) -> None:
    store = StreamStore(redis, keys)
    sid, created = await store.claim("msg-1", 60)
    again, created_again = await store.claim("msg-1", 60)
    assert created and not created_again and again == sid  # a redelivery gets the same bubble

    assert await store.open(sid, "researching", 60, mode="webhook", language="en")
    assert not await store.open(sid, "other", 60, mode="webhook")  # never reset an open stream
    view = await store.refresh(sid, NOTES)
    assert view is not None and (view.content, view.finish) == ("researching", False)

    assert await store.progress(sid, "researching\n> step 1")
    assert (await store.refresh(sid, NOTES)).content == "researching\n> step 1"  # type: ignore[union-attr]

    card = {"card_type": "button_interaction", "task_id": "t1"}
    status = await store.finish(sid, "the answer", card=card, answer="the answer", trace_id="tr1", note="(late)")
    assert status == 1
    first = await store.refresh(sid, NOTES)
    assert first is not None and first.finish and first.content == "the answer" and first.card == card
    second = await store.refresh(sid, NOTES)
    assert second is not None and second.card is None  # a card goes out once per message
    assert not await store.progress(sid, "late progress")  # a finished bubble never regresses
    assert await store.finish(sid, "x", card=None, answer="x", trace_id="", note="") == 2  # re-run: no-op
    assert await store.fields(sid, "answer", "trace_id") == {"answer": "x", "trace_id": ""}


async def test_overdue_refresh_closes_with_note_then_finish_goes_elsewhere_once(redis, keys) -> None:
    store = StreamStore(redis, keys)
    await store.open("s1", "🔎 正在研究…", 30, mode="webhook", language="zh")
    later = time.time() + 31
    closed = await store.refresh("s1", NOTES, now=later)
    assert closed is not None and closed.status == 2 and closed.content == "🔎 正在研究…\n\n（超时）"
    assert (await store.refresh("s1", NOTES, now=later)).status == 3  # type: ignore[union-attr]
    assert await store.finish("s1", "answer", card=None, answer="answer", trace_id="t", note="n") == 0
    assert await store.finish("s1", "answer", card=None, answer="answer", trace_id="t", note="n") == 3
    view = await store.refresh("s1", NOTES)
    assert view is not None and view.content.endswith("（超时）")  # the bubble keeps the note


async def test_finish_after_deadline_without_refresh_closes_the_bubble(redis, keys) -> None:
    store = StreamStore(redis, keys)
    await store.open("s2", "working", -1, mode="ws", language="en")  # already overdue
    assert await store.overdue() == ["s2"]
    assert await store.finish("s2", "answer", card=None, answer="answer", trace_id="", note="(late)") == 0
    assert await store.overdue() == []
    view = await store.refresh("s2", NOTES)
    assert view is not None and view.finish and view.content == "working\n\n(late)"


async def test_unknown_stream(redis, keys) -> None:
    store = StreamStore(redis, keys)
    assert await store.refresh("nope", NOTES) is None
    assert await store.finish("nope", "a", card=None, answer="a", trace_id="", note="") == -1
    assert await store.progress("nope", "a") is False


async def test_cards_and_feedback(redis, keys) -> None:
    cards = CardStore(redis, keys, ttl_seconds=60)
    await cards.save("clarify_1", {"options": {"a": "A"}, "language": "en"})
    assert (await cards.load("clarify_1")) == {"options": {"a": "A"}, "language": "en"}
    assert await cards.load("missing") is None and await cards.load("") is None

    feedback = FeedbackStore(redis, keys)
    key = await feedback.record(trace_id="tr9", feedback_id="s1", user_id="u1", entry={"type": 2}, answer="ans")
    assert key == keys.feedback("tr9")
    await feedback.record(trace_id="tr9", feedback_id="s1", user_id="u2", entry={"type": 1}, answer="other")
    stored = {k.decode(): v.decode() for k, v in (await redis.hgetall(key)).items()}
    assert stored["answer"] == "ans" and stored["platform"] == "wecom"
    assert json.loads(stored["user:u1"]) == {"type": 2} and json.loads(stored["user:u2"]) == {"type": 1}
    assert 0 < await redis.ttl(key)
