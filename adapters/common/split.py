"""Split Markdown into chunks under a budget without breaking code fences.

Every platform limits a message differently (Slack counts characters, Feishu
the bytes of a doubly JSON-encoded card, WeCom UTF-8 bytes), so callers pass
`cost`, what one piece of text adds to the message; this module only decides
where to cut. A fence open at a cut is closed and re-opened in the next chunk.
"""
from __future__ import annotations

import re
from typing import Callable

Cost = Callable[[str], int]

_FENCE = re.compile(r"^\s{0,3}(```+|~~~+)\s*([\w+#.-]*)")


def _hard_split(line: str, budget: int, cost: Cost) -> list[str]:
    """Cut one over-long line by characters (never inside a UTF-8 sequence: we cut a str)."""
    pieces: list[str] = []
    start = 0
    while start < len(line):
        # every cost we use (characters, UTF-8 bytes, JSON-escaped bytes) is at least one per
        # character, so a piece never holds more than `budget` characters: searching past that
        # made each cut cost the whole rest of the line
        lo, hi = start + 1, min(len(line), start + budget)
        while lo < hi:  # the longest prefix that fits
            mid = (lo + hi + 1) // 2
            if cost(line[start:mid]) <= budget:
                lo = mid
            else:
                hi = mid - 1
        pieces.append(line[start:lo])
        start = lo
    return pieces


def _fence_after(fence: tuple[str, str] | None, line: str) -> tuple[str, str] | None:
    m = _FENCE.match(line)
    if not m:
        return fence
    if fence is None:
        return (m.group(1), m.group(2))
    if m.group(1)[0] == fence[0][0] and len(m.group(1)) >= len(fence[0]) and not m.group(2):
        return None
    return fence


def split_markdown(text: str, budget: int, cost: Cost = len) -> list[str]:
    """Chunks whose `cost` stays within `budget`. A fence open at a cut is closed and re-opened."""
    if cost(text) <= budget:
        return [text]
    newline = cost("\n")
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    fence: tuple[str, str] | None = None  # (marker, info string) of the open code fence
    last_break = -1  # index in `current` just after a blank line outside any fence

    def closing(f: tuple[str, str] | None) -> int:
        return cost(f[0]) + newline if f else 0

    def flush(upto: int | None = None) -> None:
        nonlocal current, used, last_break
        if upto is not None:  # cut at a paragraph break (never inside a fence); carry the rest over
            chunks.append("\n".join(current[:upto]).strip("\n"))
            current = current[upto:]
        else:
            chunks.append("\n".join([*current, fence[0]] if fence else current).strip("\n"))
            current = [fence[0] + fence[1]] if fence else []
        used = sum(cost(line) + newline for line in current)
        last_break = -1

    def has_content() -> bool:
        # anything besides a re-opened fence line (whitespace counts: it costs bytes too)
        return bool(current) and not (fence and len(current) == 1 and _FENCE.match(current[0]))

    for line in text.split("\n"):
        # the fence pattern only where a fence could be: most lines have neither ` nor ~
        after = _fence_after(fence, line) if "`" in line or "~" in line else fence
        line_cost = cost(line) + newline
        if used + line_cost + closing(after) > budget and has_content():
            if fence is None and after is None and 0 < last_break < len(current) and last_break > len(current) // 2:
                flush(last_break)
            if used + line_cost + closing(after) > budget and has_content():
                flush()
        if used + line_cost + closing(after) > budget:
            # one line longer than a chunk: cut it by characters (fence state does not change)
            reopen = cost(fence[0] + fence[1]) + newline if fence else 0
            piece_budget = max(1, budget - reopen - closing(fence) - newline)
            for piece in _hard_split(line, piece_budget, cost):
                if used + cost(piece) + newline + closing(fence) > budget and has_content():
                    flush()
                current.append(piece)
                used += cost(piece) + newline
            continue
        current.append(line)
        used += line_cost
        fence = after
        if fence is None and not line.strip():
            last_break = len(current)
    if any(line.strip() for line in current):
        chunks.append("\n".join([*current, fence[0]] if fence else current).strip("\n"))
    return [c for c in chunks if c.strip()]
