"""Answers one job in one Telegram chat: progress while the core works, then the final reply.

While working, a background pump keeps the typing action alive (it fades after 5 s) and shows
the latest progress line: in a private chat as a streamed draft (sendMessageDraft, refreshed
before its 30 s expiry), in a group as one placeholder message edited in place, no more than
one edit per 3 s per message and a shared per-group budget in Redis (Telegram allows about 20
edits a minute per group, across all our processes). Progress never blocks the core: `progress()`
only records the latest line and wakes the pump.

`finish()` renders the reply, turns the placeholder into the first chunk (or posts it), sends the
rest, attaches the clarification keyboard to the last chunk, and records each delivered chunk
in Redis so a job re-run after a crash continues instead of posting twice.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis
from telegram import InlineKeyboardMarkup
from telegram.error import TelegramError
from telegram.ext import ExtBot

from adapters.base import Delivered
from adapters.telegram.buttons import ButtonStore
from adapters.telegram.client import TelegramSender, Undeliverable, redact
from adapters.telegram.inbound import PLATFORM, ChatRef
from adapters.telegram.render import escape, progress_html, render_blocks, reply_markdown
from adapters.telegram.split import split_html
from core.keys import Keys
from core.messages import InboundMessage, Progress, Reply, ReplyKind

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


class TelegramResponder:
    def __init__(
        self,
        *,
        bot: Callable[[], Awaitable[ExtBot[Any]]],
        redis: Redis,
        keys: Keys,
        buttons: ButtonStore,
        message: InboundMessage,
        job_id: str,
        record_ttl: int,
        deadline: float,
    ) -> None:
        self._bot = bot
        self._redis = redis
        self._keys = keys
        self._buttons = buttons
        self._message = message
        self._job_id = job_id
        self._record_ttl = record_ttl
        self._deadline = deadline
        self._chat = ChatRef.from_context(message.reply_context)
        # In groups the answer quotes the question, so it is clear whom it answers; a DM needs no quote.
        self._reply_to: int | None = None if self._chat.is_private else message.reply_context.get("reply_to")
        self._sender: TelegramSender | None = None
        self._status = ""
        self._shown = ""
        self._placeholder: int | None = None
        self._wake = asyncio.Event()
        self._closed = False
        self._undeliverable = False
        self._pump: asyncio.Task[None] | None = None
        self._posting_placeholder = False

    # --- state in Redis --------------------------------------------------------------------

    def _state_key(self, name: str) -> str:
        return self._keys.adapter_state(PLATFORM, f"{name}:{self._job_id}")

    async def _sender_ready(self) -> TelegramSender:
        if self._sender is None:
            sender = TelegramSender(await self._bot(), self._redis, self._keys, self._chat.chat_id, self._chat.topic_id)
            await sender.follow_migration()
            self._sender = sender
        return self._sender

    # --- progress ----------------------------------------------------------------------------

    async def progress(self, update: Progress) -> None:
        if self._closed or self._undeliverable:
            return
        self._status = progress_html(update.text)
        self._wake.set()
        if self._pump is None:
            self._pump = asyncio.create_task(self._run_pump())

    async def _run_pump(self) -> None:
        loop = asyncio.get_running_loop()
        interval = PRIVATE_INTERVAL if self._chat.is_private else GROUP_INTERVAL
        stop_at = loop.time() + self._deadline
        next_typing = next_show = 0.0
        last_draft = float("-inf")
        try:
            sender = await self._sender_ready()
            while not self._closed and loop.time() < stop_at:
                self._wake.clear()
                now = loop.time()
                if now >= next_typing:
                    await self._best_effort(sender.typing())
                    next_typing = now + TYPING_EVERY
                if self._status != self._shown and now >= next_show:
                    status = self._status
                    if await self._best_effort(self._show(sender, status)):
                        self._shown = status
                        last_draft = now
                    next_show = now + interval
                elif self._chat.is_private and self._shown and now - last_draft >= DRAFT_REFRESH:
                    await self._best_effort(self._show(sender, self._shown))
                    last_draft = now
                wake_at = [next_typing]
                if self._status != self._shown:
                    wake_at.append(next_show)
                if self._chat.is_private and self._shown:
                    wake_at.append(last_draft + DRAFT_REFRESH)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=max(0.0, min(wake_at) - loop.time()))
        except Undeliverable as exc:
            self._undeliverable = True
            log.info("telegram chat %s is not reachable (%s); progress stopped", self._chat.chat_id, exc)
        except Exception:  # noqa: BLE001 - progress is best effort and must never take the job down
            log.warning("telegram progress pump failed for job %s", self._job_id, exc_info=True)

    async def _best_effort(self, call: Awaitable[bool | None]) -> bool:
        try:
            return (await call) is not False
        except Undeliverable:
            raise
        except TelegramError as exc:
            log.info("telegram progress request failed: %s", redact(str(exc)))
            return False

    async def _show(self, sender: TelegramSender, html: str) -> bool:
        if self._chat.is_private:
            await sender.draft(draft_id_for(self._job_id), html)
            return True
        if not await self._group_budget(sender.chat_id):
            return False
        if self._placeholder is None:
            self._placeholder = await self._stored_placeholder()
        if self._placeholder is not None and await sender.edit(self._placeholder, html):
            return True
        self._posting_placeholder = True
        try:
            posted = await sender.send(html, reply_to=self._reply_to)
            self._placeholder = posted[0].message_id
            await self._redis.set(self._state_key("placeholder"), str(self._placeholder), ex=self._record_ttl)
        finally:
            self._posting_placeholder = False
        return True

    async def _stored_placeholder(self) -> int | None:
        raw = await self._redis.get(self._state_key("placeholder"))
        return int(raw) if raw is not None else None

    async def _group_budget(self, chat_id: int) -> bool:
        """A fixed one-minute window per group, shared by every job and process."""
        window = int(time.time() // 60)
        key = self._keys.adapter_state(PLATFORM, f"edits:{chat_id}:{window}")
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, 120)
            used, _ = await pipe.execute()
        return int(used) <= GROUP_EDITS_PER_MINUTE

    async def _stop_pump(self) -> None:
        self._closed = True
        self._wake.set()
        if self._pump is None:
            return
        if not self._posting_placeholder:
            # Typing, drafts and edits are superseded by the answer; only a placeholder being
            # posted is worth waiting for (cancelled, it could be left behind as a stray message).
            self._pump.cancel()
        done, _ = await asyncio.wait({self._pump}, timeout=PUMP_GRACE)
        if not done:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._pump

    # --- final reply -------------------------------------------------------------------------

    async def finish(self, reply: Reply) -> Delivered:
        await self._stop_pump()
        if self._undeliverable:
            return Delivered(extra={"undeliverable": True})
        sender = await self._sender_ready()
        chunks = split_html(render_blocks(reply_markdown(reply))) or [escape("…")]
        markup: InlineKeyboardMarkup | None = None
        if reply.kind == ReplyKind.CLARIFY and reply.options:
            markup = await self._buttons.keyboard(sender.chat_id, reply.options, reply.language)
        record = await self._load_record()
        placeholder = self._placeholder if self._placeholder is not None else await self._stored_placeholder()
        try:
            for n, chunk in enumerate(chunks):
                if n < record["chunks"]:
                    continue  # delivered before a crash
                chunk_markup = markup if n == len(chunks) - 1 else None
                ids: list[int] = []
                if n == 0 and placeholder is not None and await sender.edit(placeholder, chunk, markup=chunk_markup):
                    ids = [placeholder]
                if not ids:
                    posted = await sender.send(chunk, reply_to=self._reply_to if n == 0 else None, markup=chunk_markup)
                    ids = [m.message_id for m in posted]
                record["chunks"] = n + 1
                record["ids"].extend(ids)
                await self._save_record(record)
        except Undeliverable as exc:
            log.info("telegram chat %s is not reachable (%s); reply dropped", sender.chat_id, exc)
            return Delivered(tuple(str(i) for i in record["ids"]), extra={"undeliverable": True})
        return Delivered(tuple(str(i) for i in record["ids"]), extra={"chat_id": sender.chat_id})

    async def _load_record(self) -> dict[str, Any]:
        raw = await self._redis.get(self._state_key("sent"))
        if raw is None:
            return {"chunks": 0, "ids": []}
        return json.loads(raw)

    async def _save_record(self, record: dict[str, Any]) -> None:
        await self._redis.set(self._state_key("sent"), json.dumps(record), ex=self._record_ttl)
