"""Clarification keyboards: options live in the shared choices store, the button carries a token.

Telegram limits callback_data to 64 bytes and it comes back from the client untrusted, so a button
says `c:<token>:<index>` and the labels, keys and the chat the keyboard belongs to stay
server-side (adapters/common/choices.py), expiring with the clarification itself.
"""
from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis
from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from adapters.common.choices import ChoiceStore
from adapters.telegram.inbound import PLATFORM, encode_callback
from core.keys import Keys
from core.messages import Option

# Telegram renders at most ~100 buttons; the core offers a handful. Labels are cut to stay readable.
MAX_BUTTONS = 10
MAX_LABEL = 60


@dataclass(frozen=True)
class StoredChoice:
    key: str
    label: str
    language: str


class ButtonStore:
    """Telegram's face of the shared choices store: a keyboard out, a press resolved back."""

    def __init__(self, redis: Redis, keys: Keys, ttl_seconds: int) -> None:
        self._choices = ChoiceStore(redis, keys, PLATFORM, ttl_seconds)

    async def keyboard(self, chat_id: int, options: tuple[Option, ...], language: str, *, numbered: bool = True) -> InlineKeyboardMarkup:
        """Store the options and return a one-button-per-row keyboard pointing at them (numbered like the
        clarification's text; a lone action button such as Escalate is not)."""
        shown = options[:MAX_BUTTONS]
        token = await self._choices.save([(o.key, o.label) for o in shown], language, scope={"chat_id": chat_id})
        rows = [
            [InlineKeyboardButton(_cut(f"{n}. {o.label}" if numbered else o.label), callback_data=encode_callback(token, n - 1))]
            for n, o in enumerate(shown, start=1)
        ]
        return InlineKeyboardMarkup(rows)

    async def resolve(self, token: str, index: int, chat_id: int | None) -> StoredChoice | None:
        """The option behind a press, or None when unknown, expired or pressed in another chat."""
        if not token or index < 0 or chat_id is None:
            return None
        picked = await self._choices.pick(token, index=index, scope={"chat_id": chat_id})
        if picked is None:
            return None
        return StoredChoice(picked.choice.key, picked.choice.label, picked.language)


def _cut(label: str) -> str:
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"
