"""Feishu's dedupe ids beside the event id (adapters/common/ingress.py checks them in one Redis round trip).

The strings are stored in Redis for hours: changing one would re-admit retries in flight.
"""
from __future__ import annotations


class FeishuDedupeIds:
    @staticmethod
    def message(message_id: str) -> str:
        # Feishu can re-push the same message under a new event id
        return message_id

    @staticmethod
    def card(card_message_id: str) -> str:
        # one pick per clarification card
        return f"card:{card_message_id}" if card_message_id else ""
