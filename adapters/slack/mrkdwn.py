"""Markdown from the core → Slack text, with broadcast and user mentions from model output defanged.

Two targets:
- `to_mrkdwn`: Slack's own mrkdwn (section blocks, `text`). `*bold*`, `_italic_`, `~strike~`,
  `<url|label>` links, code kept verbatim; only `&`, `<`, `>` are escaped, as Slack asks.
- `defang_markdown`: standard Markdown for `markdown_text` (streaming), where Slack renders the
  Markdown itself; we only neutralise mentions.

Why defang: model output can carry `<!channel>`, `<!here>`, `<@U123>` or `<!subteam^S1>`
(from an issue body it read, or a prompt injection). Posted as is, Slack would ping a whole
channel. We rewrite them to plain text with a word joiner after the `@`, so they read the same
and notify nobody. Pure functions: golden tests in tests/test_slack_render.py.
"""
from __future__ import annotations

import re

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

_FENCE = re.compile(r"^(\s{0,3})(`{3,}|~{3,})\s*([^`\s]*)\s*$")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_QUOTE = re.compile(r"^\s{0,3}>\s?(.*)$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(\[[ xX]\]\s+)?(.*)$")
_ORDERED = re.compile(r"^(\s*)(\d{1,9})[.)]\s+(.*)$")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")

# Inline tokens that must not be touched by escaping or emphasis conversion.
_INLINE = re.compile(
    r"(?P<code>(?P<ticks>`+)(?P<code_body>.+?)(?P=ticks))"
    r"|(?P<image>!\[(?P<alt>[^\]\n]*)\]\((?P<image_url>[^)\s]+)(?:\s+\"[^\"]*\")?\))"
    r"|(?P<link>\[(?P<label>[^\]\n]+)\]\((?P<url>[^)\s]+)(?:\s+\"[^\"]*\")?\))"
    r"|(?P<autolink><(?P<auto_url>(?:https?://|mailto:)[^<>\s]+)>)"
    r"|(?P<special>" + _SPECIAL.pattern + ")"
)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_SAFE_URL = re.compile(r"^(https?://|mailto:)[^\s<>|]+$", re.IGNORECASE)


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
    """A URL fit for `<url|label>`: http(s)/mailto only, with `&` escaped; None otherwise."""
    url = url.strip()
    if not _SAFE_URL.match(url):
        return None
    return url.replace("&", "&amp;")


def link(url: str, label: str) -> str:
    """A mrkdwn link; unsafe URLs (javascript:, relative) become plain text."""
    label_text = escape(defang_bare(_SPECIAL.sub(_defanged_special, label))).replace("|", "¦")
    target = safe_url(url)
    if target is None:
        return f"{label_text} ({escape(url)})" if label_text != escape(url) else escape(url)
    return f"<{target}|{label_text}>" if label_text else f"<{target}>"


def _strip_private(text: str) -> str:
    # our placeholders use private-use characters; input must not forge them
    return text.replace("\ue000", "").replace("\ue001", "")


def inline(text: str) -> str:
    """One line of Markdown (outside code blocks) → mrkdwn."""
    tokens: list[str] = []

    def keep(rendered: str) -> str:
        tokens.append(rendered)
        return f"\ue000{len(tokens) - 1}\ue001"

    def token(match: re.Match[str]) -> str:
        if match.group("code"):
            body = match.group("code_body").strip() or match.group("code_body")
            return keep("`" + escape(body.replace("`", "'")) + "`")
        if match.group("image"):
            return keep(link(match.group("image_url"), match.group("alt") or match.group("image_url")))
        if match.group("link"):
            label = match.group("label").replace("**", "").replace("`", "")
            return keep(link(match.group("url"), label))
        if match.group("autolink"):
            return keep(link(match.group("auto_url"), ""))
        return keep(escape(_defanged_special(match)))

    text = _INLINE.sub(token, _strip_private(text))
    text = escape(defang_bare(text))
    text = _BOLD.sub(lambda m: "\ue002" + m.group(1) + "\ue002", text)
    text = _ITALIC.sub(r"_\1_", text)
    text = _STRIKE.sub(r"~\1~", text)
    text = text.replace("\ue002", "*")
    return _PLACEHOLDER.sub(lambda m: tokens[int(m.group(1))], text)


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


def _line(line: str) -> str:
    heading = _HEADING.match(line)
    if heading:
        title = heading.group(2).replace("**", "").strip()
        return f"*{inline(title)}*" if title else ""
    if _RULE.match(line):
        return "──────────"
    quote = _QUOTE.match(line)
    if quote:
        # the quote marker must stay a raw ">" for Slack to draw the bar
        return "> " + _line(quote.group(1)) if quote.group(1).strip() else ">"
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
        if fence is None and _TABLE_ROW.match(line):
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
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = defang_bare(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"
