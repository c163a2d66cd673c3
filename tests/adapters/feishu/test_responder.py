"""The responder against the fake Open API: working card, progress, answer, splits and fallbacks."""
import json

import httpx
import pytest

from adapters.feishu.client import FeishuApi
from adapters.feishu.parse import parse_message_event
from adapters.feishu.responder import CardKitSwitch, FeishuResponder
from adapters.feishu.token import TenantToken
from core.messages import Option, Progress, Reply, ReplyKind
from tests.support.fake_feishu import FakeFeishu, message_event


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def fake():
    async with FakeFeishu() as f:
        yield f


@pytest.fixture
async def api(fake):
    async with httpx.AsyncClient(base_url=fake.url) as http:
        yield FeishuApi(http, TenantToken(http, fake.app_id, fake.app_secret))


def question(text="vllm-ascend OOM", message_id="om_q", **kw):
    return parse_message_event(message_event(text, message_id=message_id, **kw), "ou_bot")


def make(api, redis, keys, *, cardkit=True, job="1-0", clock=None, message=None):
    return FeishuResponder(
        api, redis, keys, message or question(), job, cardkit=CardKitSwitch(cardkit), min_interval=1.0, clock=clock or Clock()
    )


def answer(text="**Answer**: set `max_model_len`.") -> Reply:
    return Reply(ReplyKind.ANSWER, text, "en")


async def test_cardkit_working_card_streams_progress_then_becomes_the_answer(fake, api, redis, keys):
    clock = Clock()
    r = make(api, redis, keys, clock=clock)
    await r.progress(Progress("Routing"))
    [working] = fake.replies_to("om_q")
    assert working.msg_type == "interactive" and working.content["type"] == "card"
    assert "Working on your question" in fake.visible_text(working)
    card = fake.cards[working.content["data"]["card_id"]]
    assert card.card["config"]["streaming_mode"] is True
    clock.now += 1.5
    await r.progress(Progress("Searching issues"))
    clock.now += 0.1
    await r.progress(Progress("Reading code"))  # throttled: inside the interval
    clock.now += 1.5
    await r.progress(Progress("Writing"))
    streamed = [c for _, c in card.streamed]
    assert len(streamed) == 2
    assert streamed[0].endswith("- Searching issues") and streamed[1].endswith("- Writing")
    assert streamed[1].startswith(streamed[0])  # grows: Feishu shows a typewriter effect
    delivered = await r.finish(answer())
    assert delivered.message_ids == (working.message_id,)
    assert fake.visible_text(working) == "**Answer**: set `max_model_len`."
    assert card.card["config"]["streaming_mode"] is False
    assert len(fake.replies_to("om_q")) == 1 and not fake.violations


async def test_without_cardkit_the_interactive_card_is_patched(fake, api, redis, keys):
    fake.cardkit_enabled = False
    switch_clock = Clock()
    r = make(api, redis, keys, clock=switch_clock)
    await r.progress(Progress("Routing"))
    [working] = fake.replies_to("om_q")
    assert working.content["schema"] == "2.0" and working.content["config"]["update_multi"]
    switch_clock.now += 2
    await r.progress(Progress("Diagnosing"))
    await r.finish(answer())
    assert "- Diagnosing" in working.edits[0]["body"]["elements"][0]["content"]
    assert fake.visible_text(working) == "**Answer**: set `max_model_len`."
    assert len(fake.replies_to("om_q")) == 1 and not fake.violations


async def test_cardkit_refusal_is_remembered_for_the_process(fake, api, redis, keys):
    fake.cardkit_enabled = False
    switch = CardKitSwitch(True)
    first = FeishuResponder(api, redis, keys, question(), "1-0", cardkit=switch, clock=Clock())
    await first.progress(Progress("Routing"))
    assert switch.enabled is False
    second = FeishuResponder(api, redis, keys, question(message_id="om_q2"), "2-0", cardkit=switch, clock=Clock())
    await second.progress(Progress("Routing"))
    creates = [r for r in fake.server.requests if r.path == "/open-apis/cardkit/v1/cards"]
    assert len(creates) == 1  # the second job did not try again


