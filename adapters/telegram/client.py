"""The python-telegram-bot client: base URL, flood control, token hygiene, and safe sending.

`TelegramSender` is the only place that posts or edits messages. It handles what Telegram does
to a long-running bot: HTML it refuses (sent again as plain text), a group that became a
supergroup (sent again to the new id, remembered in Redis), and a user who blocked the bot
(`Undeliverable`, never a crash). Rate limits: every new message first reserves a slot in the
shared Redis pacer (about one a second per chat, 20 a minute per group, 30 a second per bot,
across all our processes); the per-process `FloodControl` limiter still retries after `RetryAfter`.
"""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from redis.asyncio import Redis
from telegram import InlineKeyboardMarkup, LinkPreviewOptions, Message, ReplyParameters
from telegram.constants import ParseMode
from telegram.error import BadRequest, ChatMigrated, Forbidden
from telegram.ext import AIORateLimiter, ExtBot
from telegram.request import HTTPXRequest

from adapters.common.pacing import Pacer, Rate
from adapters.telegram.inbound import PLATFORM
from adapters.telegram.split import MAX_MESSAGE, html_to_plain, split_plain, tg_len
from core.keys import Keys

log = logging.getLogger(__name__)
T = TypeVar("T")

POLL_TIMEOUT = 25  # seconds Telegram holds a getUpdates call open
RETRY_AFTER_ATTEMPTS = 3
MIGRATION_TTL = 90 * 24 * 3600
# Telegram's published limits: ~1 message a second in one chat (short bursts pass), 20 a
# minute in a group, ~30 a second for the whole bot.
PRIVATE_RATE = Rate(interval=1.0, burst=3)
GROUP_RATE = Rate(interval=3.0, burst=20)
BOT_RATE = Rate(interval=1 / 30, burst=30)

# Not messages: Telegram's "20 messages per minute per group" does not count them, and a typing
# action or a callback answer must never wait a minute behind a group's message queue.
_NOT_MESSAGES = frozenset({"sendChatAction", "answerCallbackQuery", "getMe", "getUpdates", "setWebhook", "deleteWebhook"})


class FloodControl(AIORateLimiter):
    """AIORateLimiter (30/s overall, 20/min per group, retry after RetryAfter) minus non-messages."""

    async def process_request(  # type: ignore[override]
        self, callback: Any, args: Any, kwargs: dict[str, Any], endpoint: str, data: dict[str, Any], rate_limit_args: int | None
    ) -> Any:
        if endpoint in _NOT_MESSAGES:
            # `data` only steers the limiter; the request itself is sent from `args` unchanged.
            data = {k: v for k, v in data.items() if k != "chat_id"}
        return await super().process_request(callback, args, kwargs, endpoint, data, rate_limit_args)


class _RedactTokens(logging.Filter):
    """httpx logs every request URL at INFO, and the Bot API URL contains the bot token."""

    def __init__(self) -> None:
        super().__init__()
        self.tokens: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if any(token in message for token in self.tokens):
            for token in self.tokens:
                message = message.replace(token, "<redacted>")
            record.msg, record.args = message, None
        return True


_REDACT = _RedactTokens()
for _name in ("httpx", "httpcore", "telegram", "telegram.ext", "telegram._bot", "telegram.ext.ExtBot"):
    logging.getLogger(_name).addFilter(_REDACT)


def redact(text: str) -> str:
    for token in _REDACT.tokens:
        text = text.replace(token, "<redacted>")
    return text


def build_bot(token: str, api_url: str) -> ExtBot[Any]:
    _REDACT.tokens.add(token)
    return ExtBot(
        token,
        base_url=api_url,
        request=HTTPXRequest(connection_pool_size=32, read_timeout=15, write_timeout=15, connect_timeout=10, pool_timeout=10),
        get_updates_request=HTTPXRequest(connection_pool_size=1, read_timeout=POLL_TIMEOUT + 10, connect_timeout=10),
        rate_limiter=FloodControl(max_retries=RETRY_AFTER_ATTEMPTS),
    )


class Undeliverable(Exception):
    """The bot may not write to this chat any more (blocked, kicked, chat deleted)."""


def is_parse_error(exc: BadRequest) -> bool:
    text = exc.message.lower()
    return "parse entities" in text or "start tag" in text or "end tag" in text or "entity" in text


def is_not_modified(exc: BadRequest) -> bool:
    return "not modified" in exc.message.lower()


def is_gone(exc: BadRequest) -> bool:
    """The message to edit no longer exists or may not be edited: post a new one instead."""
    text = exc.message.lower()
    return "message to edit not found" in text or "can't be edited" in text or "message_id_invalid" in text


def _fit_plain(text: str) -> list[str]:
    # Plain text spells out link URLs, so it can outgrow a chunk that fitted as HTML.
    return split_plain(text) if tg_len(text) > MAX_MESSAGE else [text]


_NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


