"""Where an answer's thread is, as a link an admin can open (the one place that knows the forms).

Slack and Feishu have documented web links that open the conversation for someone signed in to
that workspace; Telegram and WeCom chats have none that work for every chat, so the report shows
their reference (platform, chat, thread) instead.
"""
from __future__ import annotations

from typing import Protocol
from urllib.parse import quote, urlencode


class ThreadPlace(Protocol):
    """Where a thread is (an answer record or an escalation record)."""

    platform: str
    workspace: str
    channel: str
    thread: str


def thread_link(record: ThreadPlace) -> str:
    """A URL that opens the thread, or "" when the platform has none."""
    if record.platform == "slack" and record.workspace and record.channel and record.thread:
        team, channel, ts = (quote(v, safe="") for v in (record.workspace, record.channel, record.thread))
        return f"https://app.slack.com/client/{team}/{channel}/thread/{channel}-{ts}"
    if record.platform == "feishu" and record.channel:
        # Feishu's AppLink opens the group chat (there is no link to one thread in it)
        return "https://applink.feishu.cn/client/chat/open?" + urlencode({"openChatId": record.channel})
    return ""


def thread_reference(record: ThreadPlace) -> str:
    """A readable name of the thread when there is no link."""
    return f"{record.platform} · {record.channel} · {record.thread}"
