"""The Escalate button under an answer, one rule for every platform that has buttons.

An answer about a known product offers to take the question upstream. The button sends back the
key `ESCALATE_CHOICE` the way a clarification button sends its option key (Slack's action value,
Telegram's stored choice, Feishu's signed card value), so the click reaches the conversation as an
ordinary message with `choice="escalate"` and core/escalate.py answers it like the typed command
`escalate` / `提交问题`. WeCom's answers are stream bubbles without buttons: there the command is
the way.
"""
from __future__ import annotations

from dataclasses import dataclass

from core.escalate import ESCALATE_CHOICE
from core.messages import Reply, ReplyKind

_LABELS = {"en": "📮 Open an upstream issue", "zh": "📮 提交问题到上游"}


@dataclass(frozen=True)
class EscalateButton:
    key: str
    label: str


def escalate_button(reply: Reply) -> EscalateButton | None:
    """The button for `reply`, or None: only an answer (with a trace) about a known product gets one."""
    if reply.kind is not ReplyKind.ANSWER or not reply.trace_id or not reply.repos:
        return None
    return EscalateButton(ESCALATE_CHOICE, _LABELS.get(reply.language, _LABELS["en"]))
