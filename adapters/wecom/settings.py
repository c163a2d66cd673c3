"""WeCom settings: the environment variables this adapter reads, owned here where they are used.

`bot.settings.Settings` inherits this model, so one `.env` configures everything; the adapter
itself only ever sees this class's fields.
"""
from __future__ import annotations

from typing import Literal

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from adapters.common.settings import AdapterSettings
from core.secrets import secret


class WeComSettings(AdapterSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    wecom_token: SecretStr | None = None
    wecom_encoding_aes_key: SecretStr | None = None
    wecom_bot_id: str | None = None
    wecom_bot_secret: SecretStr | None = None
    wecom_mode: Literal["webhook", "ws"] = "webhook"
    wecom_api_url: str = "https://qyapi.weixin.qq.com"
    wecom_ws_url: str = "wss://openws.work.weixin.qq.com"
    wecom_receive_id: str = ""  # "" for an in-house AI bot; decrypted payloads must carry exactly this
    wecom_bot_name: str | None = None  # set: "@Name" is removed anywhere in group text; unset: a leading @token
    wecom_stream_window_seconds: float = 330.0  # WeCom stops refreshing 6 min after the message; keep a margin
    wecom_max_clock_skew_seconds: int = 300  # callback timestamp window; 0 disables the check
    wecom_ws_heartbeat_seconds: float = 30.0
    wecom_ws_reconnect_base_seconds: float = 1.0
    wecom_ws_reconnect_max_seconds: float = 30.0


def credentials_set(settings: WeComSettings) -> bool:
    """Whether the operator meant to run WeCom: any of its credentials is set."""
    return any(secret(s) for s in (settings.wecom_token, settings.wecom_encoding_aes_key, settings.wecom_bot_secret)) or bool(
        settings.wecom_bot_id
    )
