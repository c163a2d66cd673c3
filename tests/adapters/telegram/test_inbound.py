"""Which updates are for the bot, and what text reaches the core (pure, no network)."""
from __future__ import annotations

from typing import Any

import pytest

from adapters.telegram import config_from_settings
from adapters.telegram.inbound import BotIdentity, button_press, encode_callback, message_to_inbound, utf16_slice
from tests.support.fake_telegram import (
    BOT_ID,
    BOT_USERNAME,
    TOKEN,
    callback_update,
    group_chat,
    message_update,
    user,
)

ME = BotIdentity(BOT_ID, BOT_USERNAME)
BOT_USER = {"id": BOT_ID, "is_bot": True, "first_name": "Copilot", "username": BOT_USERNAME}


def parse(data: dict[str, Any]) -> Any:
    return message_to_inbound(data, ME)


def test_private_message_is_answered_with_chat_as_conversation() -> None:
    msg = parse(message_update("How do I run Qwen3 on 910B?", update_id=9001, message_id=5))
    assert msg is not None
    assert msg.text == "How do I run Qwen3 on 910B?"
    assert msg.is_direct and msg.platform == "telegram" and msg.event_id == "9001"
    assert msg.channel == "42" and msg.thread == "42" and msg.sender == "42" and msg.message_id == "5"
    assert msg.workspace == str(BOT_ID)
    assert msg.reply_context == {"chat_id": 42, "chat_type": "private", "topic_id": None, "reply_to": 5}


def test_group_message_without_mention_is_ignored() -> None:
    assert parse(message_update("vllm is slow today", chat=group_chat())) is None


def test_group_mention_is_answered_and_stripped() -> None:
    text = f"@{BOT_USERNAME} why does vllm-ascend fail with ACL 507015?"
    msg = parse(message_update(text, chat=group_chat(), mention=f"@{BOT_USERNAME}"))
    assert msg is not None and not msg.is_direct
    assert msg.text == "why does vllm-ascend fail with ACL 507015?"
    assert msg.channel == "-100200300" and msg.thread == "-100200300"


def test_mention_in_the_middle_with_emoji_before_it_uses_utf16_offsets() -> None:
    text = f"😀😀 hey @{BOT_USERNAME.upper()} what about MindIE?"
    msg = parse(message_update(text, chat=group_chat(), mention=f"@{BOT_USERNAME.upper()}"))
    assert msg is not None
    assert msg.text == "😀😀 hey what about MindIE?"


def test_mention_of_someone_else_is_not_for_us() -> None:
    assert parse(message_update("@other_bot hi", chat=group_chat(), mention="@other_bot")) is None


def test_text_mention_of_the_bot() -> None:
    data = message_update(
        "Copilot help me", chat=group_chat(), entities=[{"type": "text_mention", "offset": 0, "length": 7, "user": BOT_USER}]
    )
    assert parse(data).text == "help me"


def test_reply_to_the_bot_is_answered_without_mention() -> None:
    bots_message = {"message_id": 77, "date": 0, "chat": group_chat(), "from": BOT_USER, "text": "Which one? 1. vLLM 2. vllm-ascend"}
    msg = parse(message_update("2", chat=group_chat(), reply_to=bots_message))
    assert msg is not None and msg.text == "2"


def test_reply_to_someone_else_is_ignored() -> None:
    theirs = {"message_id": 78, "date": 0, "chat": group_chat(), "from": user(7, "Bob", "bob"), "text": "hi"}
    assert parse(message_update("me too", chat=group_chat(), reply_to=theirs)) is None


def test_ask_command_in_group() -> None:
    msg = parse(message_update("/ask what is MindIE-Turbo?", chat=group_chat(), command="/ask"))
    assert msg is not None and msg.text == "what is MindIE-Turbo?"
    msg = parse(message_update(f"/ask@{BOT_USERNAME} hi", chat=group_chat(), command=f"/ask@{BOT_USERNAME}"))
    assert msg is not None and msg.text == "hi"


def test_commands_for_other_bots_or_unaddressed_are_ignored_in_groups() -> None:
    assert parse(message_update("/ask@other_bot hi", chat=group_chat(), command="/ask@other_bot")) is None
    assert parse(message_update("/help", chat=group_chat(), command="/help")) is None


