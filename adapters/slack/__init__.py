"""Slack: @mentions in channels, DMs, threaded answers with live progress, buttons.

HTTP mode (POST /slack/events) when SLACK_SIGNING_SECRET is set, Socket Mode when
SLACK_APP_TOKEN is set. Setup: the Slack section of README.md and deploy/slack-app-manifest.yaml.
"""
from __future__ import annotations

from adapters.base import AdapterDeps, PlatformAdapter
from adapters.common.config_check import require_valid
from adapters.slack.settings import SlackSettings, check_settings


def create_adapter(deps: AdapterDeps[SlackSettings]) -> PlatformAdapter | None:
    """The Slack adapter, or None when no Slack credential is set; one its check refuses raises
    PlatformMisconfigured (web and worker read the same settings, so both need a way to receive)."""
    check = check_settings(deps.settings)
    if not check.enabled:
        return None
    require_valid("slack", check)
    from adapters.slack.adapter import SlackAdapter  # noqa: PLC0415 - keep slack imports off unconfigured bots

    return SlackAdapter(deps)
