"""The fake DingTalk platform's dedupe ids beside the event id."""
from __future__ import annotations


class DingTalkDedupeIds:
    @staticmethod
    def message(msg_id: str) -> str:
        # DingTalk re-sends a robot callback it did not see acknowledged under the same msgId
        return f"msg:{msg_id}"
