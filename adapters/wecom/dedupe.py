"""WeCom's dedupe ids beside the message id (adapters/common/ingress.py checks them in one Redis round trip).

The strings are stored in Redis for hours: changing one would re-admit retries in flight.
"""
from __future__ import annotations


class WeComDedupeIds:
    @staticmethod
    def card(task_id: str) -> str:
        # one card resolves one question: a second click (or a second user) is a duplicate
        return f"card:{task_id}"
