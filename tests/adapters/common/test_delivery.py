"""The shared delivery engine on its own, driven through a recording fake platform."""
from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adapters.base import Capabilities
from adapters.common.delivery import Delivery
from adapters.common.primitives import NativeResult, PushPlatform
from adapters.common.records import DeliveryRecords
from core.messages import DRAFT_STAGE, Option, Progress, Reply, ReplyKind


class Refused(Exception):
    pass


class Blocked(Exception):
    pass


class FakePlatform(PushPlatform):
    """Messages live in a dict; every primitive call is recorded; failures are scripted."""

    name = "fake"

    def __init__(self, *, max_length: int = 1_000, interval: float = 0.0, cost_per_char: int = 1) -> None:
        super().__init__(Capabilities(True, True, False, max_length, interval))
        self.cost_per_char = cost_per_char
        self.messages: dict[str, str] = {}
        self.calls: list[tuple[str, str]] = []
        self.fail_edit = False
        self.fail_post_when: str | None = None  # a substring that makes post() fail
        self.native_status = False
        self.native_draft = False
        self.native_stream: NativeResult | None = None
        self.blocked = False
        self.cleared = 0

    def document(self, reply: Reply) -> str:
        return reply.text

    def cost(self, text: str) -> int:
        return len(text) * self.cost_per_char

    def render(self, chunk: str, reply: Reply, index: int, count: int) -> list[str]:
        return [chunk]

    async def buttons(self, reply: Reply) -> Any:
        return [o.key for o in reply.options] or None

    def attach(self, payload: str, buttons: Any) -> str:
        return f"{payload}\n[buttons: {','.join(buttons)}]"

    def status_payload(self, view: str) -> str:
        return f"⏳ {view}"

    def draft_payload(self, markdown: str) -> str:
        return f"✍ {markdown}"

    async def show_status(self, view: str) -> bool:
        if self.native_status:
            self.calls.append(("status", view))
        return self.native_status

    async def show_draft(self, markdown: str) -> bool:
        if self.native_draft:
            self.calls.append(("draft", markdown))
        return self.native_draft

    async def post(self, payload: str, *, index: int, first: bool) -> tuple[str, ...]:
        if self.blocked:
            raise Blocked()
        if self.fail_post_when is not None and self.fail_post_when in payload:
            raise Refused(payload[:20])
        message_id = f"m{len(self.messages) + 1}"
        self.messages[message_id] = payload
        self.calls.append(("post", payload))
        return (message_id,)

    async def edit(self, message_id: str, payload: str) -> bool:
        if self.fail_edit:
            raise Refused("edit")
        if message_id not in self.messages:
            return False
        self.messages[message_id] = payload
        self.calls.append(("edit", payload))
        return True

    async def discard(self, message_id: str) -> None:
        self.messages.pop(message_id, None)
        self.calls.append(("discard", message_id))

    async def native_reply(self, reply: Reply) -> NativeResult | None:
        return self.native_stream

    async def clear(self) -> None:
        self.cleared += 1

    def unreachable(self, exc: BaseException) -> bool:
        return isinstance(exc, Blocked)

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.calls]


@pytest.fixture
def records(redis: Any, keys: Any) -> DeliveryRecords:
    return DeliveryRecords(redis, keys, "fake", 600)


def answer(text: str, **kw: Any) -> Reply:
    return Reply(ReplyKind.ANSWER, text, "en", **kw)


def paragraphs(n: int, words: int = 30) -> str:
    return "\n\n".join(f"Paragraph {i}: " + "word " * words for i in range(n))


async def test_a_burst_of_progress_is_one_update_now_and_one_coalesced_later(records: DeliveryRecords) -> None:
    fake = FakePlatform(interval=0.3)
    engine = Delivery(fake, records, "j1")
    for line in ("Reading", "Routing", "Diagnosing", "Researching"):
        await engine.progress(Progress(line))
    assert list(fake.messages.values()) == ["⏳ Reading"]  # shown at once, the rest throttled
    await asyncio.sleep(0.5)
    assert fake.kinds() == ["post", "edit"] and list(fake.messages.values()) == ["⏳ Researching"]


async def test_the_interval_comes_from_capabilities(records: DeliveryRecords) -> None:
    fake = FakePlatform(interval=0.0)
    engine = Delivery(fake, records, "j2")
    for line in ("Reading", "Routing", "Diagnosing"):
        await engine.progress(Progress(line))
    assert fake.kinds() == ["post", "edit", "edit"]  # no interval: every line shows