def test_command_addressed_to_us_keeps_the_command_without_suffix() -> None:
    msg = parse(message_update(f"/help@{BOT_USERNAME}", chat=group_chat(), command=f"/help@{BOT_USERNAME}"))
    assert msg is not None and msg.text == "/help"


def test_private_start_command_passes_through() -> None:
    assert parse(message_update("/start", command="/start")).text == "/start"


def test_forum_topic_is_its_own_conversation() -> None:
    chat = group_chat(forum=True)
    msg = parse(message_update(f"@{BOT_USERNAME} q", chat=chat, thread_id=12, mention=f"@{BOT_USERNAME}"))
    assert msg is not None
    assert msg.thread == "-100200300:12" and msg.reply_context["topic_id"] == 12


def test_topic_created_by_the_bot_is_not_a_reply_to_the_bot() -> None:
    created = {"message_id": 12, "date": 0, "chat": group_chat(forum=True), "from": BOT_USER,
               "forum_topic_created": {"name": "NPU", "icon_color": 1}}
    assert parse(message_update("chatter", chat=group_chat(forum=True), thread_id=12, reply_to=created)) is None


@pytest.mark.parametrize(
    "data",
    [
        {"update_id": 1, "edited_message": message_update("x")["message"]},
        {"update_id": 2, "channel_post": {**message_update("x")["message"], "chat": {"id": -1001, "type": "channel"}}},
        message_update("from a bot", sender={"id": 5, "is_bot": True, "first_name": "B"}),
        {"update_id": 3, "message": {"message_id": 1, "date": 0, "chat": group_chat(), "from": user(), "migrate_to_chat_id": -1001234}},
        {"update_id": 4, "my_chat_member": {"chat": group_chat(), "from": user(), "date": 0,
                                            "old_chat_member": {"status": "left", "user": BOT_USER},
                                            "new_chat_member": {"status": "member", "user": BOT_USER}}},
    ],
)
def test_not_for_the_bot(data: dict[str, Any]) -> None:
    assert parse(data) is None


def test_caption_mention_counts() -> None:
    data = message_update("x", chat=group_chat())
    message = data["message"]
    del message["text"]
    message["photo"] = [{"file_id": "f", "file_unique_id": "u", "width": 1, "height": 1}]
    message["caption"] = f"@{BOT_USERNAME} what is this error?"
    message["caption_entities"] = [{"type": "mention", "offset": 0, "length": len(BOT_USERNAME) + 1}]
    assert parse(data).text == "what is this error?"


def test_callback_press_parsing() -> None:
    msg = message_update("Which?", chat=group_chat(), sender=BOT_USER)["message"]
    press = button_press(callback_update(encode_callback("tok_en-1", 2), message=msg)["callback_query"])
    assert (press.token, press.index, press.chat.chat_id, press.message_id) == ("tok_en-1", 2, -100200300, msg["message_id"])
    junk = button_press(callback_update("something:else", message=msg)["callback_query"])
    assert junk.token == "" and junk.index == -1


def test_callback_data_limit_is_enforced() -> None:
    with pytest.raises(ValueError):
        encode_callback("x" * 70, 1)


def test_utf16_slice() -> None:
    assert utf16_slice("😀ab", 2, 2) == "ab"


# --- settings -------------------------------------------------------------------------------------


def test_config(make_settings: Any) -> None:
    assert config_from_settings(make_settings()) is None
    config = config_from_settings(make_settings(telegram_bot_token=TOKEN))
    assert config is not None and config.webhook_url is None and config.bot_id == BOT_ID
    with pytest.raises(ValueError, match="WEBHOOK_SECRET is not set"):
        config_from_settings(make_settings(telegram_bot_token=TOKEN, telegram_webhook_url="https://x/telegram/webhook"))
    with pytest.raises(ValueError, match="1-256 characters"):
        config_from_settings(
            make_settings(telegram_bot_token=TOKEN, telegram_webhook_url="https://x", telegram_webhook_secret="bad secret!")
        )
    with pytest.raises(ValueError, match="malformed") as info:
        config_from_settings(make_settings(telegram_bot_token="not-a-token"))
    assert "not-a-token" not in str(info.value)
