"""Telegram update → InboundMessage: decide whether a message is for the bot, and clean it.

Pure (no I/O), so every addressing rule has a plain unit test. The bot answers:
- every message in a private chat;
- in groups: an @username mention of the bot, a text_mention of the bot, a reply to one of the
  bot's messages, `/ask …`, or a command addressed to it (`/help@bot`).
Everything else (group chatter, other bots, edits, channel posts, service messages) is ignored.

It reads the Bot API's JSON (the webhook body as it came; long polling passes `Update.to_dict()`)
rather than python-telegram-bot's objects: building an `Update` cost about 0.23 ms a message,
as much as the rest of the ack path together, and this reads the few fields it needs. A field of
the wrong type is `MalformedUpdate` (the webhook answers 400), never a crash.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.messages import InboundMessage

PLATFORM = "telegram"
ASK_COMMAND = "ask"
PRIVATE, CHANNEL = "private", "channel"  # Bot API chat types
MENTION, TEXT_MENTION, BOT_COMMAND = "mention", "text_mention", "bot_command"  # Bot API entity types
_SPACES = re.compile(r"[ \t]{2,}")

Json = Mapping[str, Any]


class MalformedUpdate(ValueError):
    """A field the parser reads has the wrong type: not an update Telegram sends."""


def _object(parent: Json, name: str) -> Json | None:
    value = parent.get(name)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise MalformedUpdate(f"{name} is not an object")
    return value


def _required(parent: Json, name: str) -> Json:
    value = _object(parent, name)
    if value is None:
        raise MalformedUpdate(f"{name} is missing")
    return value


def _int(parent: Json, name: str) -> int:
    value = parent.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise MalformedUpdate(f"{name} is not an integer")
    return value


def _optional_int(parent: Json, name: str) -> int | None:
    return None if parent.get(name) is None else _int(parent, name)


def _str(parent: Json, name: str) -> str | None:
    value = parent.get(name)
    if value is not None and not isinstance(value, str):
        raise MalformedUpdate(f"{name} is not a string")
    return value


def full_name(user: Json) -> str:
    """What python-telegram-bot's User.full_name gives: first name, then last name if any."""
    first, last = _str(user, "first_name") or "", _str(user, "last_name")
    return f"{first} {last}" if last else first


@dataclass(frozen=True)
class BotIdentity:
    id: int
    username: str

    def is_me(self, username: str) -> bool:
        return bool(self.username) and username.lstrip("@").lower() == self.username.lower()


@dataclass(frozen=True)
class ChatRef:
    """Where to answer: the chat, and the forum topic when there is one."""

    chat_id: int
    chat_type: str
    topic_id: int | None = None

    @property
    def is_private(self) -> bool:
        return self.chat_type == PRIVATE

    @property
    def thread(self) -> str:
        # A forum topic is its own conversation; everything else is one conversation per chat.
        return f"{self.chat_id}:{self.topic_id}" if self.topic_id else str(self.chat_id)

    def context(self, reply_to: int | None) -> dict[str, Any]:
        return {"chat_id": self.chat_id, "chat_type": self.chat_type, "topic_id": self.topic_id, "reply_to": reply_to}

    @classmethod
    def from_context(cls, context: dict[str, Any]) -> "ChatRef":
        return cls(int(context["chat_id"]), str(context["chat_type"]), context.get("topic_id"))


def chat_ref(message: Json) -> ChatRef:
    chat = _required(message, "chat")
    topic = _optional_int(message, "message_thread_id") if message.get("is_topic_message") is True else None
    return ChatRef(_int(chat, "id"), _str(chat, "type") or "", topic)


def utf16_slice(text: str, offset: int, length: int) -> str:
    """Entity offsets count UTF-16 code units (emoji count twice), not Python characters."""
    encoded = text.encode("utf-16-le", "surrogatepass")
    return encoded[offset * 2 : (offset + length) * 2].decode("utf-16-le", errors="ignore")


def _remove_spans(text: str, spans: list[tuple[int, int, str]]) -> str:
    """Replace UTF-16 spans (offset, length, replacement), right to left so offsets stay valid."""
    encoded = text.encode("utf-16-le", "surrogatepass")
    for offset, length, replacement in sorted(spans, reverse=True):
        encoded = encoded[: offset * 2] + replacement.encode("utf-16-le") + encoded[(offset + length) * 2 :]
    return encoded.decode("utf-16-le", errors="ignore")


def _clean(text: str) -> str:
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return "\n".join(lines).strip()


@dataclass(frozen=True)
class Addressing:
    addressed: bool
    text: str


def _entities(message: Json, name: str) -> list[Json]:
    value = message.get(name)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(e, Mapping) for e in value):
        raise MalformedUpdate(f"{name} is not a list of objects")
    return value


