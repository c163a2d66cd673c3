"""Streamed drafts in Telegram: a message draft in private chats, the placeholder in groups;
the verified answer is the only message left either way."""
from __future__ import annotations

from adapters.telegram.adapter import TelegramAdapter
from core.messages import DRAFT_STAGE, Progress, Reply, ReplyKind
from tests.support.fake_telegram import FakeTelegram, group_chat, message_update
from tests.adapters.telegram.conftest import GROUP, inbound


FINAL = Reply(ReplyKind.ANSWER, "Use **0.9.1** (verified).", "en")


async def test_a_private_chat_streams_the_draft_as_a_message_draft(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    responder = adapter.responder(await inbound(adapter, message_update("q")), "dr-1")
    await responder.progress(Progress("Use **0.9", stage=DRAFT_STAGE))
    await tg.wait_for(lambda: tg.calls_to("sendMessageDraft"))
    await responder.finish(FINAL)
    [draft] = tg.calls_to("sendMessageDraft")
    assert draft.params["text"] == "Use **0.9"  # half-written Markdown shows as typed, never as broken HTML
    assert [tg.visible(m) for m in tg.chat_messages(42)] == ["Use 0.9.1 (verified)."]


async def test_a_group_shows_the_draft_in_the_placeholder_the_answer_replaces(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    data = message_update("@ascend_copilot_bot q", chat=group_chat(GROUP), mention="@ascend_copilot_bot")
    responder = adapter.responder(await inbound(adapter, data), "dr-2")
    await responder.progress(Progress("Use the matrix", stage=DRAFT_STAGE))
    await tg.wait_for(lambda: tg.calls_to("sendMessage"))
    [placeholder] = tg.chat_messages(GROUP)
    assert tg.visible(placeholder) == "Use the matrix"
    await responder.finish(FINAL)
    assert [tg.visible(m) for m in tg.chat_messages(GROUP)] == ["Use 0.9.1 (verified)."]
    assert not tg.calls_to("sendMessageDraft")


async def test_a_placeholder_that_cannot_be_edited_is_deleted_once_the_answer_is_posted(
    adapter: TelegramAdapter, tg: FakeTelegram
) -> None:
    data = message_update("@ascend_copilot_bot q", chat=group_chat(GROUP), mention="@ascend_copilot_bot")
    responder = adapter.responder(await inbound(adapter, data), "dr-3")
    await responder.progress(Progress("A half-written draft", stage=DRAFT_STAGE))
    await tg.wait_for(lambda: tg.calls_to("sendMessage"))
    tg.fail_next("editMessageText", 400, "Bad Request: message can't be edited")
    await responder.finish(FINAL)
    assert [tg.visible(m) for m in tg.chat_messages(GROUP)] == ["Use 0.9.1 (verified)."]  # no draft left over
    assert len(tg.calls_to("deleteMessage")) == 1
