"""Telegram settings: the environment variables this adapter reads, owned here where they are used
(how they reach `bot.settings.Settings` and `.env`: adapters/common/settings.py)."""
from __future__ import annotations

import re

from pydantic import SecretStr

from adapters.common.config_check import PlatformCheck, off, url_problem
from adapters.common.settings import AdapterSettings
from core.secrets import secret


class TelegramSettings(AdapterSettings):
    telegram_bot_token: SecretStr | None = None
    telegram_webhook_secret: SecretStr | None = None
    telegram_webhook_url: str | None = None  # unset: long polling
    telegram_api_url: str = "https://api.telegram.org/bot"


def credentials_set(settings: TelegramSettings) -> bool:
    """Whether the operator meant to run Telegram: any of its credentials is set."""
    return bool(secret(settings.telegram_bot_token))


WEBHOOK_MODE = "webhook"
POLLING_MODE = "long polling"
_TOKEN = re.compile(r"^\d+:[A-Za-z0-9_-]{20,}$")
_SECRET = re.compile(r"^[A-Za-z0-9_-]{1,256}$")


def check_settings(settings: TelegramSettings) -> PlatformCheck:
    """The mode TELEGRAM_WEBHOOK_URL selects (set: webhook, unset: long polling) and every missing or
    invalid variable (`doctor` and startup both use it)."""
    if not credentials_set(settings):
        return off("set TELEGRAM_BOT_TOKEN (long polling), plus TELEGRAM_WEBHOOK_URL and TELEGRAM_WEBHOOK_SECRET for a webhook")
    problems: list[str] = []
    if not _TOKEN.match(secret(settings.telegram_bot_token).strip()):
        problems.append("TELEGRAM_BOT_TOKEN is malformed (expected '<digits>:<secret>' from BotFather)")
    webhook_url = (settings.telegram_webhook_url or "").strip()
    webhook_secret = secret(settings.telegram_webhook_secret).strip()
    if webhook_url:
        if problem := url_problem("TELEGRAM_WEBHOOK_URL", webhook_url, ("https",)):  # Telegram delivers over HTTPS only
            problems.append(problem)
        if not webhook_secret:
            problems.append("TELEGRAM_WEBHOOK_SECRET is not set (required with TELEGRAM_WEBHOOK_URL)")
        elif not _SECRET.match(webhook_secret):
            problems.append("TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
    if problem := url_problem("TELEGRAM_API_URL", settings.telegram_api_url):
        problems.append(problem)
    return PlatformCheck(WEBHOOK_MODE if webhook_url else POLLING_MODE, tuple(problems))
