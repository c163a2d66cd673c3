"""What a piece of text costs inside a Feishu request body.

Feishu limits the *request body* (30 KB for cards, 150 KB for text), and the
card travels as a JSON string inside JSON, so every quote, backslash and newline
is escaped twice. The fence-aware cutting itself is shared: adapters.common.split.
"""
from __future__ import annotations

import json

from adapters.common.split import split_markdown

__all__ = ["double_json_cost", "split_markdown"]


def double_json_cost(text: str) -> int:
    """Bytes `text` adds once dumped into a JSON string that is itself dumped into JSON."""
    once = json.dumps(text, ensure_ascii=False)[1:-1]
    return len(json.dumps(once, ensure_ascii=False).encode("utf-8")) - 2
