"""Telegram's dedupe ids beside the update id (adapters/common/ingress.py checks them in one Redis round trip).

The strings are stored in Redis for hours: changing one would re-admit retries in flight.
"""
from __future__ import annotations


class TelegramDedupeIds:
    @staticmethod
    def keyboard(token: str) -> str:
        # two presses (or two people) on one keyboard answer one question once
        return f"keyboard:{token}"
