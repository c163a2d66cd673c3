"""Pure rendering: core Markdown → Feishu card JSON 2.0 (markdown component).

The card markdown component understands headings, lists, fenced code with a
language, links and tables, so the core's Markdown passes through mostly as is.
What changes: `<at …>`, `<a …>` and `<link …>` tags are defanged (model output must never ping a
whole group, nor link past verification), links and images to anything but http(s) keep only their label (issue 16), nested list
indentation is widened to the 4 spaces Feishu expects. The responder (responder.py) splits long
answers through the shared delivery engine so every request body stays under the 30 KB card limit;
a refused card is re-sent as its own Markdown.
"""
from __future__ import annotations

import json
import re
from typing import Any

from adapters.common.links import is_web_url, sanitize_markdown_links
from adapters.common.sources import sources_title
from core.messages import Reply, Source
from core.untrusted_text import plain_line

CARD_BODY_LIMIT = 30 * 1024  # bytes per card/post request body
_CARD_MARGIN = 1024  # uuid, reply_in_thread, field order: room we do not measure exactly
ANSWER_ELEMENT = "answer"
STATUS_ELEMENT = "status"

# possessive: two adjacent \s* runs made "<" + 20,000 spaces take 7 s (issue 16).
# `<at>` mentions, and the link tags `<a href>` / `<link url>`: verification rewrites a verified link
# tag as a Markdown link (core/research/citations.py), so a tag that still reaches a card was never
# verified and shows as text.
_TAG = re.compile(r"<(\s*+/?\s*+(?:at|a|link)\b)", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^( +)([-*+]|\d+[.)]) ")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")

LABELS = {
    "zh": {
        "working": "⏳ 正在处理你的问题…",
        "choose": "请选择一个选项（也可以直接回复编号或名称）：",
        "part": "（第 {i}/{n} 部分）",
        "chosen": "已选择：{label}",
        "duplicate": "已经在处理这个选择了",
        "see_below": "回答见下方。",
    },
    "en": {
        "working": "⏳ Working on your question…",
        "choose": "Pick one (or reply with its number or name):",
        "part": "(part {i}/{n})",
        "chosen": "Chosen: {label}",
        "duplicate": "Already working on this choice",
        "see_below": "The answer is below.",
    },
}


def labels(language: str) -> dict[str, str]:
    return LABELS.get(language, LABELS["en"])


def defang(text: str) -> str:
    """Break `<at user_id="all">` / `<at id=all>` so nothing the model writes can mention people, and
    `<a href=…>` / `<link url=…>` so nothing unverified links anywhere.

    A zero-width space after `<` keeps the text readable and is not a tag to Feishu.
    """
    return _TAG.sub("<\u200b\\1", text)


def _safe_url(url: str) -> bool:
    return is_web_url(url)


def _image_as_link(m: re.Match[str]) -> str:
    """Called for http(s) targets only: images become links (cards do not load arbitrary images)."""
    return f"[{m.group('label') or m.group('url')}]({m.group('url')})" if m.group("bang") else m.group(0)


def _fix_line(line: str, indent_unit: int) -> str:
    if not line.startswith(" "):
        return line
    m = _LIST_ITEM.match(line)
    if m and indent_unit < 4:
        # CommonMark nests lists with 2 (or 3) spaces; Feishu needs 4 per level
        level = max(1, round(len(m.group(1)) / indent_unit))
        line = " " * (4 * level) + line[len(m.group(1)):]
    return line


def _outside_fences(lines: list[str]) -> list[bool]:
    flags, in_fence = [], False
    for line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
            flags.append(False)
        else:
            flags.append(not in_fence)
    return flags


def to_card_markdown(markdown: str) -> str:
    """Core Markdown → card markdown. Code fences are copied untouched (apart from defanging)."""
    # links and images to anything but http(s) keep only their label (issue 16); code untouched
    lines = sanitize_markdown_links(markdown, _image_as_link).split("\n")
    outside = _outside_fences(lines)
    indents = [len(m.group(1)) for line, o in zip(lines, outside) if o and (m := _LIST_ITEM.match(line))]
    unit = min(indents) if indents else 4
    out = [_fix_line(line, unit) if o else line for line, o in zip(lines, outside)]
    return defang("\n".join(out))


def _link_text(source: Source) -> str:
    # An issue's title is anyone's: plain text, never a nested link, emphasis or <at> tag.
    return plain_line(source.title) or source.url


def sources_markdown(sources: tuple[Source, ...], language: str) -> str:
    items = [f"- [{_link_text(s)}]({s.url})" for s in sources if _safe_url(s.url)]
    if not items:
        return ""
    return f"**{sources_title(language)}**\n" + "\n".join(items)


def options_markdown(reply: Reply) -> str:
    """The options as a numbered list (so typing works too), unless the core's text has them."""
    numbered = [f"{i}. {o.label}" for i, o in enumerate(reply.options, 1)]
    if all(line in reply.text for line in numbered):
        return ""
    return "\n".join([labels(reply.language)["choose"], *numbered])


def _summary(markdown: str) -> str:
    for line in markdown.split("\n"):
        plain = re.sub(r"[#*_`>\[\]]", "", line).strip()
        if plain:
            return plain[:100]
    return ""


def card(
    markdown: str,
    *,
    element_id: str = ANSWER_ELEMENT,
    buttons: list[dict[str, Any]] | None = None,
    streaming: bool = False,
    template: str | None = None,
) -> dict[str, Any]:
    """A JSON 2.0 card with one markdown component. `update_multi` lets us PATCH it later."""
    config: dict[str, Any] = {"update_multi": True, "streaming_mode": streaming}
    summary = _summary(markdown)
    if summary:
        config["summary"] = {"content": summary}
    elements: list[dict[str, Any]] = [{"tag": "markdown", "content": markdown, "element_id": element_id}]
    elements += buttons or []
    result: dict[str, Any] = {"schema": "2.0", "config": config, "body": {"elements": elements}}
    if template:
        result["header"] = {"template": template, "title": {"tag": "plain_text", "content": summary or " "}}
    return result


def button(label: str, value: dict[str, Any], index: int) -> dict[str, Any]:
    return {
        "tag": "button",
        "element_id": f"opt{index}",
        "text": {"tag": "plain_text", "content": label[:60]},
        "type": "primary" if index == 0 else "default",
        "behaviors": [{"type": "callback", "value": value}],
    }


def working_markdown(progress_lines: list[str], language: str) -> str:
    # progress lines can quote tool output: the same link rule as answers
    lines = [labels(language)["working"], *(f"- {defang(sanitize_markdown_links(p))}" for p in progress_lines)]
    return "\n".join(lines)


def card_body_size(card_json: dict[str, Any]) -> int:
    """Bytes of a reply request body carrying this card (what Feishu limits to 30 KB)."""
    body = {"content": json.dumps(card_json, ensure_ascii=False), "msg_type": "interactive"}
    return len(json.dumps(body, ensure_ascii=False).encode("utf-8")) + _CARD_MARGIN