async def test_answer_without_progress_is_a_single_reply_card(fake, api, redis, keys):
    r = make(api, redis, keys)
    await r.finish(answer())
    [msg] = fake.replies_to("om_q")
    assert msg.msg_type == "interactive" and fake.visible_text(msg) == "**Answer**: set `max_model_len`."


async def test_60kb_answer_is_split_into_several_cards_under_the_limit(fake, api, redis, keys):
    r = make(api, redis, keys)
    await r.progress(Progress("Routing"))
    text = "\n\n".join(f"Paragraph {i}: " + "NPU memory detail. " * 30 for i in range(110))
    assert len(text.encode()) > 60_000
    delivered = await r.finish(answer(text))
    replies = fake.replies_to("om_q")
    assert len(replies) == len(delivered.message_ids) >= 3
    shown = "\n".join(fake.visible_text(m) for m in replies)
    assert all(f"Paragraph {i}:" in shown for i in range(110))
    assert not fake.violations  # the fake refuses bodies over 30 KB


async def test_card_failure_falls_back_to_text(fake, api, redis, keys):
    fake.refuse_cards = True
    r = make(api, redis, keys)
    await r.progress(Progress("Routing"))  # the working card fails: no card at all
    delivered = await r.finish(answer("Plain **answer** <at user_id=\"all\"></at>"))
    [msg] = fake.replies_to("om_q")
    assert msg.msg_type == "text" and delivered.message_ids == (msg.message_id,)
    assert msg.content["text"].startswith("Plain **answer**") and "<at" not in msg.content["text"]


async def test_patch_failure_at_the_end_sends_the_answer_as_new_message(fake, api, redis, keys):
    fake.cardkit_enabled = False
    r = make(api, redis, keys)
    await r.progress(Progress("Routing"))
    fake.refuse_cards = True  # the patch with the answer fails, and so would a new card
    await r.finish(answer())
    replies = fake.replies_to("om_q")
    assert [m.msg_type for m in replies] == ["interactive", "text"]
    assert replies[1].content["text"] == "**Answer**: set `max_model_len`."


async def test_clarification_card_carries_buttons(fake, api, redis, keys):
    r = make(api, redis, keys, message=question("MindIE 怎么部署"))
    reply = Reply(ReplyKind.CLARIFY, "你指的是哪个 MindIE？", "zh", options=(Option("llm", "MindIE-LLM", "a/b"), Option("sd", "MindIE-SD", "a/c")))
    await r.finish(reply)
    [msg] = fake.replies_to("om_q")
    buttons = fake.buttons(msg)
    assert [b["behaviors"][0]["value"]["key"] for b in buttons] == ["llm", "sd"]
    assert "1. MindIE-LLM" in fake.visible_text(msg)


async def test_a_redelivered_job_edits_the_same_working_card(fake, api, redis, keys):
    first = make(api, redis, keys, job="7-0")
    await first.progress(Progress("Routing"))
    # the worker died here; another worker runs the same job
    second = make(api, redis, keys, job="7-0")
    await second.progress(Progress("Routing"))
    await second.finish(answer())
    [only] = fake.replies_to("om_q")
    assert fake.visible_text(only) == "**Answer**: set `max_model_len`."
    assert not fake.violations  # sequences kept increasing across both responders


async def test_topic_group_answers_in_thread(fake, api, redis, keys):
    r = make(api, redis, keys, message=question(root_id="om_root", thread_id="omt_1"))
    await r.progress(Progress("Routing"))
    await r.finish(answer())
    [msg] = fake.replies_to("om_q")
    assert msg.in_thread


async def test_progress_never_raises_even_when_feishu_is_down(redis, keys):
    from tests.support.fake_http import free_port

    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{free_port()}") as http:  # nothing listens there
        down = FeishuApi(http, TenantToken(http, "cli_test", "app-secret"))
        r = make(down, redis, keys)
        await r.progress(Progress("Routing"))  # must not raise
        with pytest.raises(Exception):
            await r.finish(answer())  # but a lost answer is an error the worker retries


def test_request_uuid_is_stable_and_short():
    from adapters.feishu.responder import request_uuid

    assert request_uuid("1-0", "card-0") == request_uuid("1-0", "card-0") != request_uuid("1-0", "card-1")
    assert len(request_uuid("1700000000000-0", "working")) <= 50
    json.dumps(request_uuid("a", "b"))
