"""Parsing AI-bot callbacks (pure)."""
from __future__ import annotations

import pytest

from adapters.wecom.parse import (
    CardClick,
    EnterChat,
    FeedbackEvent,
    Ignored,
    MessageCallback,
    PayloadError,
    StreamRefresh,
    parse_callback,
    strip_mention,
    to_inbound,
)
from tests.support.fake_wecom import event_body, message_body


def test_group_mention_is_stripped_and_chat_is_the_conversation() -> None:
    cb = parse_callback(message_body("@AscendBot vllm-ascend 报错 EH9999 怎么办", chat_id="wrkSFfCgAA", msgid="m1"))
    assert isinstance(cb, MessageCallback)
    assert cb.text == "vllm-ascend 报错 EH9999 怎么办"
    assert cb.chat.is_group and cb.chat.chat_id == "wrkSFfCgAA" and cb.chat.user_id == "zhangsan"
    message = to_inbound(cb.chat, msgid=cb.msgid, text=cb.text, reply_context={"stream_id": "s1"})
    assert (message.platform, message.channel, message.thread, message.sender) == (
        "wecom", "wrkSFfCgAA", "wrkSFfCgAA", "zhangsan"
    )
    assert message.event_id == "m1" and not message.is_direct
    assert message.reply_context == {"stream_id": "s1"}


def test_single_chat_uses_the_user_id_as_chat() -> None:
    cb = parse_callback(message_body("@notabot how do I enable graph mode?", user="lisi"))
    assert isinstance(cb, MessageCallback)
    assert cb.chat.chat_id == "lisi" and not cb.chat.is_group
    assert cb.text == "@notabot how do I enable graph mode?"  # no mention stripping in single chats


@pytest.mark.parametrize(
    ("raw", "name", "expected"),
    [
        ("@Ascend Copilot hi there", "Ascend Copilot", "hi there"),
        ("please help @Ascend Copilot with this", "Ascend Copilot", "please help with this"),
        ("@Bot ask @wangwu about it", None, "ask @wangwu about it"),
        ("@Bot", None, ""),
        ("  @Bot\u2005question", None, "question"),
    ],
)
def test_strip_mention(raw: str, name: str | None, expected: str) -> None:
    assert strip_mention(raw, name, is_group=True) == expected


def test_mixed_and_voice_messages_give_their_text() -> None:
    mixed = message_body("", chat_id="c1")
    mixed["msgtype"] = "mixed"
    mixed["mixed"] = {"msg_item": [{"msgtype": "text", "text": {"content": "@Bot 看这个报错"}},
                                   {"msgtype": "image", "image": {"url": "https://x"}}]}
    cb = parse_callback(mixed)
    assert isinstance(cb, MessageCallback) and cb.text == "看这个报错"
    voice = message_body("")
    voice["msgtype"], voice["voice"] = "voice", {"content": "MindIE 怎么部署"}
    assert parse_callback(voice).text == "MindIE 怎么部署"  # type: ignore[union-attr]
    image = message_body("")
    image["msgtype"], image["image"] = "image", {"url": "https://x"}
    cb = parse_callback(image)
    assert isinstance(cb, MessageCallback) and cb.text == "" and cb.msgtype == "image"


def test_stream_refresh() -> None:
    cb = parse_callback({"msgid": "r1", "msgtype": "stream", "stream": {"id": "s-42"}})
    assert cb == StreamRefresh(msgid="r1", stream_id="s-42")


def test_events() -> None:
    click = parse_callback(event_body("template_card_event", {"card_type": "button_interaction",
                                                             "event_key": "clarify:vllm-ascend",
                                                             "task_id": "clarify_1"}, chat_id="c9", code="RC"))
    assert isinstance(click, CardClick)
    assert (click.task_id, click.event_key, click.chat.chat_id) == ("clarify_1", "clarify:vllm-ascend", "c9")
    assert click.response_url.endswith("response_code=RC")

    fb = parse_callback(event_body("feedback_event", {"id": "s1", "type": 2, "content": "wrong version",
                                                      "inaccurate_reason_list": [2, 4, "x"]}))
    assert isinstance(fb, FeedbackEvent)
    assert (fb.feedback_id, fb.feedback_type, fb.content, fb.reasons) == ("s1", 2, "wrong version", (2, 4))

    assert isinstance(parse_callback(event_body("enter_chat")), EnterChat)
    assert isinstance(parse_callback(event_body("something_new")), Ignored)


@pytest.mark.parametrize(
    "payload",
    [
        [],
        "text",
        {"msgtype": "text", "text": {"content": "hi"}, "from": {"userid": "u"}},  # no msgid
        {"msgid": "m", "msgtype": "text", "text": {"content": "hi"}},  # no sender
        {"msgid": "m", "msgtype": "text", "chattype": "group", "from": {"userid": "u"}, "text": {"content": "x"}},
        {"msgid": "m", "msgtype": "stream", "stream": {}},
        {"msgid": "m", "msgtype": "text", "from": "u", "text": {"content": "hi"}},
    ],
)
def test_malformed_payloads_raise_payload_error(payload: object) -> None:
    with pytest.raises(PayloadError):
        parse_callback(payload)


def test_unknown_msgtype_is_ignored_and_wrong_types_do_not_crash() -> None:
    assert isinstance(parse_callback({"msgid": "m", "msgtype": "location"}), Ignored)
    weird = message_body("hi")
    weird["text"] = {"content": 42}
    assert parse_callback(weird).text == ""  # type: ignore[union-attr]


def test_huge_text_is_cut() -> None:
    cb = parse_callback(message_body("x" * 50_000))
    assert isinstance(cb, MessageCallback) and len(cb.text) == 8_000
