"""The fake DingTalk platform's settings: what adapters/<platform>/settings.py holds for a real one."""
from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from adapters.common.settings import AdapterSettings
from core.secrets import secret


class DingTalkSettings(AdapterSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    dingtalk_app_key: str | None = None
    dingtalk_app_secret: SecretStr | None = None


def credentials_set(settings: DingTalkSettings) -> bool:
    return bool(settings.dingtalk_app_key) or bool(secret(settings.dingtalk_app_secret))
