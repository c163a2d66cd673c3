"""Telegram settings: the environment variables this adapter reads, owned here where they are used.

`bot.settings.Settings` inherits this model, so one `.env` configures everything; the adapter
itself only ever sees this class's fields.
"""
from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from adapters.common.settings import AdapterSettings
from core.secrets import secret


class TelegramSettings(AdapterSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    telegram_bot_token: SecretStr | None = None
    telegram_webhook_secret: SecretStr | None = None
    telegram_webhook_url: str | None = None  # unset: long polling
    telegram_api_url: str = "https://api.telegram.org/bot"


def credentials_set(settings: TelegramSettings) -> bool:
    """Whether the operator meant to run Telegram: any of its credentials is set."""
    return bool(secret(settings.telegram_bot_token))
