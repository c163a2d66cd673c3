"""Clarification keyboards: options live in Redis, the button carries only a short token.

Telegram limits callback_data to 64 bytes and it comes back from the client untrusted, so a button
says `c:<token>:<index>` and the labels, keys and the chat the keyboard belongs to stay
server-side, expiring with the clarification itself.
"""
from __future__ import annotations

import json
import secrets
from dataclasses import dataclass

from redis.asyncio import Redis
from telegram import InlineKeyboardButton, InlineKeyboardMarkup

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
    def __init__(self, redis: Redis, keys: Keys, ttl_seconds: int) -> None:
        self._redis = redis
        self._keys = keys
        self._ttl = ttl_seconds

    def _key(self, token: str) -> str:
        return self._keys.adapter_state(PLATFORM, f"keyboard:{token}")

    async def keyboard(self, chat_id: int, options: tuple[Option, ...], language: str) -> InlineKeyboardMarkup:
        """Store the options and return a one-button-per-row keyboard pointing at them."""
        shown = options[:MAX_BUTTONS]
        token = secrets.token_urlsafe(9)  # 12 characters, unguessable
        state = {
            "chat_id": chat_id,
            "language": language,
            "options": [{"key": o.key, "label": o.label} for o in shown],
        }
        await self._redis.set(self._key(token), json.dumps(state, ensure_ascii=False), ex=self._ttl)
        rows = [
            [InlineKeyboardButton(_cut(f"{n}. {o.label}"), callback_data=encode_callback(token, n - 1))]
            for n, o in enumerate(shown, start=1)
        ]
        return InlineKeyboardMarkup(rows)

    async def resolve(self, token: str, index: int, chat_id: int | None) -> StoredChoice | None:
        """The option behind a press, or None when unknown, expired or pressed in another chat."""
        if not token or index < 0 or chat_id is None:
            return None
        raw = await self._redis.get(self._key(token))
        if raw is None:
            return None
        try:
            state = json.loads(raw)
            if int(state["chat_id"]) != chat_id:
                return None
            option = state["options"][index]
            return StoredChoice(str(option["key"]), str(option["label"]), str(state.get("language", "en")))
        except (ValueError, KeyError, IndexError, TypeError):
            return None


def _cut(label: str) -> str:
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"
