"""WeCom settings: the environment variables this adapter reads, owned here where they are used
(how they reach `bot.settings.Settings` and `.env`: adapters/common/settings.py)."""
from __future__ import annotations

from typing import Literal

from pydantic import SecretStr

from adapters.common.config_check import PlatformCheck, missing, off, url_problem
from adapters.common.settings import AdapterSettings
from adapters.wecom.aes_key import aes_key
from core.secrets import secret


class WeComSettings(AdapterSettings):
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


MODES = {"webhook": "callback webhook", "ws": "long connection"}
_CALLBACK_KEYS = "WECOM_TOKEN and WECOM_ENCODING_AES_KEY"
_BOT_KEYS = "WECOM_BOT_ID and WECOM_BOT_SECRET"


def check_settings(settings: WeComSettings) -> PlatformCheck:
    """The mode WECOM_MODE selects and every missing or invalid variable (`doctor` and startup both use it)."""
    if not credentials_set(settings):
        return off(f"set {_CALLBACK_KEYS} for callbacks (the bot's URL), or WECOM_MODE=ws with {_BOT_KEYS} "
                   "for the long connection (no public URL)")
    callback_set = bool(secret(settings.wecom_token) or secret(settings.wecom_encoding_aes_key))
    bot_set = bool(settings.wecom_bot_id or secret(settings.wecom_bot_secret))
    if settings.wecom_mode == "ws":
        problems = missing(("WECOM_BOT_ID", settings.wecom_bot_id), ("WECOM_BOT_SECRET", secret(settings.wecom_bot_secret)))
        if problems and callback_set:
            problems.append(f"{_CALLBACK_KEYS} are for callbacks: set WECOM_MODE=webhook to use them")
        if problem := url_problem("WECOM_WS_URL", settings.wecom_ws_url, ("wss", "ws")):
            problems.append(problem)
    else:
        key = secret(settings.wecom_encoding_aes_key)
        problems = missing(("WECOM_TOKEN", secret(settings.wecom_token)), ("WECOM_ENCODING_AES_KEY", key))
        if problems and bot_set:
            problems.append(f"{_BOT_KEYS} are for the long connection: set WECOM_MODE=ws to use them")
        if key:
            try:
                aes_key(key)  # the same check the callback cipher makes when it is built
            except ValueError as exc:
                problems.append(str(exc))
    if problem := url_problem("WECOM_API_URL", settings.wecom_api_url):
        problems.append(problem)
    return PlatformCheck(MODES[settings.wecom_mode], tuple(problems))