def addressing(message: Json, bot: BotIdentity) -> Addressing:
    """Whether `message` is for the bot, and its text without the bot mention or /ask."""
    has_text = _str(message, "text") is not None
    text = _str(message, "text") if has_text else (_str(message, "caption") or "")
    assert text is not None
    entities = _entities(message, "entities" if has_text else "caption_entities")
    private = _str(_required(message, "chat"), "type") == PRIVATE
    addressed = private
    spans: list[tuple[int, int, str]] = []
    for entity in entities:
        kind, offset, length = _str(entity, "type"), _int(entity, "offset"), _int(entity, "length")
        segment = utf16_slice(text, offset, length)
        if kind == MENTION and bot.is_me(segment):
            addressed = True
            spans.append((offset, length, ""))
        elif kind == TEXT_MENTION and (user := _object(entity, "user")) is not None and user.get("id") == bot.id:
            addressed = True
            spans.append((offset, length, ""))
        elif kind == BOT_COMMAND and offset == 0:
            command, _, target = segment[1:].partition("@")
            if target and not bot.is_me(target):
                if not private:
                    continue  # a command for another bot in the same group
            if command.lower() == ASK_COMMAND:
                addressed = True
                spans.append((offset, length, ""))
            elif target:
                addressed = True
                spans.append((offset, length, "/" + command))  # "/help@bot" → "/help"
    if not addressed and _replies_to_bot(message, bot):
        addressed = True
    return Addressing(addressed, _clean(_remove_spans(text, spans)) if spans else _clean(text))


def _replies_to_bot(message: Json, bot: BotIdentity) -> bool:
    replied = _object(message, "reply_to_message")
    author = _object(replied, "from") if replied is not None else None
    if replied is None or author is None or author.get("id") != bot.id:
        return False
    # In a forum, every message in a topic "replies" to the topic's creation message; if the bot
    # created the topic that is not a reply to the bot.
    return not (message.get("is_topic_message") is True and replied.get("forum_topic_created") is not None)


def message_to_inbound(update: Json, bot: BotIdentity) -> InboundMessage | None:
    """A new message addressed to the bot → InboundMessage; anything else → None.
    Raises MalformedUpdate for a field of the wrong type."""
    message = _object(update, "message")
    if message is None or _str(_required(message, "chat"), "type") == CHANNEL:
        return None  # edits, channel posts, inline queries, member updates …
    sender = _object(message, "from")
    if sender is None or sender.get("is_bot") is True or _int(sender, "id") == bot.id:
        return None
    if _str(message, "text") is None and _str(message, "caption") is None:
        return None  # stickers, photos without caption, service messages (incl. chat migration)
    found = addressing(message, bot)
    if not found.addressed:
        return None
    chat = chat_ref(message)
    message_id = _int(message, "message_id")
    return InboundMessage(
        platform=PLATFORM,
        workspace=str(bot.id),
        channel=str(chat.chat_id),
        thread=chat.thread,
        sender=str(_int(sender, "id")),
        sender_name=full_name(sender),
        text=found.text,
        message_id=str(message_id),
        event_id=str(_int(update, "update_id")),
        is_direct=chat.is_private,
        reply_context=chat.context(reply_to=message_id),
    )


@dataclass(frozen=True)
class ButtonPress:
    """A press on one of our inline buttons: the token of the stored keyboard and the option index."""

    query_id: str
    token: str
    index: int
    chat: ChatRef | None
    message_id: int | None
    sender_id: int
    sender_name: str


CALLBACK_PREFIX = "c"


def encode_callback(token: str, index: int) -> str:
    data = f"{CALLBACK_PREFIX}:{token}:{index}"
    if len(data.encode("utf-8")) > 64:  # Bot API limit for callback_data
        raise ValueError("callback data longer than 64 bytes")
    return data


def button_press(query: Json) -> ButtonPress:
    """Parse a callback query. Unknown data gives token '' (the caller still answers it).
    Raises MalformedUpdate for a field of the wrong type."""
    token, index = "", -1
    parts = (_str(query, "data") or "").split(":")
    if len(parts) == 3 and parts[0] == CALLBACK_PREFIX and parts[2].isdigit():
        token, index = parts[1], int(parts[2])
    message = _object(query, "message")  # an inaccessible (old) message still has chat and message_id
    chat = chat_ref(message) if message is not None else None
    sender = _required(query, "from")
    query_id = _str(query, "id")
    if not query_id:
        raise MalformedUpdate("id is missing")
    return ButtonPress(
        query_id=query_id,
        token=token,
        index=index,
        chat=chat,
        message_id=_int(message, "message_id") if message is not None else None,
        sender_id=_int(sender, "id"),
        sender_name=full_name(sender),
    )


def press_to_inbound(update_id: int, press: ButtonPress, bot: BotIdentity, key: str, label: str) -> InboundMessage:
    """A resolved button press → the user's choice, in the conversation the keyboard was sent to."""
    assert press.chat is not None
    return InboundMessage(
        platform=PLATFORM,
        workspace=str(bot.id),
        channel=str(press.chat.chat_id),
        thread=press.chat.thread,
        sender=str(press.sender_id),
        sender_name=press.sender_name,
        text=label,
        message_id=str(press.message_id or ""),
        event_id=str(update_id),
        is_direct=press.chat.is_private,
        choice=key,
        reply_context=press.chat.context(reply_to=press.message_id),
    )
