"""Telegram adapter (python-telegram-bot v22): DMs and group mentions, webhook or long polling."""
from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.base import AdapterDeps
from adapters.common.config_check import require_valid
from adapters.telegram.settings import TelegramSettings, check_settings
from core.keys import Keys
from core.secrets import secret

if TYPE_CHECKING:  # python-telegram-bot loads only when Telegram is configured
    from adapters.telegram.adapter import TelegramAdapter, TelegramConfig


def config_from_settings(settings: TelegramSettings) -> "TelegramConfig | None":
    """Validated Telegram settings, or None when no bot token is configured; values its check
    refuses raise PlatformMisconfigured."""
    check = check_settings(settings)
    if not check.enabled:
        return None
    require_valid("telegram", check)
    webhook_url = (settings.telegram_webhook_url or "").strip() or None
    from adapters.telegram.adapter import TelegramConfig  # noqa: PLC0415

    return TelegramConfig(
        token=secret(settings.telegram_bot_token).strip(),
        api_url=settings.telegram_api_url,
        webhook_url=webhook_url,
        webhook_secret=secret(settings.telegram_webhook_secret).strip(),
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
