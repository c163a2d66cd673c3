"""Markdown (the core's only format) → Telegram HTML.

Pure functions, golden-tested. Telegram's HTML mode supports b, i, s, u, a, code, pre and
blockquote, and nothing else: headings become bold lines, list markers become bullets, tables
become preformatted text. Every piece of text outside a tag is escaped (`<`, `>`, `&`), so model
output can never inject markup, and `@name` mentions are defanged so an answer that quotes a
GitHub handle never pings a Telegram user with the same name.

`render_blocks` returns balanced HTML units (one per line, or one per code block / quote), which
`split.split_html` packs into messages of at most 4,096 characters.
"""
from __future__ import annotations

import html
import re
from collections.abc import Iterable

from adapters.common.codespans import code_spans
from adapters.common.confidence import answer_body
from adapters.common.links import TITLE, URL, is_web_url
from adapters.common.sources import sources_title
from core.messages import Reply, Source
from core.untrusted_text import plain_line

# A word joiner after "@" stops Telegram from parsing a mention entity and is invisible.
_MENTION = re.compile(r"(?<![\w.])@(?=[A-Za-z0-9_])")
# Linear on hostile model output (issue 16): possessive whitespace runs, and every inline body
# stops at the next delimiter of its own kind instead of scanning to the end of the line.
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*+([\w+#.-]*+)[^\n]*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s++(.*)$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^(\s*)(\d{1,3})[.)]\s+(.*)$")
_QUOTE = re.compile(r"^\s{0,3}>\s?(.*)$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE = re.compile(r"^\s*\|.*\|\s*$")
_BLOCK_MARKERS = frozenset("`~>")  # what a fence or a quote starts with (tables need a "|")
_LINE_MARKERS = frozenset("#-*+_")  # headings, rules, bullets (numbered items start with a digit)

# Inline patterns, tried in this order at each position. Inner text is rendered recursively; as
# no body can hold its own delimiter, the recursion is only as deep as there are delimiter kinds.
# Code spans come from adapters.common.codespans (linear, CommonMark run matching).
_LINK = re.compile(rf"\[([^\[\]\n]++)\]\(\s*+<?({URL})>?{TITLE}\s*+\)")
_AUTOLINK = re.compile(r"<(https?://[^\s<>]++)>")
_CANDIDATE = re.compile(r"[`\[<*_~]")
# What every token needs somewhere in the line; a line without any is only escaped, which keeps
# 100,000 short hostile lines (or plain prose) cheap.
_MAYBE_TOKEN = re.compile(r"`|\]\(|<https?://|[*_~]")
_BOLD = re.compile(r"\*\*(?=\S)((?:[^*]|\*(?!\*))+?)(?<=\S)\*\*|__(?=\S)((?:[^_]|_(?!_))+?)(?<=\S)__(?!\w)")
_STRIKE = re.compile(r"~~(?=\S)((?:[^~]|~(?!~))+?)(?<=\S)~~")
# `_` inside a word (snake_case) may sit in an italic body; any other `_` ends the scan.
_ITALIC = re.compile(
    r"\*(?=[^\s*])([^*]+?)(?<=[^\s*])\*(?!\w)"
    r"|_(?=[^\s_])((?:[^_]|(?<=[^\W_])_(?=[^\W_]))+?)(?<=[^\s_])_(?!\w)"
)

# Lines longer than this are escaped without inline formatting: the regexes above backtrack,
# and a line this long is a paste (a log, a traceback), not prose with emphasis.
_INLINE_MAX = 2_000


def escape(text: str) -> str:
    """Escape text for Telegram HTML and defang mentions. Use for everything outside code."""
    return _MENTION.sub("@\u2060", html.escape(text, quote=False))


def escape_code(text: str) -> str:
    return html.escape(text, quote=False)


def inline(text: str) -> str:
    """One line of Markdown inline syntax → HTML (balanced tags, escaped text)."""
    if len(text) > _INLINE_MAX or _MAYBE_TOKEN.search(text) is None:
        return escape(text)  # too long to format, or nothing in it could become a tag
    out: list[str] = []
    spans = dict(code_spans(text))
    plain_start = 0
    first = _CANDIDATE.search(text)
    i = first.start() if first else len(text)
    while i < len(text):
        ch = text[i]
        rendered: str | None = None
        end = i
        if ch == "`":
            if i in spans:
                end = spans[i]
                run = len(text[i:end]) - len(text[i:end].lstrip("`"))
                body = text[i + run : end - run]
                rendered = f"<code>{escape_code(body.strip() or body)}</code>"
        elif ch == "[":
            m = _LINK.match(text, i)
            if m:
                rendered, end = _link(m.group(1), m.group(2)), m.end()
        elif ch == "<":
            m = _AUTOLINK.match(text, i)
            if m:
                rendered, end = _link(m.group(1), m.group(1)), m.end()
        elif ch in "*_" and (i == 0 or not text[i - 1].isalnum()):  # 2*3*4 and snake_case stay literal
            # bold needs the delimiter doubled, italic needs it followed by text: try only what can match
            after = text[i + 1 : i + 2]
            m = _BOLD.match(text, i) if after == ch else None
            if m:
                rendered, end = f"<b>{inline(m.group(1) or m.group(2))}</b>", m.end()
            elif after and after != ch and not after.isspace():
                m = _ITALIC.match(text, i)
                if m:
                    rendered, end = f"<i>{inline(m.group(1) or m.group(2))}</i>", m.end()
        elif ch == "~":
            m = _STRIKE.match(text, i)
            if m:
                rendered, end = f"<s>{inline(m.group(1))}</s>", m.end()
        if rendered is None:
            # jump to the next character that can start a token instead of stepping one by one
            nxt = _CANDIDATE.search(text, i + 1)
            i = nxt.start() if nxt else len(text)
            continue
        out.append(escape(text[plain_start:i]))
        out.append(rendered)
        i = plain_start = end
    out.append(escape(text[plain_start:]))
    return "".join(out)


def _link(label: str, url: str) -> str:
    if not is_web_url(url):
        # tg://, javascript:, mailto:, relative…: never a link (issue 16); the label stays as text.
        return inline(label)
    return f'<a href="{html.escape(url, quote=True)}">{inline(label)}</a>'


def render_blocks(markdown: str) -> list[str]:
    """Markdown → balanced HTML units, in order. Units are joined with a newline to form a message."""
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    units: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        first = line.lstrip()[:1]
        if first not in _BLOCK_MARKERS and "|" not in line:
            units.append(_line(line))  # plain prose (most lines): no block pattern can match
            i += 1
            continue
        fence = _FENCE.match(line)
        if fence:
            marker, language = fence.group(1), fence.group(2)
            body: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(marker):
                body.append(lines[i])
                i += 1
            i += 1  # the closing fence (or the end of an unclosed block)
            units.append(code_block("\n".join(body), language))
            continue
        if _TABLE.match(line):
            rows: list[str] = []
            while i < len(lines) and _TABLE.match(lines[i]):
                rows.append(lines[i].strip())
                i += 1
            units.append(code_block("\n".join(rows), ""))
            continue
        if _QUOTE.match(line):
            quoted: list[str] = []
            while i < len(lines) and (m := _QUOTE.match(lines[i])):
                quoted.append(inline(m.group(1)))
                i += 1
            units.append("<blockquote>" + "\n".join(quoted) + "</blockquote>")
            continue
        units.append(_line(line))
        i += 1
    return _trim_blank(units)


def _line(line: str) -> str:
    if not line.strip():
        return ""
    first = line.lstrip()[:1]
    if first not in _LINE_MARKERS and not first.isdigit():
        return inline(line.rstrip())
    if m := _HEADING.match(line):
        # closing #s dropped as `(.*?)\s*#*\s*$` did, without its backtracking
        return f"<b>{inline(m.group(1).rstrip().rstrip('#').rstrip())}</b>"
    if _RULE.match(line):
        return "──────────"
    if m := _BULLET.match(line):
        return f"{_indent(m.group(1))}• {inline(m.group(2))}"
    if m := _NUMBERED.match(line):
        return f"{_indent(m.group(1))}{m.group(2)}. {inline(m.group(3))}"
    return inline(line.rstrip())


def _indent(spaces: str) -> str:
    # Telegram trims nothing inside a message, but a tab renders too wide; two spaces per level.
    depth = len(spaces.expandtabs(4)) // 2
    return "  " * min(depth, 6)


def code_block(code: str, language: str = "") -> str:
    body = escape_code(code)
    if language:
        return f'<pre><code class="language-{html.escape(language, quote=True)}">{body}</code></pre>'
    return f"<pre>{body}</pre>"


def _trim_blank(units: list[str]) -> list[str]:
    # Collapse runs of blank units: one blank line separates paragraphs, more is noise.
    out: list[str] = []
    for unit in units:
        if unit == "" and (not out or out[-1] == ""):
            continue
        out.append(unit)
    while out and out[-1] == "":
        out.pop()
    return out


def sources_markdown(sources: Iterable[Source], language: str) -> str:
    items = [s for s in sources if s.url or s.title]
    if not items:
        return ""
    lines = [f"**{sources_title(language)}**"]
    for n, source in enumerate(items, start=1):
        title = plain_line(source.title) or source.url  # an issue's title is anyone's: never markup
        lines.append(f"{n}. [{title}]({source.url})" if source.url else f"{n}. {title}")
    return "\n".join(lines)


def reply_markdown(reply: Reply) -> str:
    """The whole reply as Markdown: the core's text, then its sources."""
    parts = [answer_body(reply).strip()]
    # research answers already end with their verified sources: never list them twice
    sources = sources_markdown(reply.sources, reply.language)
    if sources:
        parts.append(sources)
    return "\n\n".join(p for p in parts if p)


def progress_html(text: str) -> str:
    return "⏳ " + inline(text.strip())
