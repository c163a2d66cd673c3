"""Answers one job in one Feishu conversation: a working card, live progress, the answer.

1. The first progress update replies to the user's message with a "working" card:
   a CardKit entity in streaming mode where the app may use CardKit, otherwise an
   interactive card with `update_multi`.
2. Later updates stream the status text into the card (CardKit, strictly
   increasing `sequence`) or patch the card, at most once per `min_interval`.
3. `finish` turns the working card into the first part of the answer; further
   parts (answers over the 30 KB card limit) follow as reply cards. Any card that
   Feishu refuses is sent as a plain text reply instead.

The card ids live in Redis under the job id, and every reply carries a uuid
derived from the job id, so a job that a new worker picks up again edits the
same card instead of posting a second one.
"""
from __future__ import annotations

import asyncio
import logging
import time
import uuid as uuidlib
from typing import Any, Callable

from redis.asyncio import Redis

from adapters.base import Delivered
from adapters.feishu import render
from adapters.feishu.client import FeishuApi, FeishuApiError
from adapters.feishu.token import FeishuAuthError
from core.keys import Keys
from core.language import detect_language
from core.messages import InboundMessage, Progress, Reply

log = logging.getLogger(__name__)

_UUID_NS = uuidlib.UUID("6f7c2a4e-2a7d-4c53-9d0b-5e0f3f1a9c11")
MAX_PROGRESS_LINES = 6
STATE_TTL_SECONDS = 24 * 3600


