"""Slack: @mentions in channels, DMs, threaded answers with live progress, buttons.

HTTP mode (POST /slack/events) when SLACK_SIGNING_SECRET is set, Socket Mode when
SLACK_APP_TOKEN is set. Setup: the Slack section of README.md and deploy/slack-app-manifest.yaml.
"""
from __future__ import annotations

from adapters.base import AdapterDeps, PlatformAdapter, PlatformMisconfigured
from adapters.slack.settings import SlackSettings, credentials_set
from core.secrets import secret


def create_adapter(deps: AdapterDeps[SlackSettings]) -> PlatformAdapter | None:
    """The Slack adapter, or None when no Slack credential is set.

    A worker-only process needs just the bot token (it only posts); the web process also
    needs SLACK_SIGNING_SECRET or SLACK_APP_TOKEN to receive events.
    """
    if not credentials_set(deps.settings):
        return None
    if not secret(deps.settings.slack_bot_token):
        raise PlatformMisconfigured("SLACK_SIGNING_SECRET or SLACK_APP_TOKEN is set but SLACK_BOT_TOKEN is not")
    from adapters.slack.adapter import SlackAdapter  # noqa: PLC0415 - keep slack imports off unconfigured bots

    return SlackAdapter(deps)
