"""Feishu/Lark settings: the environment variables this adapter reads, owned here where they are used.

`bot.settings.Settings` inherits this model, so one `.env` configures everything; the adapter
itself only ever sees this class's fields.
"""
from __future__ import annotations

from typing import Literal

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from adapters.common.settings import AdapterSettings
from core.secrets import secret


class FeishuSettings(AdapterSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    feishu_app_id: str | None = None
    feishu_app_secret: SecretStr | None = None
    feishu_verification_token: SecretStr | None = None
    feishu_encrypt_key: SecretStr | None = None
    feishu_bot_open_id: str | None = None
    feishu_mode: Literal["webhook", "ws"] = "webhook"
    feishu_api_url: str = "https://open.feishu.cn"
    feishu_timestamp_window_seconds: int = 300  # our replay window on X-Lark-Request-Timestamp
    feishu_cardkit: bool = True  # stream into CardKit cards; false (or refused): patch interactive cards
    feishu_progress_interval_seconds: float = 0.5  # min seconds between two progress edits of one card


def credentials_set(settings: FeishuSettings) -> bool:
    """Whether the operator meant to run Feishu/Lark: any of its credentials is set."""
    return bool(settings.feishu_app_id) or bool(secret(settings.feishu_app_secret))
