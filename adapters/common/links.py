"""Markdown links in model output: which targets may become links, and linear patterns to find them.

Only http(s) targets are ever emitted as links. `tg://` opens Telegram actions, `javascript:` /
`data:` / `vbscript:` run or smuggle content, `file:` reads local files, `//host` inherits a
scheme the renderer picks, `mailto:` prefills mail: none of that belongs in an answer, so such a
link keeps its label as plain text and loses its target.

Every pattern here is linear on hostile text (issue 16): a scan started at one `[` or `(` stops at
the next bracket or paren instead of running to the end of the line, so `[` * 40,000 costs one
short scan per bracket, not one full-line scan per bracket. Whitespace runs are possessive so
adjacent `\\s*` cannot trade characters back and forth.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from adapters.common.codespans import code_spans

# The target: no whitespace, no parens except one balanced pair (Wikipedia-style URLs), and
# optionally wrapped in <…>. Each part excludes the character that would start the next part.
URL = r"[^()\s<>]++(?:\([^()\s]*+\)[^()\s<>]*+)?"
TITLE = r'(?:\s++"[^"\n]*+")?'
# Text inside [...]: no brackets at all. CommonMark allows balanced nested brackets; those few
# cases are left to `defuse_targets`, which never lets an unsafe target through.
LABEL = r"[^\[\]\n]*+"

LINK = re.compile(
    rf"(?P<bang>!?)\[(?P<label>{LABEL})\]\(\s*+<?(?P<url>{URL})>?{TITLE}\s*+\)"
)

# Leftovers a Markdown renderer could still turn into a link: "](target" after nested brackets,
# <scheme:…> (and Slack-style <//host>) autolinks, and reference definitions "[x]: target".
_TARGET = re.compile(r"\]\(\s*+<?(?P<url>[^()\s<>]*+)")
_AUTOLINK = re.compile(r"<(?P<url>(?:[A-Za-z][A-Za-z0-9+.\-]{0,31}:|//)[^<>\s]*+)>")
_REFERENCE = re.compile(r"^(?P<head>\s{0,3}\[[^\[\]\n]*+\]):(?P<rest>[ \t]*+\S*+)", re.MULTILINE)
_ZWSP = "\u200b"
# Inline code is swapped for a placeholder while links are sanitized, so a link whose label holds
# code ([`x`](javascript:…)) is still seen whole, and "](" inside code is never touched.
_HOLE_OPEN, _HOLE_CLOSE = "\ue010", "\ue011"
_HOLE = re.compile("\ue010(\\d+)\ue011")
_FENCE = re.compile(r"^\s{0,3}(?:```|~~~)")
_WEB = re.compile(r"https?://[^\s<>\x00-\x1f\x7f]+", re.IGNORECASE)


def is_web_url(url: str) -> bool:
    """True for an absolute http(s) URL with a host and nothing a renderer could misread."""
    url = url.strip()
    return _WEB.fullmatch(url) is not None and len(url.split("/", 3)[2]) > 0


def link_text(label: str, url: str) -> str:
    """What an unsafe link leaves behind: its label, or nothing useful when it had none."""
    return label if label.strip() else ""


def defuse_targets(markdown: str) -> str:
    """Break what `LINK` did not match but a Markdown renderer might still link to an unsafe target.

    A zero-width space between `]` and `(`, after `<`, or before `:` ends the link syntax while
    the text reads the same. Safe http(s) targets are left alone.
    """
    markdown = _TARGET.sub(lambda m: m.group(0) if is_web_url(m.group("url")) else "]" + _ZWSP + m.group(0)[1:], markdown)
    markdown = _AUTOLINK.sub(lambda m: m.group(0) if is_web_url(m.group("url")) else "<" + _ZWSP + m.group(0)[1:], markdown)
    return _REFERENCE.sub(
        lambda m: m.group(0) if is_web_url(m.group("rest")) else m.group("head") + _ZWSP + ":" + m.group("rest"), markdown
    )


SafeLink = Callable[[re.Match[str]], str]


def _as_written(m: re.Match[str]) -> str:
    return m.group(0)


def sanitize_prose(text: str, safe: SafeLink = _as_written) -> str:
    """One piece of Markdown outside code: unsafe links → labels, leftovers defused; `safe`
    renders each http(s) link or image (default: as written)."""
    if "[" not in text and "]" not in text and "<" not in text:
        return text  # the common case, and the cheap one on many short lines

    def one(m: re.Match[str]) -> str:
        return safe(m) if is_web_url(m.group("url")) else link_text(m.group("label"), m.group("url"))

    return defuse_targets(LINK.sub(one, text))


def _sanitize_with_code(line: str, safe: SafeLink) -> str:
    codes: list[str] = []
    masked: list[str] = []
    at = 0
    for start, end in code_spans(line):
        masked += [line[at:start], f"{_HOLE_OPEN}{len(codes)}{_HOLE_CLOSE}"]
        codes.append(line[start:end])
        at = end
    masked.append(line[at:])
    sanitized = sanitize_prose("".join(masked), safe)
    return _HOLE.sub(lambda m: codes[int(m.group(1))], sanitized) if codes else sanitized


def sanitize_markdown_links(markdown: str, safe: SafeLink = _as_written) -> str:
    """Markdown passed through to a renderer we do not control (WeCom, a terminal): http(s)
    links stay (rendered by `safe`), every other link becomes its label. Code blocks and inline
    code are left exactly as written: a renderer shows them verbatim, never as links."""
    if _HOLE_OPEN in markdown or _HOLE_CLOSE in markdown:
        markdown = markdown.replace(_HOLE_OPEN, "").replace(_HOLE_CLOSE, "")  # input must not forge holes
    out: list[str] = []
    prose: list[str] = []  # consecutive prose lines without backticks, sanitized in one call
    in_fence = False

    def flush() -> None:
        if prose:
            out.append(sanitize_prose("\n".join(prose), safe))
            prose.clear()

    for line in markdown.split("\n"):
        if _FENCE.match(line):
            flush()
            in_fence = not in_fence
            out.append(line)
        elif in_fence:
            out.append(line)
        elif "`" not in line:
            prose.append(line)  # one call per run of lines: 100,000 short lines cost one pass
        else:
            flush()
            out.append(_sanitize_with_code(line, safe))
    flush()
    return "\n".join(out)
