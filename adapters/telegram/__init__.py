"""Telegram adapter (python-telegram-bot v22): DMs and group mentions, webhook or long polling."""
from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from adapters.base import AdapterDeps, PlatformMisconfigured
from adapters.telegram.settings import TelegramSettings
from core.keys import Keys
from core.secrets import secret

if TYPE_CHECKING:  # python-telegram-bot loads only when Telegram is configured
    from adapters.telegram.adapter import TelegramAdapter, TelegramConfig

log = logging.getLogger(__name__)

_TOKEN = re.compile(r"^\d+:[A-Za-z0-9_-]{20,}$")
_SECRET = re.compile(r"^[A-Za-z0-9_-]{1,256}$")


def config_from_settings(settings: TelegramSettings) -> "TelegramConfig | None":
    """Validated Telegram settings, or None when no bot token is configured."""
    token = secret(settings.telegram_bot_token).strip()
    if not token:
        return None
    if not _TOKEN.match(token):
        raise PlatformMisconfigured("TELEGRAM_BOT_TOKEN is malformed (expected '<digits>:<secret>' from BotFather)")
    webhook_url = (settings.telegram_webhook_url or "").strip() or None
    webhook_secret = secret(settings.telegram_webhook_secret).strip()
    if webhook_url:
        if not webhook_secret:
            raise PlatformMisconfigured("TELEGRAM_WEBHOOK_SECRET is required when TELEGRAM_WEBHOOK_URL is set")
        if not _SECRET.match(webhook_secret):
            raise PlatformMisconfigured("TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
        if not webhook_url.startswith("https://"):
            log.warning("TELEGRAM_WEBHOOK_URL is not https; Telegram only delivers webhooks over HTTPS")
    from adapters.telegram.adapter import TelegramConfig  # noqa: PLC0415

    return TelegramConfig(
        token=token,
        api_url=settings.telegram_api_url,
        webhook_url=webhook_url,
        webhook_secret=webhook_secret,
        choice_ttl_seconds=settings.clarification_ttl_seconds,
        record_ttl_seconds=settings.dedupe_ttl_seconds,
        job_deadline_seconds=settings.job_deadline_seconds,
    )


def create_adapter(deps: AdapterDeps[TelegramSettings]) -> "TelegramAdapter | None":
    config = config_from_settings(deps.settings)
    if config is None:
        return None
    from adapters.telegram.adapter import TelegramAdapter  # noqa: PLC0415

    return TelegramAdapter(config, deps.redis, deps.ingress, Keys(deps.settings.redis_prefix))


__all__ = ["create_adapter", "config_from_settings"]
