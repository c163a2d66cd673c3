"""Telegram: an answer about a product carries one Escalate button; its press comes back as the choice."""
from __future__ import annotations

from adapters.telegram.adapter import TelegramAdapter
from core.escalate import ESCALATE_CHOICE
from core.messages import Reply, ReplyKind
from tests.adapters.telegram.conftest import inbound
from tests.support.fake_telegram import FakeTelegram, message_update


async def test_an_answer_gets_an_escalate_button_that_resolves_to_the_escalate_choice(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    reply = Reply(ReplyKind.ANSWER, "Upgrade CANN.", "zh", repos=("vllm-project/vllm-ascend",), trace_id="t1")
    await adapter.responder(await inbound(adapter, message_update("问题")), "e-0").finish(reply)
    [sent] = tg.calls_to("sendMessage")
    [[button]] = sent.params["reply_markup"]["inline_keyboard"]
    assert button["text"] == "📮 提交问题到上游"  # not numbered like a clarification's options
    _, token, index = button["callback_data"].split(":")
    choice = await adapter.buttons.resolve(token, int(index), 42)
    assert choice is not None and choice.key == ESCALATE_CHOICE
    assert await adapter.buttons.resolve(token, int(index), 999) is None  # pressed in another chat


async def test_notices_and_answers_without_a_product_get_no_button(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    message = await inbound(adapter, message_update("q"))
    await adapter.responder(message, "n-0").finish(Reply(ReplyKind.NOTICE, "Reset.", "en", trace_id="t"))
    await adapter.responder(message, "a-0").finish(Reply(ReplyKind.ANSWER, "Out of scope.", "en", trace_id="t2"))
    assert all("reply_markup" not in c.params for c in tg.calls_to("sendMessage"))