class CardKitSwitch:
    """Process-wide: once Feishu refuses CardKit (scope missing, Lark tenant without it), stop trying."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def refused(self, exc: Exception) -> None:
        if isinstance(exc, FeishuApiError) and 0 < exc.status < 500 and exc.status != 429:
            log.warning("feishu: CardKit unavailable (code=%s); using patched interactive cards", exc.code)
            self.enabled = False


def request_uuid(job_id: str, part: str) -> str:
    return str(uuidlib.uuid5(_UUID_NS, f"{job_id}:{part}"))


def card_markdown(card: dict[str, Any]) -> str:
    return str(card["body"]["elements"][0]["content"])


class FeishuResponder:
    def __init__(
        self,
        api: FeishuApi,
        redis: Redis,
        keys: Keys,
        message: InboundMessage,
        job_id: str,
        *,
        cardkit: CardKitSwitch,
        min_interval: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._api = api
        self._redis = redis
        self._state_key = keys.adapter_state("feishu", f"job:{job_id}")
        self._message = message
        self._job_id = job_id
        self._cardkit = cardkit
        self._min_interval = min_interval
        self._clock = clock
        self._lock = asyncio.Lock()
        self._lines: list[str] = []
        self._language = detect_language(message.text)
        self._started = False
        self._message_id = ""  # the working card message
        self._card_id = ""  # its CardKit entity, when streaming
        self._last_edit = float("-inf")

    @property
    def _reply_to(self) -> str:
        return str(self._message.reply_context.get("reply_to") or self._message.message_id)

    @property
    def _in_thread(self) -> bool:
        return bool(self._message.reply_context.get("in_thread"))

    async def progress(self, update: Progress) -> None:
        try:
            async with self._lock:
                text = update.text.strip()
                if text and (not self._lines or self._lines[-1] != text):
                    self._lines = [*self._lines, text][-MAX_PROGRESS_LINES:]
                if not self._started:
                    await self._start()
                    return
                if not self._message_id or self._clock() - self._last_edit < self._min_interval:
                    return  # throttled: the next update or the answer shows the latest state
                await self._push_status()
        except Exception as exc:  # progress is cosmetic: never fail the job over it
            log.warning("feishu: progress update failed: %s", type(exc).__name__)

    async def _start(self) -> None:
        self._started = True
        state = await self._redis.hgetall(self._state_key)
        if state:  # a redelivered job: keep editing the card the first attempt posted
            self._message_id = _field(state, "message_id")
            self._card_id = _field(state, "card_id")
            await self._push_status()
            return
        if self._cardkit.enabled:
            try:
                card_id = await self._api.create_card(render.working_card(self._lines, self._language, streaming=True))
                self._message_id = await self._api.reply(
                    self._reply_to, "interactive", {"type": "card", "data": {"card_id": card_id}},
                    uuid=request_uuid(self._job_id, "working"), in_thread=self._in_thread,
                )
                self._card_id = card_id
            except (FeishuApiError, FeishuAuthError) as exc:
                self._cardkit.refused(exc)
        if not self._message_id:
            try:
                self._message_id = await self._api.reply(
                    self._reply_to, "interactive", render.working_card(self._lines, self._language, streaming=False),
                    uuid=request_uuid(self._job_id, "working-card"), in_thread=self._in_thread,
                )
            except (FeishuApiError, FeishuAuthError):
                return  # no working card; the answer still goes out in finish()
        self._last_edit = self._clock()
        mapping = {"message_id": self._message_id, "card_id": self._card_id}
        await self._redis.hset(self._state_key, mapping=mapping)
        await self._redis.expire(self._state_key, STATE_TTL_SECONDS)

    async def _sequence(self) -> int:
        # strictly increasing per card entity, across workers and redeliveries
        seq = int(await self._redis.hincrby(self._state_key, "seq", 1))
        await self._redis.expire(self._state_key, STATE_TTL_SECONDS)
        return seq

    async def _push_status(self) -> None:
        self._last_edit = self._clock()
        if self._card_id:
            text = render.working_markdown(self._lines, self._language)
            await self._api.stream_text(self._card_id, render.STATUS_ELEMENT, text, await self._sequence())
        elif self._message_id:
            await self._api.patch_card(self._message_id, render.working_card(self._lines, self._language, streaming=False))

    async def finish(self, reply: Reply) -> Delivered:
        async with self._lock:
            if not self._started:
                # the worker may call finish without progress; a redelivered job may still have a card
                state = await self._redis.hgetall(self._state_key)
                self._message_id = _field(state, "message_id")
                self._card_id = _field(state, "card_id")
                self._started = True
            cards = render.reply_cards(reply, self._message)
            sent: list[str] = []
            pending = cards
            if self._message_id:
                if await self._replace_working_card(cards[0]):
                    sent.append(self._message_id)
                    pending = cards[1:]
            for i, card in enumerate(pending, start=len(cards) - len(pending)):
                sent.append(await self._reply_card_or_text(card, i))
            return Delivered(message_ids=tuple(sent), extra={"card_id": self._card_id} if self._card_id else {})

    async def _replace_working_card(self, card: dict[str, Any]) -> bool:
        try:
            if self._card_id:
                await self._api.card_settings(self._card_id, {"config": {"streaming_mode": False}}, await self._sequence())
                await self._api.update_card(self._card_id, card, await self._sequence())
            else:
                await self._api.patch_card(self._message_id, card)
            return True
        except (FeishuApiError, FeishuAuthError) as exc:
            log.warning("feishu: could not turn the working card into the answer: %s", exc)
            return False

    async def _reply_card_or_text(self, card: dict[str, Any], index: int) -> str:
        try:
            return await self._api.reply(
                self._reply_to, "interactive", card, uuid=request_uuid(self._job_id, f"card-{index}"), in_thread=self._in_thread
            )
        except FeishuApiError as exc:
            log.warning("feishu: card reply refused (code=%s); sending text", exc.code)
        # text fallback: the same Markdown (options included as a numbered list) as a plain message
        return await self._api.reply(
            self._reply_to, "text", {"text": card_markdown(card)}, uuid=request_uuid(self._job_id, f"text-{index}"), in_thread=self._in_thread
        )


def _field(state: dict[Any, Any], name: str) -> str:
    """A hash field, whether the Redis client decodes responses or not."""
    value = state.get(name, state.get(name.encode()))
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)
