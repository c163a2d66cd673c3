"""The app manifest asks for what the adapter handles, and the scopes those events need."""
from __future__ import annotations

import re
from pathlib import Path

MANIFEST = Path(__file__).resolve().parents[2] / "deploy" / "slack-app-manifest.yaml"

# Event → the bot scope Slack requires for it (docs.slack.dev/reference/events)
EVENT_SCOPES = {
    "app_mention": "app_mentions:read",
    "message.channels": "channels:history",
    "message.groups": "groups:history",
    "message.im": "im:history",
    "message.mpim": "mpim:history",
}


def _list_after(text: str, key: str) -> list[str]:
    block = re.search(rf"^\s*{key}:\n((?:\s+- .*\n)+)", text, re.MULTILINE)
    assert block, key
    return [re.sub(r"\s+#.*$", "", line.strip()[2:]).strip() for line in block.group(1).splitlines()]


def test_manifest_events_scopes_and_urls() -> None:
    text = MANIFEST.read_text()
    events = _list_after(text, "bot_events")
    scopes = _list_after(text, "bot")
    assert set(events) == set(EVENT_SCOPES)
    assert {EVENT_SCOPES[e] for e in events} <= set(scopes)
    assert {"chat:write", "reactions:write"} <= set(scopes)
    assert text.count("request_url: https://YOUR-HOST/slack/events") == 2  # events and interactivity
    assert re.search(r"interactivity:\n\s+is_enabled: true", text)
