"""Slack's dedupe ids beside the event id (adapters/common/ingress.py checks them in one Redis round trip).

The strings are stored in Redis for hours: changing one would re-admit retries in flight.
"""
from __future__ import annotations


class SlackDedupeIds:
    @staticmethod
    def message(team: str, channel: str, ts: str) -> str:
        # app_mention and message both fire for a mention in a thread: the message ts makes them one
        return f"msg:{team}:{channel}:{ts}"

    @staticmethod
    def pick(team: str, channel: str, message_ts: str, user: str) -> str:
        # one pick per person per clarification: double clicks and re-sent envelopes answer once
        return f"pick:{team}:{channel}:{message_ts}:{user}"
