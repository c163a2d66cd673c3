"""Markdown from the core → the Markdown a WeCom AI-bot stream bubble renders (pure).

WeCom renders headings, bold, links, lists, quotes and code in a stream's
`content`; it does not render images from arbitrary URLs or raw HTML, and
`@all`-style mentions or `<@userid>` in Markdown could notify people, so model
output is defanged. Lengths are counted in UTF-8 bytes: `stream.content` is
at most 20,480 bytes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from adapters.common.confidence import answer_body
from adapters.common.links import is_web_url, sanitize_markdown_links
from adapters.common.sources import sources_title
from adapters.common.split import split_markdown
from core.messages import Language, Progress, Reply, ReplyKind
from core.untrusted_text import plain_line

STREAM_LIMIT_BYTES = 20_480
_ZWSP = "\u200b"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# No \b after the CJK words: "@所有人请看" has no word boundary but still notifies everyone.
_MENTION_ALL = re.compile(r"@((?:all|everyone|here|channel)\b|所有人|全体成员)", re.IGNORECASE)

_TEXT: dict[str, dict[Language, str]] = {
    "opening": {"zh": "🔎 正在研究…", "en": "🔎 Researching…"},
    "late": {
        "zh": "⏳ 研究仍在进行，超出了本条回复的时限；完成后结果会单独发到这里。",
        "en": "⏳ Still working: this took longer than a reply bubble can stay open; "
        "the result will be posted here as a separate message.",
    },
    "continued": {"zh": "（未完，见下一条）", "en": "(continued in the next message)"},
    "truncated": {"zh": "（回答过长，已截断）", "en": "(answer too long, truncated)"},
    "choose": {"zh": "回复编号或点击按钮选择。", "en": "Reply with the number, or press a button."},
    "text_only": {
        "zh": "目前我只能读文字消息，请用文字描述你的问题。",
        "en": "I can only read text messages for now; please describe your question in text.",
    },
    "expired": {"zh": "这条回复已过期，请重新提问。", "en": "This reply has expired; please ask again."},
    "welcome": {
        "zh": "你好！我可以回答 vLLM、vllm-ascend、SGLang、MindIE 和 msModelSlim 在昇腾上推理部署的问题。"
        "在群里 @我 提问即可。",
        "en": "Hi! I answer questions about vLLM, vllm-ascend, SGLang, MindIE and msModelSlim for "
        "inference on Ascend NPUs. Mention me in a group or message me here.",
    },
    "chosen": {"zh": "已选择：{label}，正在研究…", "en": "Selected: {label}. Researching…"},
    "card_expired": {"zh": "这个选项已过期，请重新提问。", "en": "This choice has expired; please ask again."},
    "card_title": {"zh": "请选择项目", "en": "Which project do you mean?"},
    "not_allowed": {"zh": "这个机器人在这里未开放。", "en": "This bot is not enabled here."},
    "empty": {"zh": "请在 @我 之后写下你的问题。", "en": "Please write your question after mentioning me."},
}


def text(name: str, language: Language, **kwargs: str) -> str:
    return _TEXT[name][language].format(**kwargs)


def byte_len(value: str) -> int:
    return len(value.encode("utf-8"))


def defang(value: str) -> str:
    value = _MENTION_ALL.sub(lambda m: "@" + _ZWSP + m.group(1), value)
    return value.replace("<@", "<" + _ZWSP + "@")


def _image_as_link(m: re.Match[str]) -> str:
    # WeCom does not load images from arbitrary URLs: a link to the image instead
    if not m.group("bang"):
        return m.group(0)
    return f"[{m.group('label') or 'image'}]({m.group('url')})"


def to_wecom_markdown(markdown: str) -> str:
    out = markdown.replace("\r\n", "\n").replace("\r", "\n")
    out = _CONTROL.sub("", out)
    # links and images to anything but http(s) keep only their label (issue 16)
    out = sanitize_markdown_links(out, _image_as_link)
    return defang(out).strip()


def _link(title: str, url: str) -> str:
    title = title.replace("[", "(").replace("]", ")").strip() or url
    target = url.replace("(", "%28").replace(")", "%29").replace(" ", "%20")
    return f"[{title}]({target})" if is_web_url(target) else title


def render_reply(reply: Reply) -> str:
    """The whole reply as one Markdown text: body, numbered options, sources."""
    parts = [to_wecom_markdown(answer_body(reply))]
    if reply.kind is ReplyKind.CLARIFY and reply.options:
        numbered = [f"{i}. {defang(o.label)}" for i, o in enumerate(reply.options, 1)]
        if not all(line in parts[0] for line in numbered):  # the core usually lists them already
            parts.append("\n".join(numbered) + "\n\n" + text("choose", reply.language))
    if reply.sources:
        # an issue's title is anyone's: plain text, never a link, emphasis or mention
        lines = [f"{i}. {_link(defang(plain_line(s.title)), s.url)}" for i, s in enumerate(reply.sources, 1)]
        parts.append(f"**{sources_title(reply.language)}**\n" + "\n".join(lines))
    return "\n\n".join(p for p in parts if p)


def render_progress(history: list[Progress], language: Language, limit: int = 2_000) -> str:
    """The bubble while working: the opening line and the latest steps, newest last."""
    head = text("opening", language)
    lines: list[str] = []
    for item in reversed(history):
        line = "> " + to_wecom_markdown(item.text).replace("\n", " ")[:200]
        if byte_len(head) + sum(byte_len(x) + 1 for x in lines) + byte_len(line) + 2 > limit:
            break
        lines.insert(0, line)
    return head if not lines else head + "\n\n" + "\n".join(lines)


# --- splitting ---------------------------------------------------------------------------


def split_utf8(markdown: str, limit: int = STREAM_LIMIT_BYTES) -> list[str]:
    """Chunks of at most `limit` UTF-8 bytes, cut at paragraphs or lines, code fences closed and
    re-opened across cuts (the shared splitter, with WeCom's byte cost)."""
    return split_markdown(markdown, limit, byte_len)


@dataclass(frozen=True)
class Delivery:
    """A reply laid out for WeCom: the text for the stream bubble and what follows it."""

    first: str
    rest: tuple[str, ...]


def lay_out(markdown: str, language: Language, limit: int = STREAM_LIMIT_BYTES) -> Delivery:
    """The first chunk goes into the stream bubble (with a 'continued' note when more follows)."""
    if byte_len(markdown) <= limit:
        return Delivery(markdown, ())
    note = "\n\n" + text("continued", language)
    chunks = split_utf8(markdown, limit - byte_len(note))
    return Delivery(chunks[0] + note, tuple(chunks[1:]))


def join_for_one_message(chunks: tuple[str, ...], language: Language, limit: int = STREAM_LIMIT_BYTES) -> str:
    """Several chunks squeezed into one message (a response_url can be used once): cut with a note."""
    whole = "\n\n".join(chunks)
    if byte_len(whole) <= limit:
        return whole
    note = "\n\n" + text("truncated", language)
    return split_utf8(whole, limit - byte_len(note))[0] + note
