"""Slack settings: the environment variables this adapter reads, owned here where they are used.

`bot.settings.Settings` inherits this model, so one `.env` configures everything; the adapter
itself only ever sees this class's fields.
"""
from __future__ import annotations

from pydantic import SecretStr
from pydantic_settings import SettingsConfigDict

from adapters.common.settings import AdapterSettings
from core.secrets import secret


class SlackSettings(AdapterSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None  # set: Socket Mode
    slack_api_url: str = "https://slack.com/api/"
    slack_require_mention_in_threads: bool = False
    slack_streaming: bool = True  # answers via chat.startStream/appendStream/stopStream; off: post + edit
    slack_post_interval_seconds: float = 1.0  # new messages per channel are paced (Slack allows ~1/s)


def credentials_set(settings: SlackSettings) -> bool:
    """Whether the operator meant to run Slack: any of its credentials is set."""
    return any(secret(s) for s in (settings.slack_bot_token, settings.slack_signing_secret, settings.slack_app_token))
