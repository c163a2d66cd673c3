"""Pure parsing: verified Feishu payloads (dicts) → InboundMessage, or a reason to skip.

No I/O here. The webhook route and the long connection decode and verify the
body, then call these functions with the bot's open_id.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from adapters.common.ingress import Skip
from adapters.common.payload import as_dict as _dict, as_str as _str
from core.messages import InboundMessage

PLATFORM = "feishu"
MESSAGE_EVENT = "im.message.receive_v1"
CARD_ACTION_EVENT = "card.action.trigger"
CHOICE_ACTION = "choose"  # marks our own clarification buttons in the card action value

_PLACEHOLDER = re.compile(r"@_user_\d+|@_all")
_SPACES = re.compile(r"[ \t\u00a0]{2,}")


# Not for the bot (own message, no mention, unsupported type…): the shared ingress path's Skip.
Skipped = Skip


def _post_text(content: dict[str, Any]) -> str:
    """Flatten a `post` (rich text) into Markdown-ish text, keeping @ placeholders for resolution."""
    if "content" not in content:  # some payloads wrap the post in a locale: {"zh_cn": {...}}
        content = next((v for v in content.values() if isinstance(v, dict) and "content" in v), {})
    lines: list[str] = []
    title = _str(content.get("title")).strip()
    if title:
        lines.append(title)
    for paragraph in content.get("content") or []:
        if not isinstance(paragraph, list):
            continue
        parts: list[str] = []
        for el in paragraph:
            el = _dict(el)
            tag = el.get("tag")
            if tag in ("text", "md"):
                parts.append(_str(el.get("text")))
            elif tag == "a":
                text, href = _str(el.get("text")), _str(el.get("href"))
                parts.append(f"[{text}]({href})" if href else text)
            elif tag == "at":
                uid = _str(el.get("user_id"))
                parts.append(uid if uid.startswith("@_") else "@" + _str(el.get("user_name")))
            elif tag == "code_block":
                lang = _str(el.get("language")).lower()
                parts.append(f"\n```{lang}\n{_str(el.get('text')).rstrip()}\n```\n")
            elif tag == "emotion":
                parts.append(f":{_str(el.get('emoji_type'))}:")
        lines.append("".join(parts))
    return "\n".join(lines)


def message_text(message_type: str, raw_content: str) -> str | None:
    """The text of a text or post message; None for other types or broken content."""
    try:
        content = json.loads(raw_content)
    except (TypeError, ValueError):
        return None
    if not isinstance(content, dict):
        return None
    if message_type == "text":
        return _str(content.get("text"))
    if message_type == "post":
        return _post_text(content)
    return None


def resolve_mentions(text: str, mentions: list[dict[str, Any]], bot_open_id: str) -> tuple[str, bool]:
    """Replace `@_user_N` placeholders: the bot's own mention is removed, others become `@Name`.

    Returns the text and whether the bot was mentioned. Unknown placeholders stay as they are.
    """
    by_key: dict[str, dict[str, Any]] = {}
    for m in mentions:
        m = _dict(m)
        if _str(m.get("key")):
            by_key[m["key"]] = m
    mentioned = False

    def repl(match: re.Match[str]) -> str:
        nonlocal mentioned
        key = match.group(0)
        if key == "@_all":
            return "@all"
        m = by_key.get(key)
        if m is None:
            return key
        if bot_open_id and _str(_dict(m.get("id")).get("open_id")) == bot_open_id:
            mentioned = True
            return ""
        return "@" + (_str(m.get("name")) or "user")

    # a regex pass, so "@_user_1" never eats the prefix of "@_user_10"
    out = _PLACEHOLDER.sub(repl, text)
    out = "\n".join(_SPACES.sub(" ", line).strip() for line in out.split("\n")).strip()
    return out, mentioned


def parse_message_event(payload: dict[str, Any], bot_open_id: str) -> InboundMessage | Skipped:
    """An `im.message.receive_v1` (schema 2.0) payload → InboundMessage.

    Groups: only messages that mention the bot's open_id. The bot's own (and other apps')
    messages are skipped. The conversation key is the thread root (root_id, else the message).
    """
    header = _dict(payload.get("header"))
    if header.get("event_type") != MESSAGE_EVENT:
        return Skipped("not a message event")
    event = _dict(payload.get("event"))
    sender = _dict(event.get("sender"))
    message = _dict(event.get("message"))
    sender_open_id = _str(_dict(sender.get("sender_id")).get("open_id"))
    if sender.get("sender_type") not in (None, "user") or (bot_open_id and sender_open_id == bot_open_id):
        return Skipped("sent by an app")
    message_id = _str(message.get("message_id"))
    chat_id = _str(message.get("chat_id"))
    event_id = _str(header.get("event_id"))
    if not message_id or not chat_id or not event_id:
        return Skipped("missing ids")
    raw = message_text(_str(message.get("message_type")), _str(message.get("content")))
    if raw is None:
        return Skipped("unsupported message type")
    mentions = message.get("mentions") if isinstance(message.get("mentions"), list) else []
    text, mentioned = resolve_mentions(raw, mentions, bot_open_id)
    is_direct = message.get("chat_type") == "p2p"
    if not is_direct and not mentioned:
        return Skipped("group message without a mention of the bot")
    thread_id = _str(message.get("thread_id"))
    return InboundMessage(
        platform=PLATFORM,
        workspace=_str(header.get("tenant_key")) or _str(sender.get("tenant_key")),
        channel=chat_id,
        thread=_str(message.get("root_id")) or message_id,
        sender=sender_open_id,
        text=text,
        message_id=message_id,
        event_id=event_id,
        is_direct=is_direct,
        # the sender's own tenant (`event.sender.tenant_key`, lark-oapi EventSender), not the header's
        # tenant_key (the tenant the event was delivered to): in an external group they differ
        sender_org=_str(sender.get("tenant_key")),
        reply_context={"reply_to": message_id, "in_thread": bool(thread_id)},
    )


def choice_value(key: str, label: str, message: InboundMessage, language: str = "en") -> dict[str, Any]:
    """The `value` of a clarification button: everything needed to resume in the same conversation.

    Feishu hands the value back verbatim inside a signed callback, so it can be trusted as ours.
    """
    return {
        "aic": CHOICE_ACTION,
        "key": key,
        "label": label,
        "thread": message.thread,
        "chat": message.channel,
        "reply_to": _str(message.reply_context.get("reply_to")) or message.message_id,
        "in_thread": bool(message.reply_context.get("in_thread")),
        "direct": message.is_direct,
        "lang": language,  # for the toast, which is answered before any language detection
    }


@dataclass(frozen=True)
class CardChoice:
    message: InboundMessage
    card_message_id: str  # the clarification card that was clicked (one pick per card)
    language: str = "en"


def parse_card_action(payload: dict[str, Any]) -> CardChoice | Skipped:
    """A `card.action.trigger` (schema 2.0) payload from one of our clarification buttons."""
    header = _dict(payload.get("header"))
    if header.get("event_type") != CARD_ACTION_EVENT:
        return Skipped("not a card action")
    event = _dict(payload.get("event"))
    value = _dict(_dict(event.get("action")).get("value"))
    if value.get("aic") != CHOICE_ACTION or not _str(value.get("key")) or not _str(value.get("thread")):
        return Skipped("not a clarification button")
    context = _dict(event.get("context"))
    chat_id = _str(context.get("open_chat_id")) or _str(value.get("chat"))
    event_id = _str(header.get("event_id"))
    card_message_id = _str(context.get("open_message_id"))
    if not chat_id or not event_id:
        return Skipped("missing ids")
    operator = _dict(event.get("operator"))
    reply_to = _str(value.get("reply_to")) or card_message_id
    msg = InboundMessage(
        platform=PLATFORM,
        workspace=_str(header.get("tenant_key")) or _str(operator.get("tenant_key")),
        channel=chat_id,
        thread=value["thread"],
        sender=_str(operator.get("open_id")),
        text=_str(value.get("label")) or value["key"],
        message_id=reply_to,
        event_id=event_id,
        is_direct=bool(value.get("direct")),
        choice=value["key"],
        sender_org=_str(operator.get("tenant_key")),  # the clicker's tenant (`event.operator.tenant_key`)
        reply_context={"reply_to": reply_to, "in_thread": bool(value.get("in_thread"))},
    )
    return CardChoice(msg, card_message_id, "zh" if value.get("lang") == "zh" else "en")
