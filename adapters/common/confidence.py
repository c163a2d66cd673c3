"""A reply's body as every platform shows it: the core's Markdown, then the confidence line.

`Reply.text` never contains the confidence (the core keeps it apart, in `Reply.confidence`); each
renderer takes the body from here, so the line is worded once (core/confidence.py) and placed the
same way everywhere: under the answer, above the sources.
"""
from __future__ import annotations

from core.confidence import confidence_line
from core.messages import Reply


def answer_body(reply: Reply) -> str:
    """`reply.text` with its confidence line under it (a reply without a level: the text as is)."""
    if reply.confidence is None:
        return reply.text
    return f"{reply.text.rstrip()}\n\n{confidence_line(reply.confidence, reply.language)}"
