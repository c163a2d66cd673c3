"""One store for clarification choices, for every platform whose buttons carry only a short token.

A clarification offers a handful of options. Telegram's callback data is limited to 64 bytes and
WeCom's card buttons carry a short key, and both come back from the client untrusted; so the
options (keys, labels), the language, where the buttons were sent (`scope`: a click from anywhere
else is refused) and what the answer needs later (`extra`: the question, a response_url) stay in
Redis under a token, expiring with the clarification itself (CLARIFICATION_TTL_SECONDS).
"""
from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from core.keys import Keys


@dataclass(frozen=True)
class Choice:
    key: str
    label: str


@dataclass(frozen=True)
class ChoiceSet:
    """The options behind one token."""

    options: tuple[Choice, ...]
    language: str
    scope: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def label_of(self, key: str) -> str | None:
        return next((c.label for c in self.options if c.key == key), None)


@dataclass(frozen=True)
class Picked:
    """A click resolved: the option, and the set it came from."""

    choice: Choice
    language: str
    extra: dict[str, Any]


def new_token() -> str:
    return secrets.token_urlsafe(9)  # 12 characters, unguessable, fits any platform's button data


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class ChoiceStore:
    def __init__(self, redis: Redis, keys: Keys, platform: str, ttl_seconds: int) -> None:
        self._redis = redis
        self._keys = keys
        self._platform = platform
        self._ttl = ttl_seconds

    def _key(self, token: str) -> str:
        # the token comes back from the client: digested, so it cannot shape the key
        return self._keys.adapter_state(self._platform, f"choices:{_digest(token)}")

    async def save(
        self,
        options: Iterable[tuple[str, str]],
        language: str,
        *,
        token: str = "",
        scope: Mapping[str, str | int] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> str:
        """Store (key, label) options under `token` (a new one when empty); returns the token."""
        token = token or new_token()
        state = {
            "options": [{"key": k, "label": l} for k, l in options],
            "language": language,
            "scope": {k: str(v) for k, v in (scope or {}).items()},
            "extra": dict(extra or {}),
        }
        await self._redis.set(self._key(token), json.dumps(state, ensure_ascii=False), ex=self._ttl)
        return token

    async def load(self, token: str) -> ChoiceSet | None:
        """The set behind `token`; None when unknown, expired or unreadable."""
        if not token:
            return None
        raw = await self._redis.get(self._key(token))
        if raw is None:
            return None
        try:
            state = json.loads(raw)
            options = tuple(Choice(str(o["key"]), str(o["label"])) for o in state["options"])
            scope = {str(k): str(v) for k, v in dict(state.get("scope") or {}).items()}
            return ChoiceSet(options, str(state.get("language") or "en"), scope, dict(state.get("extra") or {}))
        except (ValueError, KeyError, TypeError):
            return None

    async def pick(
        self, token: str, *, index: int | None = None, key: str | None = None, scope: Mapping[str, str | int] | None = None,
    ) -> Picked | None:
        """The option a click names (by position or by key), or None when the token is unknown or
        expired, the option is not one of the set, or the click comes from outside its scope."""
        found = await self.load(token)
        if found is None:
            return None
        for name, value in (scope or {}).items():
            if found.scope.get(name) != str(value):
                return None
        choice: Choice | None = None
        if index is not None:
            choice = found.options[index] if 0 <= index < len(found.options) else None
        elif key is not None:
            choice = next((c for c in found.options if c.key == key), None)
        if choice is None:
            return None
        return Picked(choice, found.language, found.extra)