@dataclass(repr=False, eq=False)  # no repr: the bot's holds its token; compared by identity, as before
class TelegramSender:
    """Posts and edits HTML messages in one chat, following group→supergroup migrations."""

    bot: ExtBot[Any]
    redis: Redis  # where migrations are remembered
    keys: Keys
    chat_id: int  # the supergroup's id once the group migrated
    topic_id: int | None
    pacer: Pacer | None = None  # None: no shared pacing (tests)

    async def _pace(self) -> None:
        """Wait for this chat's (and the bot's) next free slot, shared by every process."""
        if self.pacer is None:
            return
        await self.pacer.wait("bot", BOT_RATE)
        await self.pacer.wait(f"chat:{self.chat_id}", GROUP_RATE if self.chat_id < 0 else PRIVATE_RATE)

    def _migration_key(self, chat_id: int) -> str:
        return self.keys.adapter_state(PLATFORM, f"migrated:{chat_id}")

    async def follow_migration(self) -> None:
        """Use the supergroup id if this group was upgraded earlier (only groups have negative ids)."""
        if self.chat_id >= 0:
            return
        moved = await self.redis.get(self._migration_key(self.chat_id))
        if moved is not None:
            self.chat_id = int(moved)

    async def _migrated(self, exc: ChatMigrated) -> None:
        old, self.chat_id = self.chat_id, int(exc.new_chat_id)
        log.info("telegram chat %s migrated to supergroup %s", old, self.chat_id)
        await self.redis.set(self._migration_key(old), str(self.chat_id), ex=MIGRATION_TTL)

    async def send(self, html: str, *, reply_to: int | None = None, markup: InlineKeyboardMarkup | None = None) -> list[Message]:
        """Post one HTML chunk (plain text if Telegram refuses the HTML). Returns what was posted."""
        reply = ReplyParameters(reply_to, allow_sending_without_reply=True) if reply_to else None

        async def send_once() -> list[Message]:
            return await self._html_or_plain(
                lambda: self._one_message(html, reply, markup),
                lambda: self._send_plain(html_to_plain(html), reply, markup),
                "sending plain text",
            )

        sent = await self._in_chat(send_once)
        if sent is None:
            raise Undeliverable("chat migrated twice")
        return sent

    async def _in_chat(self, action: Callable[[], Awaitable[T]]) -> T | None:
        """`action` in this chat, once more in the supergroup a group became (None when it moved
        twice); a chat that blocked or removed the bot raises Undeliverable."""
        for _ in range(2):  # a second round only after a chat migration
            try:
                return await action()
            except ChatMigrated as exc:
                await self._migrated(exc)
            except Forbidden as exc:
                raise Undeliverable(redact(exc.message)) from exc
        return None

    @staticmethod
    async def _html_or_plain(
        html: Callable[[], Awaitable[T]], plain: Callable[[], Awaitable[T]], warning: str | None = None
    ) -> T:
        """`html()`, or `plain()` when Telegram refuses the HTML (said in the log as `warning`, when given)."""
        try:
            return await html()
        except BadRequest as exc:
            if not is_parse_error(exc):
                raise
            if warning is not None:
                log.warning("telegram refused the HTML (%s); %s", redact(exc.message), warning)
            return await plain()

    async def _one_message(
        self, html: str, reply: ReplyParameters | None, markup: InlineKeyboardMarkup | None
    ) -> list[Message]:
        return [await self._send_message(html, ParseMode.HTML, reply, markup)]

    async def _send_plain(self, text: str, reply: ReplyParameters | None, markup: InlineKeyboardMarkup | None) -> list[Message]:
        pieces = _fit_plain(text)
        sent = []
        for n, piece in enumerate(pieces):
            last = n == len(pieces) - 1
            sent.append(await self._send_message(piece, None, reply if n == 0 else None, markup if last else None))
        return sent

    async def _send_message(
        self, text: str, parse_mode: str | None, reply: ReplyParameters | None, markup: InlineKeyboardMarkup | None
    ) -> Message:
        await self._pace()
        return await self.bot.send_message(
            self.chat_id,
            text,
            parse_mode=parse_mode,
            message_thread_id=self.topic_id,
            reply_parameters=reply,
            reply_markup=markup,
            link_preview_options=_NO_PREVIEW,
        )

    async def edit(self, message_id: int, html: str, *, markup: InlineKeyboardMarkup | None = None) -> bool:
        """Edit a message in place. False when it is gone or may not be edited (post a new one)."""

        async def edit_once() -> bool:
            try:
                await self._html_or_plain(
                    lambda: self._edit(message_id, html, ParseMode.HTML, markup),
                    lambda: self._edit(message_id, _fit_plain(html_to_plain(html))[0], None, markup),
                    "editing as plain text",
                )
                return True
            except BadRequest as exc:
                if is_not_modified(exc):
                    return True
                if is_gone(exc):
                    return False
                raise

        return bool(await self._in_chat(edit_once))

    async def _edit(self, message_id: int, text: str, parse_mode: str | None, markup: InlineKeyboardMarkup | None) -> None:
        await self.bot.edit_message_text(
            text,
            chat_id=self.chat_id,
            message_id=message_id,
            parse_mode=parse_mode,
            reply_markup=markup,
            link_preview_options=_NO_PREVIEW,
        )

    async def typing(self) -> None:
        await self.bot.send_chat_action(self.chat_id, "typing", message_thread_id=self.topic_id)

    async def draft(self, draft_id: int, html: str) -> None:
        await self._html_or_plain(
            lambda: self.bot.send_message_draft(
                self.chat_id, draft_id, html, message_thread_id=self.topic_id, parse_mode=ParseMode.HTML
            ),
            lambda: self.bot.send_message_draft(self.chat_id, draft_id, html_to_plain(html), message_thread_id=self.topic_id),
        )
