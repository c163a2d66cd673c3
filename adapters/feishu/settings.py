"""Feishu/Lark settings: the environment variables this adapter reads, owned here where they are used
(how they reach `bot.settings.Settings` and `.env`: adapters/common/settings.py)."""
from __future__ import annotations

from typing import Literal

from pydantic import SecretStr

from adapters.common.config_check import PlatformCheck, missing, off, url_problem
from adapters.common.settings import AdapterSettings
from core.secrets import secret


class FeishuSettings(AdapterSettings):
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


MODES = {"webhook": "webhook", "ws": "long connection"}


def check_settings(settings: FeishuSettings) -> PlatformCheck:
    """The mode FEISHU_MODE selects and every missing or invalid variable (`doctor` and startup both use it)."""
    if not credentials_set(settings):
        return off("set FEISHU_APP_ID and FEISHU_APP_SECRET, plus FEISHU_ENCRYPT_KEY and FEISHU_VERIFICATION_TOKEN "
                   "for webhook mode or FEISHU_MODE=ws for the long connection")
    app_id = settings.feishu_app_id or ""
    problems = missing(("FEISHU_APP_ID", app_id), ("FEISHU_APP_SECRET", secret(settings.feishu_app_secret)))
    if app_id and not app_id.startswith("cli_"):
        problems.append("FEISHU_APP_ID must be the app's App ID (it starts with cli_)")
    if settings.feishu_mode == "webhook":
        # without an Encrypt Key Feishu signs nothing and the token travels in clear: refuse to run open
        callback_keys = missing(
            ("FEISHU_ENCRYPT_KEY", secret(settings.feishu_encrypt_key)),
            ("FEISHU_VERIFICATION_TOKEN", secret(settings.feishu_verification_token)),
        )
        if callback_keys:
            problems += [*callback_keys, "FEISHU_MODE=ws (long connection) needs no callback keys"]
    if problem := url_problem("FEISHU_API_URL", settings.feishu_api_url):
        problems.append(problem)
    return PlatformCheck(MODES[settings.feishu_mode], tuple(problems))
