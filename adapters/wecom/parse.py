"""Turn decrypted AI-bot callback JSON into typed values (pure; no I/O).

The same JSON arrives in API mode (decrypted from `{"encrypt"}`) and in
long-connection mode (the `body` of `aibot_msg_callback` / `aibot_event_callback`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Union

from adapters.common.payload import as_dict as _dict, as_str as _str
from core.messages import InboundMessage

PLATFORM = "wecom"
MAX_TEXT_CHARS = 8_000  # a question longer than this is cut; WeCom itself caps text at a few KB


class PayloadError(ValueError):
    """The callback is structurally invalid (missing ids, wrong types)."""


@dataclass(frozen=True)
class Chat:
    bot_id: str
    chat_id: str  # chatid for groups, the user's id for single chats
    is_group: bool
    user_id: str


@dataclass(frozen=True)
class MessageCallback:
    msgid: str
    chat: Chat
    text: str  # mention stripped; "" when the message carries no text (image, file)
    msgtype: str
    response_url: str


@dataclass(frozen=True)
class StreamRefresh:
    msgid: str
    stream_id: str


@dataclass(frozen=True)
class CardClick:
    msgid: str
    chat: Chat
    task_id: str
    event_key: str
    response_url: str


@dataclass(frozen=True)
class FeedbackEvent:
    msgid: str
    chat: Chat
    feedback_id: str
    feedback_type: int  # 1 useful, 2 not useful, 3 withdrawn (per the SDK docs)
    content: str
    reasons: tuple[int, ...]


@dataclass(frozen=True)
class EnterChat:
    msgid: str
    chat: Chat


@dataclass(frozen=True)
class Ignored:
    reason: str


Callback = Union[MessageCallback, StreamRefresh, CardClick, FeedbackEvent, EnterChat, Ignored]


def _chat(payload: dict[str, Any]) -> Chat:
    user_id = _str(_dict(payload.get("from")).get("userid"))
    if not user_id:
        raise PayloadError("from.userid missing")
    is_group = payload.get("chattype") == "group"
    chat_id = _str(payload.get("chatid")) if is_group else user_id
    if not chat_id:
        raise PayloadError("chatid missing in a group callback")
    return Chat(bot_id=_str(payload.get("aibotid")), chat_id=chat_id, is_group=is_group, user_id=user_id)


def strip_mention(text: str, bot_name: str | None, is_group: bool) -> str:
    """Remove `@BotName` from group text.

    With a configured name every `@Name` is removed (the mention can sit anywhere);
    without one, only a leading `@token` goes, because other @mentions are people.
    """
    if not is_group:
        return text.strip()
    if bot_name:
        text = re.sub(r"@" + re.escape(bot_name) + r"(?=\s|$)", " ", text)
    else:
        text = re.sub(r"^\s*@\S+", " ", text, count=1)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def _message_text(payload: dict[str, Any]) -> str:
    msgtype = payload.get("msgtype")
    if msgtype == "text":
        return _str(_dict(payload.get("text")).get("content"))
    if msgtype == "voice":  # WeCom transcribes voice for the bot
        return _str(_dict(payload.get("voice")).get("content"))
    if msgtype == "mixed":
        items = _dict(payload.get("mixed")).get("msg_item")
        parts = [
            _str(_dict(i.get("text")).get("content"))
            for i in (items if isinstance(items, list) else [])
            if isinstance(i, dict) and i.get("msgtype") == "text"
        ]
        return "\n".join(p for p in parts if p)
    return ""


def parse_callback(payload: Any, bot_name: str | None = None) -> Callback:
    if not isinstance(payload, dict):
        raise PayloadError("callback is not a JSON object")
    msgtype = _str(payload.get("msgtype"))
    msgid = _str(payload.get("msgid"))

    if msgtype == "stream":
        stream_id = _str(_dict(payload.get("stream")).get("id"))
        if not stream_id:
            raise PayloadError("stream.id missing")
        return StreamRefresh(msgid=msgid, stream_id=stream_id)

    if not msgid:
        raise PayloadError("msgid missing")

    if msgtype == "event":
        event = _dict(payload.get("event"))
        kind = _str(event.get("eventtype"))
        if kind == "template_card_event":
            body = _dict(event.get("template_card_event"))
            return CardClick(
                msgid=msgid,
                chat=_chat(payload),
                task_id=_str(body.get("task_id")),
                event_key=_str(body.get("event_key")),
                response_url=_str(payload.get("response_url")),
            )
        if kind == "feedback_event":
            body = _dict(event.get("feedback_event"))
            raw_type = body.get("type")
            reasons = body.get("inaccurate_reason_list")
            return FeedbackEvent(
                msgid=msgid,
                chat=_chat(payload),
                feedback_id=_str(body.get("id")),
                feedback_type=raw_type if isinstance(raw_type, int) else 0,
                content=_str(body.get("content"))[:2000],
                reasons=tuple(r for r in (reasons if isinstance(reasons, list) else []) if isinstance(r, int)),
            )
        if kind == "enter_chat":
            return EnterChat(msgid=msgid, chat=_chat(payload))
        return Ignored(f"event {kind or '?'}")

    if msgtype in ("text", "voice", "mixed", "image", "file"):
        chat = _chat(payload)
        text = strip_mention(_message_text(payload), bot_name, chat.is_group)[:MAX_TEXT_CHARS]
        return MessageCallback(
            msgid=msgid, chat=chat, text=text, msgtype=msgtype, response_url=_str(payload.get("response_url"))
        )
    return Ignored(f"msgtype {msgtype or '?'}")


def to_inbound(
    chat: Chat,
    *,
    msgid: str,
    text: str,
    reply_context: dict[str, Any],
    choice: str | None = None,
) -> InboundMessage:
    """The platform-neutral message. The conversation (thread) is the chat itself."""
    return InboundMessage(
        platform=PLATFORM,
        workspace=chat.bot_id,
        channel=chat.chat_id,
        thread=chat.chat_id,
        sender=chat.user_id,
        text=text,
        message_id=msgid,
        event_id=msgid,
        is_direct=not chat.is_group,
        choice=choice,
        reply_context=reply_context,
    )
