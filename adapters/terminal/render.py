"""Reply → terminal text (Markdown reads fine as is) and → the `ask --json` object.

Model output can carry terminal control sequences (copied from an issue body, a log, or a prompt
injection): OSC 8 hides a link target behind innocent text, OSC 52 writes the user's clipboard,
CSI moves the cursor to overwrite what was printed, and C1 bytes act as 8-bit CSI on some
terminals. `strip_controls` removes all of them before anything is printed (issue 16).
"""
from __future__ import annotations

import re
from typing import Any

from adapters.common.confidence import answer_body
from adapters.common.links import is_web_url, sanitize_markdown_links
from adapters.common.sources import sources_title
from core.messages import Reply
from core.untrusted_text import plain_line

# Linear: each part is possessive and a string body stops at the next ESC or string opener, so
# every opener starts at most one scan and no scan runs past the next opener.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*+[ -/]*+[@-~]"  # CSI: cursor moves, colours, erase
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x90\x98\x9c-\x9f]*+(?:\x07|\x1b\\|\x9c)"  # OSC/DCS/SOS/PM/APC
    r"|\x1b[ -/]*+[0-~]?"  # any other escape (charset, keypad, an unterminated string's opener, a bare ESC)
)
# C0 except tab and newline, DEL, and C1: whatever an escape pattern above did not take.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """`text` with every ANSI/OSC escape sequence and control character removed (\\n and \\t stay)."""
    text = text.replace("\r\n", "\n")
    if not _CONTROLS.search(text):
        return text
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def render_text(reply: Reply) -> str:
    body = sanitize_markdown_links(strip_controls(answer_body(reply))).rstrip()
    if reply.sources:
        # escape sequences out first, then plain text: an issue's title is anyone's, never markup
        lines = [_source_line(plain_line(strip_controls(s.title)), strip_controls(s.url)) for s in reply.sources]
        body = f"{body}\n\n**{sources_title(reply.language)}**\n" + "\n".join(lines)
    return body


def _source_line(title: str, url: str) -> str:
    # a source that is not an http(s) URL keeps its title only, like a link in the text
    return f"- [{title}]({url})" if is_web_url(url) else f"- {title or url}"


def render_json(reply: Reply) -> dict[str, Any]:
    data = reply.to_dict()
    # `options` in the evaluation format are objects with repo and label only
    data["options"] = [{"repo": o.repo, "label": o.label} for o in reply.options]
    return data
