"""Markdown from the core → Slack text, with broadcast and user mentions from model output defanged.

Two targets:
- `to_mrkdwn`: Slack's own mrkdwn (section blocks, `text`). `*bold*`, `_italic_`, `~strike~`,
  `<url|label>` links, code kept verbatim; only `&`, `<`, `>` are escaped, as Slack asks.
- `defang_markdown`: standard Markdown for `markdown_text` (streaming), where Slack renders the
  Markdown itself; we only neutralise mentions.

Why defang: model output can carry `<!channel>`, `<!here>`, `<@U123>` or `<!subteam^S1>`
(from an issue body it read, or a prompt injection). Posted as is, Slack would ping a whole
channel. We rewrite them to plain text with a word joiner after the `@`, so they read the same
and notify nobody. Pure functions: golden tests in tests/adapters/slack/test_render.py.
"""
from __future__ import annotations

import re

from adapters.common.codespans import split_code
from adapters.common.links import LABEL, TITLE, URL, is_web_url

WORD_JOINER = "\u2060"  # invisible, stops Slack from reading "@here" / "@channel" as a mention

# Slack's special syntax: <!channel>, <!here|here>, <!everyone>, <!subteam^S123|@team>,
# <@U123>, <@W123|name>, <#C123|general>. Anything else in angle brackets is ordinary text.
_SPECIAL = re.compile(
    r"<(?:!(?P<broadcast>channel|here|everyone|group)(?:\|[^<>\n]*)?"
    r"|!subteam\^(?P<team>[A-Za-z0-9]+)(?:\|(?P<team_label>[^<>\n]*))?"
    r"|@(?P<user>[UWB][A-Za-z0-9]+)(?:\|(?P<user_label>[^<>\n]*))?"
    r"|#(?P<chan>C[A-Za-z0-9]+)(?:\|(?P<chan_label>[^<>\n]*))?)>"
)
_BARE_BROADCAST = re.compile(r"(?i)(?<![\w@])@(channel|here|everyone)\b")
_PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")

# Every pattern below is linear on hostile model output (issue 16): whitespace runs are possessive
# (`\s*+`) so two of them cannot trade characters back and forth, and a body scan stops at the
# next delimiter of its own kind instead of running to the end of the line.
_FENCE = re.compile(r"^(\s{0,3})(`{3,}|~{3,})\s*+([^`\s]*+)\s*+$")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s++(.*)$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_QUOTES = re.compile(r"(?:\s{0,3}>\s?)++")  # all leading quote markers at once
_BULLET = re.compile(r"^(\s*)[-*+]\s+(\[[ xX]\]\s+)?(.*)$")
_ORDERED = re.compile(r"^(\s*)(\d{1,9})[.)]\s+(.*)$")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_SEPARATOR = re.compile(r"^\s*+\|?\s*+:?-{2,}:?\s*+(?:\|\s*+:?-{2,}:?\s*+)*\|?\s*+$")

# Inline tokens that must not be touched by escaping or emphasis conversion. Code spans are
# found first by adapters.common.codespans (linear; a regex for them is not).
_INLINE = re.compile(
    rf"(?P<image>!\[(?P<alt>{LABEL})\]\(\s*+<?(?P<image_url>{URL})>?{TITLE}\s*+\))"
    rf"|(?P<link>\[(?P<label>{LABEL})\]\(\s*+<?(?P<url>{URL})>?{TITLE}\s*+\))"
    r"|(?P<autolink><(?P<auto_url>(?:https?://|mailto:)[^<>\s]++)>)"
    r"|(?P<special>" + _SPECIAL.pattern + ")"
)
_BOLD = re.compile(r"\*\*(?=\S)((?:[^*]|\*(?!\*))+?)(?<=\S)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*]+?)(?<=[^\s*])\*(?![\w*])")
_STRIKE = re.compile(r"~~(?=\S)((?:[^~]|~(?!~))+?)(?<=\S)~~")
_PLAIN_LINK = re.compile(r"\[([^\[\]]*+)\]\([^()]*+\)")

# Longer lines are escaped without inline formatting, as the Telegram renderer does: a line this
# long is a paste (a log, a dump), not prose with emphasis, and it bounds the work per line.
INLINE_MAX = 4_000
_TOKEN_MARKER = re.compile(r"`|\]\(|<|\*|~~|@")  # every token, emphasis or mention needs one


