"""Telegram's primitives for the shared delivery engine (adapters/common/delivery.py).

While the core works: a typing action kept alive (it fades after 5 s); in a private chat the
progress line or the streamed draft shows as a message draft (sendMessageDraft, refreshed
before its 30 s expiry, gone once the answer is sent); in a group one placeholder message is
edited in place under a per-group budget shared in Redis (Telegram allows about 20 messages a
minute per group, across all our processes). The engine throttles, splits the reply under
4,096 UTF-16 units of visible text, edits the placeholder into the first part, puts the
clarification keyboard on the last part and records what arrived, so a re-run continues.
"""
from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from redis.asyncio import Redis
from telegram import InlineKeyboardMarkup
from telegram.ext import ExtBot

from adapters.base import Capabilities
from adapters.common.delivery import Delivery, EngineResponder
from adapters.common.escalate import escalate_button
from adapters.common.primitives import PushPlatform
from adapters.common.pacing import Pacer
from adapters.common.records import DeliveryRecords
from adapters.telegram.buttons import ButtonStore
from adapters.telegram.client import TelegramSender, Undeliverable
from adapters.telegram.inbound import PLATFORM, ChatRef
from adapters.telegram.render import escape, progress_html, render_blocks, reply_markdown
from adapters.telegram.split import split_html, tg_len
from core.keys import Keys
from core.messages import InboundMessage, Option, Progress, Reply, ReplyKind

log = logging.getLogger(__name__)

TYPING_EVERY = 4.0  # the typing status lasts 5 s
DRAFT_REFRESH = 20.0  # a draft is a 30 s preview
PRIVATE_INTERVAL = 1.0
GROUP_INTERVAL = 3.0
GROUP_EDITS_PER_MINUTE = 15  # of Telegram's ~20/min per group, leaving room for the answers themselves
PUMP_GRACE = 10.0  # how long finish() waits for a placeholder being posted


def draft_id_for(job_id: str) -> int:
    """A stable, non-zero draft id per job, so a re-run animates the same draft."""
    return int(hashlib.sha256(job_id.encode()).hexdigest()[:8], 16) | 1


@dataclass(frozen=True)
class TelegramHandles:
    """What every job's delivery borrows from the adapter: the bot (initialized on first use), Redis
    and its keys (records, pacing, group budgets) and the store behind the clarification buttons."""

    bot: Callable[[], Awaitable[ExtBot[Any]]]
    redis: Redis
    keys: Keys
    buttons: ButtonStore


@dataclass(frozen=True)
class TelegramPayload:
    html: str
    markup: InlineKeyboardMarkup | None = None


def _first_html(markdown: str) -> str:
    chunks = split_html(render_blocks(markdown))
    return chunks[0] if chunks else escape("…")