async def test_the_reply_is_split_under_max_length_by_the_platforms_cost(records: DeliveryRecords) -> None:
    fake = FakePlatform(max_length=400, cost_per_char=2)  # e.g. a platform that counts two bytes a character
    text = paragraphs(12)
    delivered = await Delivery(fake, records, "j3").finish(answer(text))
    parts = list(fake.messages.values())
    assert len(parts) == len(delivered.message_ids) > 3
    assert all(fake.cost(p) <= 400 for p in parts)
    assert all(any(f"Paragraph {i}:" in p for p in parts) for i in range(12))
    wider = FakePlatform(max_length=4_000, cost_per_char=2)
    await Delivery(wider, records, "j3b").finish(answer(text))
    assert len(wider.messages) < len(parts)  # the same reply, a larger max_length: fewer parts


async def test_buttons_go_on_the_last_part_only(records: DeliveryRecords) -> None:
    fake = FakePlatform(max_length=300)
    options = (Option("a", "A", "r/a"), Option("b", "B", "r/b"))
    await Delivery(fake, records, "j4").finish(Reply(ReplyKind.CLARIFY, paragraphs(6), "en", options=options))
    parts = list(fake.messages.values())
    assert len(parts) > 1
    assert parts[-1].endswith("[buttons: a,b]")
    assert not any("[buttons" in p for p in parts[:-1])


async def test_the_placeholder_becomes_the_answer(records: DeliveryRecords) -> None:
    fake = FakePlatform()
    engine = Delivery(fake, records, "j5")
    await engine.progress(Progress("Reading"))
    delivered = await engine.finish(answer("The answer."))
    assert list(fake.messages.items()) == [("m1", "The answer.")]
    assert delivered.message_ids == ("m1",) and fake.cleared == 1


async def test_a_failed_edit_falls_back_to_a_new_post(records: DeliveryRecords) -> None:
    fake = FakePlatform()
    engine = Delivery(fake, records, "j6")
    await engine.progress(Progress("Reading"))
    fake.fail_edit = True
    delivered = await engine.finish(answer("The answer."))
    assert fake.messages == {"m2": "The answer."} and delivered.message_ids == ("m2",)  # the stale placeholder is gone


async def test_a_rerun_after_a_crash_edits_and_continues_instead_of_posting_again(records: DeliveryRecords) -> None:
    fake = FakePlatform(max_length=300)
    text = paragraphs(8)
    first = Delivery(fake, records, "j7")
    await first.progress(Progress("Reading"))
    fake.fail_post_when = "Paragraph 5"
    with pytest.raises(Refused):
        await first.finish(answer(text))  # the worker retries the job
    arrived = dict(fake.messages)
    assert arrived and all("Paragraph 5" not in p for p in arrived.values())

    fake.fail_post_when = None
    again = Delivery(fake, records, "j7")  # a new worker, a new engine, the same job
    await again.progress(Progress("Reading"))  # the placeholder is edited, not posted twice
    delivered = await again.finish(answer(text))
    shown = list(fake.messages.values())
    assert [sum(f"Paragraph {i}:" in p for p in shown) for i in range(8)] == [1] * 8
    assert len(delivered.message_ids) == len(shown)
    assert all(fake.messages[k] == v for k, v in arrived.items())  # nothing already delivered was redone


async def test_a_rerun_after_a_full_native_stream_posts_nothing(records: DeliveryRecords) -> None:
    fake = FakePlatform()
    fake.native_stream = NativeResult(delivered="s1")
    assert (await Delivery(fake, records, "j8").finish(answer("Hi"))).message_ids == ("s1",)
    fake.native_stream = None
    assert (await Delivery(fake, records, "j8").finish(answer("Hi"))).message_ids == ("s1",)
    assert fake.messages == {}


async def test_a_broken_native_stream_becomes_the_placeholder(records: DeliveryRecords) -> None:
    fake = FakePlatform()
    fake.messages["s1"] = "half an ans"
    fake.native_stream = NativeResult(placeholder="s1")
    delivered = await Delivery(fake, records, "j9").finish(answer("Half an answer, whole."))
    assert fake.messages == {"s1": "Half an answer, whole."} and delivered.message_ids == ("s1",)