def escape(text: str) -> str:
    """Slack's three control characters, and nothing else."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _defanged_special(match: re.Match[str]) -> str:
    if match.group("broadcast"):
        return "@" + WORD_JOINER + match.group("broadcast")
    if match.group("team"):
        label = (match.group("team_label") or "").lstrip("@") or match.group("team")
        return "@" + WORD_JOINER + label
    if match.group("user"):
        label = (match.group("user_label") or "").lstrip("@") or match.group("user")
        return "@" + WORD_JOINER + label
    return "#" + ((match.group("chan_label") or "").lstrip("#") or match.group("chan"))


def defang_bare(text: str) -> str:
    """`@here`, `@channel`, `@everyone` typed as words (Slack may parse them when not verbatim)."""
    return _BARE_BROADCAST.sub(lambda m: "@" + WORD_JOINER + m.group(1), text)


def defang_markdown(markdown: str) -> str:
    """Markdown for `markdown_text`: mentions neutralised everywhere, code blocks included.

    Slack's Markdown renderer is not documented to ignore mention syntax inside code, so we
    play safe and rewrite there too (the text reads the same, it only cannot ping).
    """
    return defang_bare(_SPECIAL.sub(_defanged_special, _strip_private(markdown)))


def safe_url(url: str) -> str | None:
    """A URL fit for `<url|label>`: http(s) only, `&` escaped and `|` encoded; None otherwise."""
    url = url.strip()
    if not is_web_url(url):
        return None
    return url.replace("&", "&amp;").replace("|", "%7C")


def link(url: str, label: str) -> str:
    """A mrkdwn link; any other target (javascript:, tg://, mailto:, relative) leaves the label only."""
    label_text = escape(defang_bare(_SPECIAL.sub(_defanged_special, label))).replace("|", "¦")
    target = safe_url(url)
    if target is None:
        return label_text
    return f"<{target}|{label_text}>" if label_text else f"<{target}>"


def _strip_private(text: str) -> str:
    # our placeholders use private-use characters; input must not forge them
    return text.replace("\ue000", "").replace("\ue001", "")


def _token(match: re.Match[str], codes: dict[str, str]) -> str:
    """A matched image, link, autolink or Slack special, rendered (`codes`: placeholder → code text)."""
    if match.group("image"):
        url = match.group("image_url")
        return link(url, match.group("alt") or (url if is_web_url(url) else ""))
    if match.group("link"):
        label = _PLACEHOLDER.sub(lambda m: codes.get(m.group(0), ""), match.group("label"))
        return link(match.group("url"), label.replace("**", "").replace("`", ""))
    if match.group("autolink"):
        url = match.group("auto_url")
        return link(url, "" if is_web_url(url) else url)
    return escape(_defanged_special(match))


def inline(text: str) -> str:
    """One line of Markdown (outside code blocks) → mrkdwn."""
    if "\ue000" in text or "\ue001" in text:
        text = _strip_private(text)
    if len(text) > INLINE_MAX:
        return escape(defang_bare(_SPECIAL.sub(_defanged_special, text)))
    if _TOKEN_MARKER.search(text) is None:
        return escape(text)  # nothing in it could become a token: plain prose, or hostile filler
    if "`" not in text and "[" not in text and "<" not in text:
        return _emphasis(escape(defang_bare(text) if "@" in text else text))  # no tokens to keep
    tokens: list[str] = []

    def keep(rendered: str) -> str:
        tokens.append(rendered)
        return f"\ue000{len(tokens) - 1}\ue001"

    codes: dict[str, str] = {}  # a code span's placeholder → its text, for link labels
    parts: list[str] = []
    for is_code, piece in split_code(text):
        if not is_code:
            parts.append(piece)
            continue
        run = len(piece) - len(piece.lstrip("`"))
        body = piece[run:-run]
        body = body.strip() or body
        placeholder = keep("`" + escape(body.replace("`", "'")) + "`")
        codes[placeholder] = body
        parts.append(placeholder)
    text = "".join(parts)
    # each pattern only where its delimiter occurs: most lines need none of them
    if "[" in text or "<" in text:
        text = _INLINE.sub(lambda m: keep(_token(m, codes)), text)
    text = _emphasis(escape(defang_bare(text) if "@" in text else text))
    return _PLACEHOLDER.sub(lambda m: tokens[int(m.group(1))], text) if tokens else text


def _emphasis(text: str) -> str:
    """**bold** → *bold*, *italic* → _italic_, ~~strike~~ → ~strike~ (each only where it can occur)."""
    if "*" in text:
        text = _BOLD.sub(lambda m: "\ue002" + m.group(1) + "\ue002", text)
        text = _ITALIC.sub(r"_\1_", text)
        text = text.replace("\ue002", "*")
    if "~~" in text:
        text = _STRIKE.sub(r"~\1~", text)
    return text


def _table(rows: list[str]) -> list[str]:
    """A Markdown table → an aligned monospace block (mrkdwn has no tables)."""
    cells = [
        [escape(defang_bare(c.strip())) for c in row.strip().strip("|").split("|")]
        for row in rows
        if not _TABLE_SEPARATOR.match(row)
    ]
    width = max(len(r) for r in cells)
    cells = [r + [""] * (width - len(r)) for r in cells]
    sizes = [max(len(r[i]) for r in cells) for i in range(width)]
    lines = ["  ".join(c.ljust(sizes[i]) for i, c in enumerate(r)).rstrip() for r in cells]
    return ["```", *lines, "```"]


def _heading_title(body: str) -> str:
    # what `(.*?)\s*#*\s*$` kept, without its backtracking: closing #s and spaces dropped
    return body.rstrip().rstrip("#").rstrip()


_LINE_MARKERS = frozenset("#>-*+_0123456789")  # what a heading, quote, rule or list starts with


def _plain_prose(line: str) -> bool:
    first = line.lstrip()[:1]
    return first not in _LINE_MARKERS and not first.isdigit()


def _line(line: str) -> str:
    if _plain_prose(line):
        return inline(line)  # plain prose: skip the line-level patterns
    quotes = _QUOTES.match(line)
    if quotes:
        # one match for all markers, not recursion or a slice per marker: "> " * 100,000 is one line
        depth, line = quotes.group(0).count(">"), line[quotes.end() :]
        # the quote marker must stay a raw ">" for Slack to draw the bar
        return "> " * depth + _unquoted_line(line) if line.strip() else "> " * (depth - 1) + ">"
    return _unquoted_line(line)


def _unquoted_line(line: str) -> str:
    if _plain_prose(line):
        return inline(line)
    heading = _HEADING.match(line)
    if heading:
        title = _heading_title(heading.group(2)).replace("**", "").strip()
        return f"*{inline(title)}*" if title else ""
    if _RULE.match(line):
        return "──────────"
    bullet = _BULLET.match(line)
    if bullet:
        indent, task, rest = bullet.groups()
        box = ("☑ " if task.strip()[1] in "xX" else "☐ ") if task else ""
        return f"{'    ' * (len(indent.expandtabs(4)) // 2)}• {box}{inline(rest)}"
    ordered = _ORDERED.match(line)
    if ordered:
        indent, number, rest = ordered.groups()
        return f"{'    ' * (len(indent.expandtabs(4)) // 2)}{number}. {inline(rest)}"
    return inline(line)


def to_mrkdwn(markdown: str) -> str:
    """Markdown (CommonMark-ish, as the core writes it) → Slack mrkdwn."""
    out: list[str] = []
    fence: str | None = None  # the opening marker while inside a code block
    table: list[str] = []
    lines = _strip_private(markdown).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for line in lines:
        if fence is None and "|" in line and _TABLE_ROW.match(line):
            table.append(line)
            continue
        if table:
            out.extend(_table(table) if len(table) > 1 else [_line(table[0])])
            table = []
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(2)
            out.append("```")  # mrkdwn has no language tag; it would show as code text
            continue
        if fence is not None:
            if match and match.group(2)[0] == fence[0] and len(match.group(2)) >= len(fence) and not match.group(3):
                fence = None
                out.append("```")
            else:
                # Inside code: escaping alone makes <!channel> inert and keeps the code exact
                out.append(escape(line))
            continue
        out.append(_line(line))
    if table:
        out.extend(_table(table) if len(table) > 1 else [_line(table[0])])
    if fence is not None:
        out.append("```")  # an unclosed block would swallow the rest of the message
    return "\n".join(out).strip("\n")


def plain(markdown: str, limit: int) -> str:
    """A one-line plain text (status lines, button labels): no markup, no mentions, bounded."""
    text = _SPECIAL.sub(_defanged_special, markdown)
    text = re.sub(r"[*_`~]+", "", text)
    text = _PLAIN_LINK.sub(r"\1", text)
    text = defang_bare(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"
