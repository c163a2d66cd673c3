"""Template cards for clarification (pure builders).

A `button_interaction` card carries one button per option; the button key is
`clarify:<option key>` and the card's `task_id` ties a click back to the
question (WeCom allows [A-Za-z0-9_-@] up to 128 bytes, unique per bot).
"""
from __future__ import annotations

import secrets
from typing import Any

from core.messages import Language, Option

from .render import defang, text

BUTTON_PREFIX = "clarify:"
MAX_BUTTONS = 6  # WeCom's limit for button_list
_LABEL_CHARS = 12  # WeCom suggests ≤ 10 characters; longer labels are cut


def new_task_id() -> str:
    return "clarify_" + secrets.token_hex(12)


def _short(label: str, limit: int) -> str:
    label = defang(label.strip())
    return label if len(label) <= limit else label[: limit - 1] + "…"


def clarification_card(question: str, options: tuple[Option, ...], language: Language, task_id: str) -> dict[str, Any]:
    return {
        "card_type": "button_interaction",
        "main_title": {"title": text("card_title", language), "desc": _short(question, 30)},
        "button_list": [
            {"text": _short(o.label, _LABEL_CHARS), "style": 1, "key": BUTTON_PREFIX + o.key}
            for o in options[:MAX_BUTTONS]
        ],
        "task_id": task_id,
    }


def chosen_card(label: str, language: Language, task_id: str) -> dict[str, Any]:
    """Replaces the clicked card so the buttons cannot be pressed again."""
    return {
        "card_type": "text_notice",
        "main_title": {"title": text("card_title", language)},
        "sub_title_text": text("chosen", language, label=_short(label, 40)),
        "task_id": task_id,
    }


def expired_card(language: Language, task_id: str) -> dict[str, Any]:
    return {
        "card_type": "text_notice",
        "main_title": {"title": text("card_title", language)},
        "sub_title_text": text("card_expired", language),
        "task_id": task_id,
    }


def option_key_of(event_key: str) -> str | None:
    return event_key[len(BUTTON_PREFIX) :] if event_key.startswith(BUTTON_PREFIX) else None
