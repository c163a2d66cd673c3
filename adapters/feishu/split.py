"""What a piece of text costs inside a Feishu request body.

Feishu limits the *request body* (30 KB for cards, 150 KB for text), and the
card travels as a JSON string inside JSON, so every quote, backslash and newline
is escaped twice. The fence-aware cutting itself is shared: adapters.common.split.
"""
from __future__ import annotations

from json.encoder import encode_basestring  # what json.dumps(str, ensure_ascii=False) calls

from adapters.common.split import split_markdown

__all__ = ["double_json_cost", "split_markdown"]


def double_json_cost(text: str) -> int:
    """Bytes `text` adds once dumped into a JSON string that is itself dumped into JSON."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return len(text)  # nothing JSON escapes: one byte per character, twice encoded or not
    # encode_basestring directly: the same bytes as json.dumps, without its per-call setup, which
    # dominated the cost of splitting an answer of many short lines
    once = encode_basestring(text)[1:-1]
    return len(encode_basestring(once).encode("utf-8")) - 2
