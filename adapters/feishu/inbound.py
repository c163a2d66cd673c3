"""The one ingress path for verified Feishu payloads, shared by webhooks and the long connection.

Parses, then hands the result to the shared ingress path (adapters/common/ingress.py), which
logs what is skipped and enqueues the rest. Deduplication is by event_id and message_id
together: Feishu can re-push the same message under a new event id, and retries for about 7
hours. A clarification card accepts one pick (dedupe on the card's message id). Redis errors propagate: the webhook turns
them into 503 and the long connection into a failed ack, so Feishu retries.
"""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Awaitable, Callable

from adapters.common.ingress import Candidate, IngressPath
from adapters.feishu.dedupe import FeishuDedupeIds
from adapters.feishu.parse import (
    CARD_ACTION_EVENT,
    MESSAGE_EVENT,
    PLATFORM,
    CardChoice,
    Skipped,
    parse_card_action,
    parse_message_event,
)
from adapters.feishu.render import labels
from core.ingress import Ingress, SubmitOutcome

log = logging.getLogger(__name__)

LOOKUP_RETRY_SECONDS = 60.0


class BotIdentity:
    """The bot's open_id: configured, or looked up once through `GET /open-apis/bot/v3/info`."""

    def __init__(self, configured: str, lookup: Callable[[], Awaitable[str]] | None, timeout: float = 2.0) -> None:
        self._open_id = configured
        self._lookup = lookup
        self._timeout = timeout
        self._next_try = 0.0
        self._lock = asyncio.Lock()

    async def open_id(self) -> str:
        if self._open_id or self._lookup is None or time.monotonic() < self._next_try:
            return self._open_id
        async with self._lock:
            if not self._open_id and time.monotonic() >= self._next_try:
                try:
                    self._open_id = await asyncio.wait_for(self._lookup(), self._timeout)
                except Exception as exc:  # groups stay unanswered until it works; p2p still does
                    log.warning("feishu: bot open_id lookup failed (%s); set FEISHU_BOT_OPEN_ID", type(exc).__name__)
                if not self._open_id:
                    self._next_try = time.monotonic() + LOOKUP_RETRY_SECONDS
        return self._open_id


class FeishuInbound:
    def __init__(self, ingress: Ingress, bot: BotIdentity) -> None:
        self._path = IngressPath(ingress, PLATFORM)
        self._bot = bot

    async def on_event(self, payload: dict[str, Any]) -> str:
        """Handle one verified event; returns what happened (for logs and tests)."""
        header = payload.get("header") if isinstance(payload.get("header"), dict) else {}
        if header.get("event_type") != MESSAGE_EVENT:
            return "ignored: event type"
        parsed = parse_message_event(payload, await self._bot.open_id())
        if isinstance(parsed, Skipped):
            await self._path.take(parsed)
            return "ignored: " + parsed.reason
        result = await self._path.take(Candidate(parsed, (FeishuDedupeIds.message(parsed.message_id),)))
        assert result is not None
        return result.outcome.value

    async def on_card_action(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Handle a verified card callback; returns the synchronous callback response (a toast)."""
        header = payload.get("header") if isinstance(payload.get("header"), dict) else {}
        if header.get("event_type") != CARD_ACTION_EVENT:
            return {}
        parsed = parse_card_action(payload)
        if isinstance(parsed, Skipped):
            await self._path.take(parsed)
            return {}
        return await self._submit_choice(parsed)

    async def _submit_choice(self, choice: CardChoice) -> dict[str, Any]:
        result = await self._path.take(Candidate(choice.message, (FeishuDedupeIds.card(choice.card_message_id),)))
        lang = choice.language
        if result is None or result.outcome is SubmitOutcome.NOT_ALLOWED:
            return {}
        if result.outcome is SubmitOutcome.DUPLICATE:
            return {"toast": {"type": "info", "content": labels(lang)["duplicate"]}}
        return {"toast": {"type": "success", "content": labels(lang)["chosen"].format(label=choice.message.text[:40])}}
