"""Keep a reasoning model's thinking out of the answer.

DeepSeek-R1-style and Qwen3 servers put the model's reasoning inside
`<think>…</think>` in the message content (or send it in a separate
`reasoning_content` field, which the clients simply never read). Users must
only see the answer: the thinking is long, unverified and may quote the
prompt. String searches only (linear, no regex on untrusted text).
"""
from __future__ import annotations

OPEN = "<think>"
CLOSE = "</think>"


def visible_text(raw: str, *, partial: bool = False) -> str:
    """`raw` without its think blocks.

    - every closed `<think>…</think>` block goes;
    - an unclosed `<think>` hides everything after it (the model is still thinking, or ran out of
      tokens while thinking: nothing after it is an answer);
    - a `</think>` with no opening tag before it ends reasoning that a chat template opened in the
      prompt (DeepSeek-R1 does this), so everything up to it goes;
    - with `partial` (a stream in progress), a trailing fragment that may grow into `<think>` is
      held back so a draft never flashes "<thi".
    """
    first_close = raw.find(CLOSE)
    first_open = raw.find(OPEN)
    if first_close >= 0 and (first_open < 0 or first_close < first_open):
        raw = raw[first_close + len(CLOSE) :]
    parts: list[str] = []
    position = 0
    while True:
        start = raw.find(OPEN, position)
        if start < 0:
            parts.append(raw[position:])
            break
        parts.append(raw[position:start])
        end = raw.find(CLOSE, start + len(OPEN))
        if end < 0:
            break  # unclosed: the rest is reasoning
        position = end + len(CLOSE)
    text = "".join(parts)
    if partial:
        text = _without_tag_prefix(text)
    return text


def _without_tag_prefix(text: str) -> str:
    """Drop a trailing '<', '<t', … '<think' that the next chunk may complete."""
    for size in range(min(len(OPEN) - 1, len(text)), 0, -1):
        if text.endswith(OPEN[:size]):
            return text[:-size]
    return text
