"""Telegram update → InboundMessage: decide whether a message is for the bot, and clean it.

Pure (no I/O), so every addressing rule has a plain unit test. The bot answers:
- every message in a private chat;
- in groups: an @username mention of the bot, a text_mention of the bot, a reply to one of the
  bot's messages, `/ask …`, or a command addressed to it (`/help@bot`).
Everything else (group chatter, other bots, edits, channel posts, service messages) is ignored.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from telegram import CallbackQuery, Chat, Message, MessageEntity, Update

from core.messages import InboundMessage

PLATFORM = "telegram"
ASK_COMMAND = "ask"
_SPACES = re.compile(r"[ \t]{2,}")


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
        return self.chat_type == Chat.PRIVATE

    @property
    def thread(self) -> str:
        # A forum topic is its own conversation; everything else is one conversation per chat.
        return f"{self.chat_id}:{self.topic_id}" if self.topic_id else str(self.chat_id)

    def context(self, reply_to: int | None) -> dict[str, Any]:
        return {"chat_id": self.chat_id, "chat_type": self.chat_type, "topic_id": self.topic_id, "reply_to": reply_to}

    @classmethod
    def from_context(cls, context: dict[str, Any]) -> "ChatRef":
        return cls(int(context["chat_id"]), str(context["chat_type"]), context.get("topic_id"))


def chat_ref(message: Message) -> ChatRef:
    topic = message.message_thread_id if message.is_topic_message else None
    return ChatRef(message.chat.id, message.chat.type, topic)


def utf16_slice(text: str, offset: int, length: int) -> str:
    """Entity offsets count UTF-16 code units (emoji count twice), not Python characters."""
    encoded = text.encode("utf-16-le")
    return encoded[offset * 2 : (offset + length) * 2].decode("utf-16-le", errors="ignore")


def _remove_spans(text: str, spans: list[tuple[int, int, str]]) -> str:
    """Replace UTF-16 spans (offset, length, replacement), right to left so offsets stay valid."""
    encoded = text.encode("utf-16-le")
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


def addressing(message: Message, bot: BotIdentity) -> Addressing:
    """Whether `message` is for the bot, and its text without the bot mention or /ask."""
    text = message.text if message.text is not None else (message.caption or "")
    entities = message.entities if message.text is not None else message.caption_entities
    private = message.chat.type == Chat.PRIVATE
    addressed = private
    spans: list[tuple[int, int, str]] = []
    for entity in entities or ():
        segment = utf16_slice(text, entity.offset, entity.length)
        if entity.type == MessageEntity.MENTION and bot.is_me(segment):
            addressed = True
            spans.append((entity.offset, entity.length, ""))
        elif entity.type == MessageEntity.TEXT_MENTION and entity.user is not None and entity.user.id == bot.id:
            addressed = True
            spans.append((entity.offset, entity.length, ""))
        elif entity.type == MessageEntity.BOT_COMMAND and entity.offset == 0:
            command, _, target = segment[1:].partition("@")
            if target and not bot.is_me(target):
                if not private:
                    continue  # a command for another bot in the same group
            if command.lower() == ASK_COMMAND:
                addressed = True
                spans.append((entity.offset, entity.length, ""))
            elif target:
                addressed = True
                spans.append((entity.offset, entity.length, "/" + command))  # "/help@bot" → "/help"
    if not addressed and _replies_to_bot(message, bot):
        addressed = True
    return Addressing(addressed, _clean(_remove_spans(text, spans)) if spans else _clean(text))


def _replies_to_bot(message: Message, bot: BotIdentity) -> bool:
    replied = message.reply_to_message
    if replied is None or replied.from_user is None or replied.from_user.id != bot.id:
        return False
    # In a forum, every message in a topic "replies" to the topic's creation message; if the bot
    # created the topic that is not a reply to the bot.
    return not (message.is_topic_message and replied.forum_topic_created is not None)


def message_to_inbound(update: Update, bot: BotIdentity) -> InboundMessage | None:
    """A new message addressed to the bot → InboundMessage; anything else → None."""
    message = update.message
    if message is None or message.chat.type == Chat.CHANNEL:
        return None  # edits, channel posts, inline queries, member updates …
    sender = message.from_user
    if sender is None or sender.is_bot or sender.id == bot.id:
        return None
    if message.text is None and message.caption is None:
        return None  # stickers, photos without caption, service messages (incl. chat migration)
    found = addressing(message, bot)
    if not found.addressed:
        return None
    chat = chat_ref(message)
    return InboundMessage(
        platform=PLATFORM,
        workspace=str(bot.id),
        channel=str(chat.chat_id),
        thread=chat.thread,
        sender=str(sender.id),
        sender_name=sender.full_name,
        text=found.text,
        message_id=str(message.message_id),
        event_id=str(update.update_id),
        is_direct=chat.is_private,
        reply_context=chat.context(reply_to=message.message_id),
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


def button_press(query: CallbackQuery) -> ButtonPress:
    """Parse a callback query. Unknown data gives token '' (the caller still answers it)."""
    token, index = "", -1
    parts = (query.data or "").split(":")
    if len(parts) == 3 and parts[0] == CALLBACK_PREFIX and parts[2].isdigit():
        token, index = parts[1], int(parts[2])
    message = query.message
    chat: ChatRef | None = None
    message_id: int | None = None
    if message is not None:
        message_id = message.message_id
        topic = message.message_thread_id if isinstance(message, Message) and message.is_topic_message else None
        chat = ChatRef(message.chat.id, message.chat.type, topic)
    return ButtonPress(
        query_id=query.id,
        token=token,
        index=index,
        chat=chat,
        message_id=message_id,
        sender_id=query.from_user.id,
        sender_name=query.from_user.full_name,
    )


def press_to_inbound(update: Update, press: ButtonPress, bot: BotIdentity, key: str, label: str) -> InboundMessage:
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
        event_id=str(update.update_id),
        is_direct=press.chat.is_private,
        choice=key,
        reply_context=press.chat.context(reply_to=press.message_id),
    )
