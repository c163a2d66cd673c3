"""Slack settings: the environment variables this adapter reads, owned here where they are used
(how they reach `bot.settings.Settings` and `.env`: adapters/common/settings.py)."""
from __future__ import annotations

from pydantic import SecretStr

from adapters.common.config_check import PlatformCheck, missing, off, url_problem
from adapters.common.settings import AdapterSettings
from core.secrets import secret


class SlackSettings(AdapterSettings):
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


SOCKET_MODE = "socket mode"
HTTP_MODE = "Events API webhook"


def check_settings(settings: SlackSettings) -> PlatformCheck:
    """The mode the tokens select (SLACK_APP_TOKEN: socket mode, else the Events API webhook signed
    with SLACK_SIGNING_SECRET) and every missing or invalid variable (`doctor` and startup both use it)."""
    if not credentials_set(settings):
        return off("set SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (Events API webhook), "
                   "or SLACK_BOT_TOKEN and SLACK_APP_TOKEN (socket mode, no public URL)")
    bot_token, app_token = secret(settings.slack_bot_token), secret(settings.slack_app_token)
    mode = SOCKET_MODE if app_token else HTTP_MODE
    problems = missing(("SLACK_BOT_TOKEN", bot_token))
    if bot_token and not bot_token.startswith("xoxb-"):
        problems.append("SLACK_BOT_TOKEN must be the Bot User OAuth Token (xoxb-...)")
    if app_token and not app_token.startswith("xapp-"):
        problems.append("SLACK_APP_TOKEN must be an app-level token with connections:write (xapp-...)")
    if not app_token and not secret(settings.slack_signing_secret):
        # with neither, no event can reach the bot: it would start and never hear a question
        problems.append("SLACK_SIGNING_SECRET is not set (or set SLACK_APP_TOKEN for socket mode)")
    if problem := url_problem("SLACK_API_URL", settings.slack_api_url):
        problems.append(problem)
    return PlatformCheck(mode, tuple(problems))
