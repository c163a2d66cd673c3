"""The chunker's output value and the window cutter every chunker falls back to."""
from __future__ import annotations

from dataclasses import dataclass

from core.index.passage import PassageKind

WINDOW_LINES = 60
WINDOW_OVERLAP = 10


@dataclass(frozen=True)
class Chunk:
    """One unit of a file: lines start_line..end_line (1-based, inclusive) and their text."""

    title: str
    start_line: int
    end_line: int
    kind: PassageKind
    text: str
    extra: str = ""  # indexed but never shown (e.g. the Chinese translation of an English section)


def windows(lines: list[str], first: int, last: int, size: int = WINDOW_LINES, overlap: int = WINDOW_OVERLAP) -> list[tuple[int, int]]:
    """[a, b) line ranges covering [first, last), `size` long, overlapping by `overlap`.

    A cut moves back (up to a third of a window) to a blank line or a closing brace at column 0,
    so a window rarely ends mid-paragraph or mid-function.
    """
    out: list[tuple[int, int]] = []
    a = first
    while a < last:
        b = min(a + size, last)
        if b < last:
            for cut in range(b, b - size // 3, -1):
                line = lines[cut - 1]
                if not line.strip() or line.startswith("}"):
                    b = cut
                    break
        out.append((a, b))
        if b >= last:
            break
        a = max(b - overlap, a + 1)
    return out
