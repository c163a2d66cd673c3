"""The responder against the fake Bot API, through the real python-telegram-bot client."""
from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adapters.telegram.adapter import TelegramAdapter
from core.messages import InboundMessage, Option, Progress, Reply, ReplyKind
from tests.support.fake_telegram import FakeTelegram, group_chat, message_update
from tests.adapters.telegram.conftest import GROUP, inbound


async def dm(adapter: TelegramAdapter, text: str = "question") -> InboundMessage:
    return await inbound(adapter, message_update(text))


async def group(adapter: TelegramAdapter, text: str = "question", **extra: Any) -> InboundMessage:
    return await inbound(adapter, message_update(f"@ascend_copilot_bot {text}", chat=group_chat(GROUP), mention="@ascend_copilot_bot", **extra))


def answer(text: str = "**Conclusion:** upgrade to `0.9.1`.") -> Reply:
    return Reply(ReplyKind.ANSWER, text, "en")


async def test_private_chat_streams_a_draft_then_sends_the_final_message(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    responder = adapter.responder(await dm(adapter), "1-0")
    await responder.progress(Progress("Reading your question…"))
    await tg.wait_for(lambda: tg.calls_to("sendMessageDraft"))
    await responder.progress(Progress("Researching vllm-ascend…"))
    await tg.wait_for(lambda: any("Researching" in c.params.get("text", "") for c in tg.calls_to("sendMessageDraft")))
    delivered = await responder.finish(answer())

    assert tg.calls_to("sendChatAction")[0].params["action"] == "typing"
    drafts = tg.calls_to("sendMessageDraft")
    assert {c.params["chat_id"] for c in drafts} == {42} and len({c.params["draft_id"] for c in drafts}) == 1
    assert not tg.calls_to("editMessageText")
    [final] = tg.calls_to("sendMessage")
    assert final.params["parse_mode"] == "HTML" and "reply_parameters" not in final.params
    assert final.params["text"] == "<b>Conclusion:</b> upgrade to <code>0.9.1</code>."
    assert delivered.message_ids == (str(tg.chat_messages(42)[0].message_id),)


async def test_group_uses_one_placeholder_edited_in_place(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    message = await group(adapter)
    responder = adapter.responder(message, "2-0")
    for step in ("Reading…", "Diagnosing…", "Researching…", "Reading files…"):
        await responder.progress(Progress(step))
    await tg.wait_for(lambda: tg.calls_to("sendMessage"))
    delivered = await responder.finish(answer("Final answer."))

    assert not tg.calls_to("sendMessageDraft")  # drafts are for private chats only
    [placeholder] = tg.calls_to("sendMessage")
    assert placeholder.params["text"].startswith("⏳")
    assert placeholder.params["reply_parameters"]["message_id"] == int(message.message_id)
    [stored] = tg.chat_messages(GROUP)
    assert tg.visible(stored) == "Final answer."
    assert delivered.message_ids == (str(stored.message_id),)
    # progress is coalesced to the latest line, never one request per update
    assert len(tg.calls_to("editMessageText")) < 4


async def test_group_progress_respects_the_shared_edit_budget(adapter: TelegramAdapter, tg: FakeTelegram, redis: Any, keys: Any) -> None:
    import time

    window = int(time.time() // 60)
    for w in (window, window + 1):  # whichever minute the test runs in, the budget is spent
        await redis.set(keys.adapter_state("telegram", f"edits:{GROUP}:{w}"), 99, ex=120)
    responder = adapter.responder(await group(adapter), "3-0")
    await responder.progress(Progress("Reading…"))
    await tg.wait_for(lambda: tg.calls_to("sendChatAction"))
    await responder.finish(answer("Done."))
    [sent] = tg.calls_to("sendMessage")  # only the answer: no placeholder while over budget
    assert sent.params["text"] == "Done."


async def test_clarification_gets_an_inline_keyboard_with_state_in_redis(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    options = (Option("vllm", "vLLM (upstream)", "vllm-project/vllm"), Option("vllm-ascend", "vllm-ascend (Ascend plugin)", "vllm-project/vllm-ascend"))
    reply = Reply(ReplyKind.CLARIFY, "Which project?\n\n1. vLLM (upstream)\n2. vllm-ascend (Ascend plugin)", "en", options=options)
    await adapter.responder(await dm(adapter), "4-0").finish(reply)

    [sent] = tg.calls_to("sendMessage")
    rows = sent.params["reply_markup"]["inline_keyboard"]
    assert [r[0]["text"] for r in rows] == ["1. vLLM (upstream)", "2. vllm-ascend (Ascend plugin)"]
    for n, row in enumerate(rows):
        data = row[0]["callback_data"]
        assert len(data.encode()) <= 64
        _, token, index = data.split(":")
        choice = await adapter.buttons.resolve(token, int(index), 42)
        assert choice is not None and choice.key == options[n].key and choice.label == options[n].label
        assert await adapter.buttons.resolve(token, int(index), 999) is None  # pressed in another chat


async def test_ten_thousand_characters_with_code_blocks_arrive_split_and_valid(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    parts = []
    for n in range(10):
        parts.append(f"## Part {n}\nSet `ASCEND_RT_VISIBLE_DEVICES` & **restart** <the> server.")
        parts.append("```bash\n" + "\n".join(f"vllm serve model-{n} --arg {i} && echo '<ok>'" for i in range(25)) + "\n```")
    text = "\n\n".join(parts)
    assert len(text) >= 10_000
    message = await group(adapter)
    responder = adapter.responder(message, "5-0")
    await responder.progress(Progress("Researching…"))
    await tg.wait_for(lambda: tg.calls_to("sendMessage"))
    delivered = await responder.finish(answer(text))

    stored = tg.chat_messages(GROUP)
    assert len(stored) >= 3 and len(delivered.message_ids) == len(stored)
    assert stored[0].edits >= 1  # the placeholder became the first chunk
    visible = "".join(tg.visible(m) for m in stored)
    for m in stored:
        assert m.parse_mode == "HTML" and m.text.count("<pre>") == m.text.count("</pre>")
    for n in range(10):
        assert f"vllm serve model-{n} --arg 24 && echo '<ok>'" in visible
    assert "⏳" not in visible


async def test_refused_html_is_sent_again_as_plain_text(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    tg.fail_next("sendMessage", 400, "Bad Request: can't parse entities: unsupported start tag \"b\" at byte offset 0")
    await adapter.responder(await dm(adapter), "6-0").finish(answer("**Bold** and [docs](https://docs.vllm.ai) & more"))
    first, second = tg.calls_to("sendMessage")
    assert first.params["parse_mode"] == "HTML"
    assert "parse_mode" not in second.params
    assert second.params["text"] == "Bold and docs (https://docs.vllm.ai) & more"


async def test_429_retry_after_is_honoured_and_the_reply_arrives(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    tg.fail_next("sendMessage", 429, "Too Many Requests: retry after 1", {"retry_after": 1})
    delivered = await adapter.responder(await dm(adapter), "7-0").finish(answer("Arrives anyway."))
    assert len(tg.calls_to("sendMessage")) == 2
    [stored] = tg.chat_messages(42)
    assert tg.visible(stored) == "Arrives anyway." and delivered.message_ids == (str(stored.message_id),)


async def test_user_who_blocked_the_bot_does_not_crash_the_job(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    for method in ("sendChatAction", "sendMessageDraft", "sendMessage"):
        tg.fail_next(method, 403, "Forbidden: bot was blocked by the user", times=100)
    responder = adapter.responder(await dm(adapter), "8-0")
    await responder.progress(Progress("Reading…"))
    await tg.wait_for(lambda: tg.calls_to("sendChatAction"))
    delivered = await responder.finish(answer())
    assert delivered.message_ids == () and delivered.extra.get("undeliverable") is True
    assert not tg.chat_messages(42)


async def test_group_migrated_to_supergroup_is_followed_and_remembered(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    old, new = -4000, -1004000
    tg.fail_next(
        "sendMessage", 400, "Bad Request: group chat was upgraded to a supergroup chat",
        {"migrate_to_chat_id": new}, when=lambda p: p["chat_id"] == old, times=100,
    )
    data = message_update("@ascend_copilot_bot q", chat=group_chat(old, kind="group"), mention="@ascend_copilot_bot")
    await adapter.responder(await inbound(adapter, data), "9-0").finish(answer("To the supergroup."))
    assert [tg.visible(m) for m in tg.chat_messages(new)] == ["To the supergroup."]

    data = message_update("@ascend_copilot_bot again", chat=group_chat(old, kind="group"), mention="@ascend_copilot_bot")
    await adapter.responder(await inbound(adapter, data), "9-1").finish(answer("Straight there."))
    assert [c.params["chat_id"] for c in tg.calls_to("sendMessage")] == [old, new, new]


async def test_a_rerun_after_a_crash_continues_instead_of_posting_twice(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    text = "\n\n".join(f"Paragraph {n}: " + "word " * 150 for n in range(12))  # ~9,000 characters
    message = await dm(adapter)
    tg.fail_next("sendMessage", 502, "Bad Gateway", when=lambda p: "Paragraph 6" in p["text"])
    with pytest.raises(Exception):
        await adapter.responder(message, "10-0").finish(answer(text))
    delivered_before = len(tg.chat_messages(42))
    assert delivered_before >= 1

    delivered = await adapter.responder(message, "10-0").finish(answer(text))
    visible = [tg.visible(m) for m in tg.chat_messages(42)]
    assert sum("Paragraph 0:" in v for v in visible) == 1
    assert all(any(f"Paragraph {n}:" in v for v in visible) for n in range(12))
    assert len(delivered.message_ids) == len(visible)


async def test_forum_topic_replies_stay_in_the_topic(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    data = message_update("@ascend_copilot_bot q", chat=group_chat(GROUP, forum=True), thread_id=33, mention="@ascend_copilot_bot")
    responder = adapter.responder(await inbound(adapter, data), "11-0")
    await responder.progress(Progress("Reading…"))
    await tg.wait_for(lambda: tg.calls_to("sendMessage"))
    await responder.finish(answer("In the topic."))
    assert all(c.params.get("message_thread_id") == 33 for c in tg.calls_to("sendMessage") + tg.calls_to("sendChatAction"))


async def test_progress_never_waits_for_telegram(adapter: TelegramAdapter, tg: FakeTelegram, monkeypatch: Any) -> None:
    import adapters.telegram.responder as responder_module

    # If finish() waited for stuck progress requests, this test would hang (the guard below fails it).
    monkeypatch.setattr(responder_module, "PUMP_GRACE", 3600.0)
    gate = tg.hold("sendChatAction")
    responder = adapter.responder(await dm(adapter), "12-0")
    await responder.progress(Progress("Reading…"))  # returns although the typing request hangs
    await tg.wait_for(lambda: tg.calls_to("sendChatAction"))
    await responder.progress(Progress("Still reading…"))
    await asyncio.wait_for(responder.finish(answer("Answered.")), timeout=30)
    gate.set()
    assert [tg.visible(m) for m in tg.chat_messages(42)] == ["Answered."]


async def test_jobs_in_hand_still_answer_after_the_web_app_stopped_the_adapter(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    message = await dm(adapter)
    await adapter.stop()  # `serve` stops the web app first, then lets the worker finish its jobs
    await adapter.responder(message, "13-0").finish(answer("Still delivered."))
    assert [tg.visible(m) for m in tg.chat_messages(42)] == ["Still delivered."]


async def test_typing_and_the_draft_are_kept_alive_while_the_core_works(
    adapter: TelegramAdapter, tg: FakeTelegram, monkeypatch: Any
) -> None:
    import adapters.telegram.responder as responder_module

    monkeypatch.setattr(responder_module, "TYPING_EVERY", 0.05)  # 4 s in production (typing fades after 5 s)
    monkeypatch.setattr(responder_module, "DRAFT_REFRESH", 0.05)  # 20 s in production (a draft lives 30 s)
    responder = adapter.responder(await dm(adapter), "14-0")
    await responder.progress(Progress("Researching…"))
    await tg.wait_for(lambda: len(tg.calls_to("sendChatAction")) >= 3 and len(tg.calls_to("sendMessageDraft")) >= 3)
    await responder.finish(answer("Done."))
    typing_after_finish = len(tg.calls_to("sendChatAction"))
    await asyncio.sleep(0.2)
    assert len(tg.calls_to("sendChatAction")) == typing_after_finish  # the keep-alive stopped with the answer
    assert {c.params["text"] for c in tg.calls_to("sendMessageDraft")} == {"⏳ Researching…"}


async def test_group_placeholder_edit_refused_as_html_is_edited_as_plain_text(adapter: TelegramAdapter, tg: FakeTelegram) -> None:
    responder = adapter.responder(await group(adapter), "15-0")
    await responder.progress(Progress("Reading…"))
    await tg.wait_for(lambda: tg.calls_to("sendMessage"))
    tg.fail_next("editMessageText", 400, "Bad Request: can't parse entities: unexpected end tag", when=lambda p: "Final" in p["text"])
    await responder.finish(answer("**Final** <answer>"))
    [stored] = tg.chat_messages(GROUP)
    assert stored.parse_mode is None and stored.text == "Final <answer>"


async def test_editing_to_identical_content_is_not_an_error(adapter: TelegramAdapter, tg: FakeTelegram, redis: Any, keys: Any) -> None:
    from adapters.telegram.client import TelegramSender

    sender = TelegramSender(await adapter.ready_bot(), redis, keys, GROUP, None)
    [posted] = await sender.send("<b>same</b>")
    assert await sender.edit(posted.message_id, "<b>same</b>") is True
    assert len(tg.calls_to("editMessageText")) == 1 and tg.chat_messages(GROUP)[0].edits == 0  # refused as "not modified"
    assert await sender.edit(999_999, "<b>gone</b>") is False  # deleted placeholder: caller posts anew