class TelegramPlatform(PushPlatform):
    name = PLATFORM

    def __init__(
        self, capabilities: Capabilities, *, handles: TelegramHandles, message: InboundMessage, job_id: str
    ) -> None:
        self._chat = ChatRef.from_context(message.reply_context)
        interval = PRIVATE_INTERVAL if self._chat.is_private else GROUP_INTERVAL
        super().__init__(replace(capabilities, min_edit_interval=interval))
        self.keepalive_every = TYPING_EVERY  # read per job, so tests can shorten them
        self.refresh_every = DRAFT_REFRESH if self._chat.is_private else 0.0
        self._bot = handles.bot
        self._redis = handles.redis
        self._keys = handles.keys
        self._buttons = handles.buttons
        self._draft_id = draft_id_for(job_id)
        # In groups the answer quotes the question, so it is clear whom it answers; a DM needs no quote.
        self._reply_to: int | None = None if self._chat.is_private else message.reply_context.get("reply_to")
        self._sender: TelegramSender | None = None
        self._pacer = Pacer(handles.redis, handles.keys, PLATFORM)

    async def sender(self) -> TelegramSender:
        if self._sender is None:
            sender = TelegramSender(
                await self._bot(), self._redis, self._keys, self._chat.chat_id, self._chat.topic_id, pacer=self._pacer
            )
            await sender.follow_migration()
            self._sender = sender
        return self._sender

    # --- rendering ------------------------------------------------------------------------------
    def document(self, reply: Reply) -> str:
        return reply_markdown(reply)

    def cost(self, text: str) -> int:
        # Markdown source is never shorter than the text Telegram shows for it (syntax and tags vanish)
        return tg_len(text)

    def render(self, chunk: str, reply: Reply, index: int, count: int) -> list[TelegramPayload]:
        html = split_html(render_blocks(chunk)) or [escape("…")]  # the engine's cut already fits; a safety net
        return [TelegramPayload(h) for h in html]

    async def buttons(self, reply: Reply) -> InlineKeyboardMarkup | None:
        escalate = escalate_button(reply)
        if escalate is not None:  # a press comes back as the choice "escalate", like an option's
            action = (Option(escalate.key, escalate.label, ""),)
            return await self._buttons.keyboard((await self.sender()).chat_id, action, reply.language, numbered=False)
        if reply.kind != ReplyKind.CLARIFY or not reply.options:
            return None
        return await self._buttons.keyboard((await self.sender()).chat_id, reply.options, reply.language)

    def attach(self, payload: TelegramPayload, buttons: InlineKeyboardMarkup) -> TelegramPayload:
        return replace(payload, markup=buttons)

    def status_view(self, update: Progress) -> str:
        return progress_html(update.text)

    def status_payload(self, view: str) -> TelegramPayload:
        return TelegramPayload(view)

    def draft_payload(self, markdown: str) -> TelegramPayload:
        return TelegramPayload(_first_html(markdown))

    # --- effects --------------------------------------------------------------------------------
    async def keepalive(self) -> None:
        await (await self.sender()).typing()

    async def may_show_progress(self) -> bool:
        if self._chat.is_private:
            return True
        return await self._group_budget((await self.sender()).chat_id)

    async def _group_budget(self, chat_id: int) -> bool:
        """A fixed one-minute window per group, shared by every job and process."""
        window = int(time.time() // 60)
        key = self._keys.adapter_state(PLATFORM, f"edits:{chat_id}:{window}")
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, 120)
            used, _ = await pipe.execute()
        return int(used) <= GROUP_EDITS_PER_MINUTE

    async def show_status(self, view: str) -> bool:
        if not self._chat.is_private:
            return False
        await (await self.sender()).draft(self._draft_id, view)
        return True

    async def show_draft(self, markdown: str) -> bool:
        if not self._chat.is_private:
            return False  # groups have no drafts: the engine edits the placeholder
        await (await self.sender()).draft(self._draft_id, _first_html(markdown))
        return True

    async def post(self, payload: TelegramPayload, *, index: int, first: bool) -> tuple[str, ...]:
        sender = await self.sender()
        posted = await sender.send(payload.html, reply_to=self._reply_to if first else None, markup=payload.markup)
        return tuple(str(m.message_id) for m in posted)

    async def edit(self, message_id: str, payload: TelegramPayload) -> bool:
        return await (await self.sender()).edit(int(message_id), payload.html, markup=payload.markup)

    async def discard(self, message_id: str) -> None:
        sender = await self.sender()
        await sender.bot.delete_message(sender.chat_id, int(message_id))

    def unreachable(self, exc: BaseException) -> bool:
        return isinstance(exc, Undeliverable)

    async def delivered(self, message_ids: tuple[str, ...]) -> dict[str, Any]:
        return {"chat_id": (await self.sender()).chat_id}


class TelegramResponder(EngineResponder):
    """The adapter's responder: Telegram's primitives driven by the shared engine."""

    def __init__(
        self,
        *,
        handles: TelegramHandles,
        message: InboundMessage,
        job_id: str,
        record_ttl: int,
        deadline: float,
        capabilities: Capabilities | None = None,
    ) -> None:
        from adapters.telegram.adapter import CAPABILITIES  # noqa: PLC0415 - the adapter imports this module

        platform = TelegramPlatform(capabilities or CAPABILITIES, handles=handles, message=message, job_id=job_id)
        records = DeliveryRecords(handles.redis, handles.keys, PLATFORM, record_ttl)
        super().__init__(Delivery(platform, records, job_id, keepalive_for=deadline, placeholder_grace=PUMP_GRACE))