async def test_a_draft_in_the_placeholder_is_replaced_by_the_final_reply(records: DeliveryRecords) -> None:
    fake = FakePlatform(interval=0.0)
    engine = Delivery(fake, records, "j10")
    await engine.progress(Progress("Researching"))
    await engine.progress(Progress("The fix is", stage=DRAFT_STAGE))
    await engine.progress(Progress("The fix is to set `max_model_len`", stage=DRAFT_STAGE))
    assert list(fake.messages.values()) == ["✍ The fix is to set `max_model_len`"]
    delivered = await engine.finish(answer("The fix is to set `max_model_len` [verified]."))
    assert list(fake.messages.values()) == ["The fix is to set `max_model_len` [verified]."]  # no draft left over
    assert delivered.message_ids == ("m1",)


async def test_a_cleared_draft_shows_the_status_again(records: DeliveryRecords) -> None:
    fake = FakePlatform(interval=0.0)
    engine = Delivery(fake, records, "j11")
    await engine.progress(Progress("Researching"))
    await engine.progress(Progress("A first try", stage=DRAFT_STAGE))
    await engine.progress(Progress("", stage=DRAFT_STAGE))
    assert list(fake.messages.values()) == ["⏳ Researching"]


async def test_a_native_draft_posts_no_message_until_the_answer(records: DeliveryRecords) -> None:
    fake = FakePlatform(interval=0.0)
    fake.native_status = fake.native_draft = True
    engine = Delivery(fake, records, "j12")
    await engine.progress(Progress("Researching"))
    await engine.progress(Progress("Partial answer", stage=DRAFT_STAGE))
    assert fake.messages == {} and fake.kinds() == ["status", "draft"]
    await engine.finish(answer("Final answer."))
    assert list(fake.messages.values()) == ["Final answer."]


async def test_a_long_draft_is_throttled_like_progress(records: DeliveryRecords) -> None:
    fake = FakePlatform(interval=0.3)
    engine = Delivery(fake, records, "j13")
    text = ""
    for word in "one two three four five six seven eight".split():
        text += word + " "
        await engine.progress(Progress(text, stage=DRAFT_STAGE))
    await asyncio.sleep(0.5)
    assert fake.kinds() == ["post", "edit"]
    assert list(fake.messages.values()) == ["✍ " + text]
    await engine.finish(answer(text.strip() + "."))
    assert list(fake.messages.values()) == [text.strip() + "."]


async def test_progress_never_raises_and_an_unreachable_chat_stops_it(records: DeliveryRecords) -> None:
    fake = FakePlatform()
    fake.blocked = True
    engine = Delivery(fake, records, "j14")
    await engine.progress(Progress("Reading"))  # must not raise
    delivered = await engine.finish(answer("Lost."))
    assert delivered.extra == {"undeliverable": True} and delivered.message_ids == ()


async def test_a_later_part_failing_without_a_note_is_raised_for_a_retry(records: DeliveryRecords) -> None:
    fake = FakePlatform(max_length=300)
    fake.fail_post_when = "Paragraph 0"
    with pytest.raises(Refused):
        await Delivery(fake, records, "j15").finish(answer(paragraphs(4)))
    assert fake.cleared == 1  # progress signs are removed even then


async def test_finish_does_not_leave_a_throttled_update_behind(records: DeliveryRecords) -> None:
    fake = FakePlatform(interval=0.2)
    engine = Delivery(fake, records, "j16")
    await engine.progress(Progress("Reading"))
    await engine.progress(Progress("Routing"))  # scheduled for later
    await engine.finish(answer("Done."))
    await asyncio.sleep(0.4)
    assert list(fake.messages.values()) == ["Done."]


async def test_a_draft_longer_than_one_message_shows_its_start_within_max_length(records: DeliveryRecords) -> None:
    fake = FakePlatform(max_length=200, cost_per_char=2)
    engine = Delivery(fake, records, "j17")
    await engine.progress(Progress(paragraphs(6), stage=DRAFT_STAGE))
    [shown] = fake.messages.values()
    assert shown.startswith("✍ Paragraph 0:") and fake.cost(shown.removeprefix("✍ ")) <= 200


async def test_a_large_reply_is_rendered_off_the_event_loop(records: DeliveryRecords) -> None:
    import threading

    threads: set[int] = set()

    class Recording(FakePlatform):
        def render(self, chunk: str, reply: Reply, index: int, count: int) -> list[str]:
            threads.add(threading.get_ident())
            return [chunk]

    await Delivery(Recording(max_length=5_000), records, "j18").finish(answer(paragraphs(200, words=50)))
    assert threads and threading.get_ident() not in threads
    threads.clear()
    await Delivery(Recording(), records, "j19").finish(answer("short"))
    assert threads == {threading.get_ident()}  # small replies stay inline
