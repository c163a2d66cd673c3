"""The Telegram adapter: receives updates (webhook or long polling), enqueues, and answers.

Receiving only verifies, parses and enqueues (one Redis round trip), so one slow question never
holds up another chat: the worker answers through `responder()`. Both transports feed the same
`handle_update`, deduplicated by update_id.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from enum import Enum
from typing import Any

from redis.asyncio import Redis
from starlette.routing import BaseRoute, Route
from telegram.error import Conflict, Forbidden, InvalidToken, TelegramError
from telegram.ext import ExtBot

from adapters.base import Capabilities
from adapters.common.background import BackgroundTasks
from adapters.common.ingress import REDIS_DOWN, Candidate, IngressPath, Skip
from adapters.telegram.buttons import ButtonStore
from adapters.telegram.client import POLL_TIMEOUT, build_bot, redact
from adapters.telegram.dedupe import TelegramDedupeIds
from adapters.telegram.inbound import BotIdentity, MalformedUpdate, button_press, message_to_inbound, press_to_inbound
from adapters.telegram.responder import GROUP_INTERVAL, TelegramHandles, TelegramResponder
from adapters.telegram.webhook import WEBHOOK_PATH, webhook_endpoint
from core.ingress import Ingress, SubmitOutcome
from core.keys import Keys
from core.messages import InboundMessage

log = logging.getLogger(__name__)

ALLOWED_UPDATES = ["message", "callback_query"]
CAPABILITIES = Capabilities(edit_messages=True, buttons=True, streaming=True, max_length=4096, min_edit_interval=GROUP_INTERVAL)

_EXPIRED = {
    "en": "This choice has expired. Please ask your question again.",
    "zh": "该选项已过期，请重新提问。",
}
_EXPIRED_BOTH = f"{_EXPIRED['en']} / {_EXPIRED['zh']}"


class BotNotReady(Exception):
    """getMe failed (network): the webhook answers 503 so Telegram retries later."""


class Outcome(str, Enum):
    ENQUEUED = "enqueued"
    DUPLICATE = "duplicate"
    IGNORED = "ignored"
    EXPIRED_CHOICE = "expired_choice"


@dataclass(frozen=True)
class TelegramConfig:
    token: str
    api_url: str
    webhook_url: str | None
    webhook_secret: str
    choice_ttl_seconds: int
    record_ttl_seconds: int
    job_deadline_seconds: float

    @property
    def bot_id(self) -> int:
        return int(self.token.split(":", 1)[0])


class TelegramAdapter:
    name = "telegram"
    capabilities = CAPABILITIES

    def __init__(self, config: TelegramConfig, redis: Redis, ingress: Ingress, keys: Keys) -> None:
        self.config = config
        self._redis = redis
        self._ingress = ingress
        self._path = IngressPath(ingress, self.name)
        self._keys = keys
        self.bot: ExtBot[Any] = build_bot(config.token, config.api_url)
        self.buttons = ButtonStore(redis, keys, config.choice_ttl_seconds)
        self._identity: BotIdentity | None = None
        self._ready_lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []  # the poller, or the webhook registration retry
        self._background = BackgroundTasks(self.name)  # callback answers, beside the webhook response

    @property
    def webhook_mode(self) -> bool:
        return bool(self.config.webhook_url)

    # --- lifecycle -----------------------------------------------------------------------------

    async def identity(self) -> BotIdentity:
        """The bot's id and @username (getMe, once). Raises BotNotReady while Telegram is unreachable."""
        if self._identity is not None:
            return self._identity
        async with self._ready_lock:
            if self._identity is None:
                try:
                    await self.bot.initialize()
                except InvalidToken:
                    # PTB's own message quotes the token; never let it reach a log.
                    raise InvalidToken("TELEGRAM_BOT_TOKEN was rejected by the Bot API") from None
                except TelegramError as exc:
                    raise BotNotReady(redact(str(exc))) from exc
                me = self.bot.bot
                self._identity = BotIdentity(me.id, me.username or "")
        return self._identity

    async def ready_bot(self) -> ExtBot[Any]:
        await self.identity()
        return self.bot

    async def start(self) -> None:
        if self.webhook_mode:
            try:
                await self._register_webhook()
            except (BotNotReady, TelegramError) as exc:
                # Keep serving (the route answers 503 until getMe works) and keep trying to register.
                log.error("telegram: could not register the webhook yet (%s); retrying in the background", redact(str(exc)))
                self._tasks.append(asyncio.create_task(self._register_until_done(), name="telegram-set-webhook"))
            return
        self._tasks.append(asyncio.create_task(self._poll(), name="telegram-polling"))
        log.info("telegram: long polling (no TELEGRAM_WEBHOOK_URL set)")

    async def _register_webhook(self) -> None:
        await self.identity()
        await self.bot.set_webhook(
            url=self.config.webhook_url or "",
            secret_token=self.config.webhook_secret,
            allowed_updates=ALLOWED_UPDATES,
        )
        log.info("telegram: webhook registered; updates arrive at %s", WEBHOOK_PATH)

    async def _register_until_done(self) -> None:
        backoff = 2.0
        while True:
            await asyncio.sleep(backoff)
            try:
                await self._register_webhook()
                return
            except InvalidToken as exc:
                log.error("telegram: %s", exc)
                return
            except (BotNotReady, TelegramError) as exc:
                log.warning("telegram: webhook registration failed again (%s)", redact(str(exc)))
                backoff = min(backoff * 2, 300.0)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        await self._background.drain()
        with contextlib.suppress(Exception):
            await self.bot.shutdown()
        # Jobs still in hand (the worker drains after the web app stops) re-initialize on demand.
        self._identity = None

    def routes(self) -> list[BaseRoute]:
        if not self.webhook_mode:
            return []
        return [Route(WEBHOOK_PATH, webhook_endpoint(self), methods=["POST"])]

    def responder(self, message: InboundMessage, job_id: str) -> TelegramResponder:
        return TelegramResponder(
            handles=TelegramHandles(bot=self.ready_bot, redis=self._redis, keys=self._keys, buttons=self.buttons),
            message=message,
            job_id=job_id,
            record_ttl=self.config.record_ttl_seconds,
            deadline=self.config.job_deadline_seconds,
        )

    # --- receiving -----------------------------------------------------------------------------

    async def handle_update(self, update: dict[str, Any]) -> Outcome:
        """Verify-free core of both transports, on the Bot API's JSON. Raises RedisError (→ 503 /
        retry), BotNotReady, and MalformedUpdate for a field of the wrong type (→ 400)."""
        identity = await self.identity()
        query = update.get("callback_query")
        if query is not None:
            if not isinstance(query, dict):
                raise MalformedUpdate("callback_query is not an object")
            return await self._handle_press(update["update_id"], query, identity)
        message = message_to_inbound(update, identity)
        if message is None:
            await self._path.take(Skip("not a new message addressed to the bot"))
            return Outcome.IGNORED
        result = await self._path.take(Candidate(message))
        return Outcome.ENQUEUED if result is not None and result.outcome == SubmitOutcome.ENQUEUED else Outcome.DUPLICATE

    async def _handle_press(self, update_id: int, query: dict[str, Any], identity: BotIdentity) -> Outcome:
        press = button_press(query)
        choice = await self.buttons.resolve(press.token, press.index, press.chat.chat_id if press.chat else None)
        if choice is None:
            self._background.spawn(self._answer_press(press.query_id, _EXPIRED_BOTH, alert=True))
            return Outcome.EXPIRED_CHOICE
        message = press_to_inbound(update_id, press, identity, choice.key, choice.label)
        result = await self._path.take(Candidate(message, (TelegramDedupeIds.keyboard(press.token),)))
        if result is not None and result.outcome == SubmitOutcome.ENQUEUED:
            self._background.spawn(self._answer_press(press.query_id, f"✓ {choice.label}"))
            if press.chat is not None and press.message_id is not None:
                self._background.spawn(self._remove_keyboard(press.chat.chat_id, press.message_id))
            return Outcome.ENQUEUED
        self._background.spawn(self._answer_press(press.query_id, None))
        return Outcome.DUPLICATE

    async def _answer_press(self, query_id: str, text: str | None, alert: bool = False) -> None:
        try:
            await self.bot.answer_callback_query(query_id, text=text[:200] if text else None, show_alert=alert)
        except TelegramError as exc:  # "query is too old" after a retry: nothing left to stop
            log.info("telegram: answerCallbackQuery failed: %s", redact(str(exc)))

    async def _remove_keyboard(self, chat_id: int, message_id: int) -> None:
        try:
            await self.bot.edit_message_reply_markup(chat_id=chat_id, message_id=message_id, reply_markup=None)
        except TelegramError as exc:
            log.info("telegram: could not remove a used keyboard: %s", redact(str(exc)))

    async def _poll(self) -> None:
        """Long polling: the offset only moves past an update once it is safely enqueued."""
        offset: int | None = None
        backoff = 1.0
        with contextlib.suppress(TelegramError):
            await self.bot.delete_webhook()
        while True:
            try:
                await self.identity()
                updates = await self.bot.get_updates(offset=offset, timeout=POLL_TIMEOUT, allowed_updates=ALLOWED_UPDATES)
                for update in updates:
                    try:
                        await self.handle_update(update.to_dict())
                    except (*REDIS_DOWN, BotNotReady):
                        raise  # not enqueued: fetch it again after the back-off
                    except Exception:  # noqa: BLE001 - skip one unprocessable update, keep the rest
                        log.exception("telegram polling: dropping update %s that could not be handled", update.update_id)
                    offset = update.update_id + 1
                backoff = 1.0
            except asyncio.CancelledError:
                raise
            except InvalidToken as exc:
                log.error("telegram polling stopped: %s", exc)
                return
            except Conflict:
                log.error("telegram: another poller or a webhook is active for this bot; retrying in %.0fs", backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 60.0)
            except Forbidden as exc:
                log.error("telegram polling forbidden: %s", redact(str(exc)))
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 60.0)
            except (TelegramError, BotNotReady, *REDIS_DOWN) as exc:
                log.warning("telegram polling: %s: %s; retrying in %.0fs", type(exc).__name__, redact(str(exc)), backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 30.0)
            except Exception:  # noqa: BLE001 - one odd update must not end polling for everyone
                log.exception("telegram polling: unexpected error")
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 30.0)
