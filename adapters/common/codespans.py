"""Inline code spans found the CommonMark way, in linear time.

A run of k backticks opens a span that the next run of exactly k backticks closes; a run with no
partner is literal text. A regex such as (`+)(.+?)\\1 rescans the rest of the line from every
opener (and backtracks over the run length), which is quadratic on hostile model output; here
every run is looked at twice: once to find its partner, once to walk the line.
"""
from __future__ import annotations

import re

_RUN = re.compile(r"`+")


def code_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of each code span in `line`, backticks included, left to right."""
    if "`" not in line:
        return []
    runs = [(m.start(), m.end()) for m in _RUN.finditer(line)]
    partner: list[int | None] = [None] * len(runs)
    last_of_length: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):  # right to left: the next run of each length
        length = runs[i][1] - runs[i][0]
        partner[i] = last_of_length.get(length)
        last_of_length[length] = i
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        j = partner[i]
        if j is None:
            i += 1
            continue
        spans.append((runs[i][0], runs[j][1]))
        i = j + 1
    return spans


def split_code(line: str) -> list[tuple[bool, str]]:
    """`line` cut into (is_code, text) pieces, in order; joined they give `line` back."""
    pieces: list[tuple[bool, str]] = []
    at = 0
    for start, end in code_spans(line):
        if start > at:
            pieces.append((False, line[at:start]))
        pieces.append((True, line[start:end]))
        at = end
    if at < len(line) or not pieces:
        pieces.append((False, line[at:]))
    return pieces
