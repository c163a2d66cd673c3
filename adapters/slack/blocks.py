"""A core `Reply` → the Slack messages that show it (pure; golden tests in tests/adapters/slack/test_render.py).

Limits we stay inside (see platforms.md §1.7): section text 3,000 chars, 50 blocks per message,
12,000 chars of markdown per payload with an unexplained `msg_blocks_too_long` seen near 13.2k,
so a message carries at most three ~2,900-char sections (about 8,700 chars) and long answers
become several messages in the thread. Code fences are closed and re-opened across cuts.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from adapters.common.confidence import answer_body
from adapters.common.escalate import escalate_button
from adapters.common.links import sanitize_markdown_links
from adapters.common.sources import sources_title
from adapters.common.split import split_markdown
from adapters.slack.render import defang_markdown, escape, link, plain, to_mrkdwn
from core.messages import Language, Reply, ReplyKind, Source

SECTION_LIMIT = 2_900  # Slack: 3,000 per section text; margin for the fence we may add
SECTIONS_PER_MESSAGE = 3
STREAM_LIMIT = 8_000  # longer answers are posted as several messages instead of one stream
BUTTON_LABEL_LIMIT = 75  # plain_text in a button
MAX_OPTIONS = 25  # elements in one actions block

CLARIFY_ACTION_PREFIX = "aic_clarify_"
ESCALATE_ACTION = f"{CLARIFY_ACTION_PREFIX}escalate"  # a pick like an option's: its value is the escalate key
FEEDBACK_ACTIONS = {"aic_feedback_up": "helpful", "aic_feedback_down": "not_helpful"}
CLARIFY_BLOCK_ID = "aic_clarify"
FEEDBACK_BLOCK_ID = "aic_feedback"

_TEXTS: dict[str, dict[Language, str]] = {
    "helpful": {"en": "👍 Helpful", "zh": "👍 有帮助"},
    "not_helpful": {"en": "👎 Not helpful", "zh": "👎 没帮助"},
    "thanks": {"en": "Thanks for the feedback!", "zh": "感谢反馈！"},
    "selected": {"en": "Selected: {label}", "zh": "已选择：{label}"},
    "rest_lost": {
        "en": "_The rest of this answer could not be delivered. Ask again to get it in full._",
        "zh": "_回答的剩余部分发送失败，请重新提问以获取完整回答。_",
    },
    "thinking": {"en": "Working on it…", "zh": "正在处理…"},
}


def ui_text(name: str, language: Language, **values: str) -> str:
    template = _TEXTS[name][language]
    return template.format(**values) if values else template


@dataclass(frozen=True)
class SlackMessage:
    """One chat.postMessage / chat.update payload: `text` is the notification fallback."""

    text: str
    blocks: tuple[dict[str, Any], ...]

    def kwargs(self) -> dict[str, Any]:
        return {"text": self.text, "blocks": list(self.blocks)}


def split_text(text: str, limit: int) -> list[str]:
    """Chunks of at most `limit` characters, code fences balanced in each."""
    return split_markdown(text, limit, cost=len) if text.strip() else []


def section(mrkdwn: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}


def _sources_mrkdwn(sources: tuple[Source, ...], language: Language) -> str:
    lines = [f"*{sources_title(language)}*"]
    lines += [f"• {link(s.url, s.title or s.url)}" for s in sources]
    return "\n".join(lines)


def _sources_markdown(sources: tuple[Source, ...], language: Language) -> str:
    lines = [f"**{sources_title(language)}**"]
    for s in sources:
        title = re.sub(r"[\[\]]", "", s.title or s.url)
        lines.append(f"- [{title}]({s.url})" if s.url.startswith(("http://", "https://")) else f"- {title}")
    return "\n".join(lines)


def clarify_buttons(reply: Reply) -> dict[str, Any] | None:
    if not reply.options:
        return None
    elements = [
        {
            "type": "button",
            "action_id": f"{CLARIFY_ACTION_PREFIX}{i}",
            "text": {"type": "plain_text", "text": plain(o.label, BUTTON_LABEL_LIMIT) or o.key, "emoji": True},
            "value": o.key,
        }
        for i, o in enumerate(reply.options[:MAX_OPTIONS])
    ]
    return {"type": "actions", "block_id": CLARIFY_BLOCK_ID, "elements": elements}


def feedback_buttons(reply: Reply) -> dict[str, Any] | None:
    if reply.kind is not ReplyKind.ANSWER or not reply.trace_id:
        return None
    elements = [
        {
            "type": "button",
            "action_id": action_id,
            "text": {"type": "plain_text", "text": ui_text(value, reply.language), "emoji": True},
            "value": reply.trace_id,
        }
        for action_id, value in FEEDBACK_ACTIONS.items()
    ]
    escalate = escalate_button(reply)
    if escalate is not None:
        elements.append({"type": "button", "action_id": ESCALATE_ACTION, "value": escalate.key,
                         "text": {"type": "plain_text", "text": escalate.label, "emoji": True}})
    return {"type": "actions", "block_id": FEEDBACK_BLOCK_ID, "elements": elements}


def trailing_blocks(reply: Reply) -> list[dict[str, Any]]:
    """Buttons under the last message of a reply: options for a clarification, feedback for an answer."""
    return [b for b in (clarify_buttons(reply), feedback_buttons(reply)) if b is not None]


def reply_mrkdwn(reply: Reply) -> str:
    body = to_mrkdwn(answer_body(reply))
    if reply.sources:
        body = f"{body}\n\n{_sources_mrkdwn(reply.sources, reply.language)}".strip()
    return body


def reply_markdown(reply: Reply) -> str:
    """The reply as standard Markdown for streaming (`markdown_text`), mentions defanged and links
    to anything but http(s) reduced to their label (Slack renders this Markdown itself)."""
    body = answer_body(reply).strip()
    if reply.sources:
        body = f"{body}\n\n{_sources_markdown(reply.sources, reply.language)}"
    return defang_markdown(sanitize_markdown_links(body))


def stream_pieces(markdown: str, size: int) -> list[str]:
    """Slices to append one by one; cut at line ends so a half-drawn line never shows."""
    pieces: list[str] = []
    current = ""
    for line in markdown.splitlines(keepends=True):
        if current and len(current) + len(line) > size:
            pieces.append(current)
            current = ""
        current += line
    if current:
        pieces.append(current)
    return pieces


def progress_message(status: str, language: Language) -> SlackMessage:
    """The in-place placeholder used when assistant status is not available."""
    line = f"⏳ _{escape(plain(status, 300) or ui_text('thinking', language))}_"
    return SlackMessage(text=line, blocks=(section(line),))


def selected_blocks(message_blocks: list[dict[str, Any]], label: str, user: str, language: Language) -> list[dict[str, Any]]:
    """The clarification message after a pick: its buttons replaced by who picked what."""
    kept = [b for b in message_blocks if isinstance(b, dict) and b.get("block_id") != CLARIFY_BLOCK_ID]
    note = ui_text("selected", language, label=escape(plain(label, 200)))
    kept.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f"{note} (<@{user}>)"}]})
    return kept
