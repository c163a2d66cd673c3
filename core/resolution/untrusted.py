"""Thread text made safe to quote in a resolution: core/untrusted_text's rules, code spans kept.

A maintainer's command is the point of quoting them, so text inside `code spans` stays code (its
links still go); everything else becomes plain text (no link, markup or mention).
"""
from __future__ import annotations

from core.untrusted_text import drop_links, plain_line


LINK_REMOVED = " (link in the thread)"


def plain_sentence(text: str, limit: int = 400) -> str:
    pieces = text.split("`")
    out: list[str] = []
    for i, piece in enumerate(pieces):
        inside = i % 2 == 1 and i < len(pieces) - 1  # an unpaired last backtick opens nothing
        if inside:
            code = " ".join(drop_links(piece).split()).replace("`", "'")
            out.append(f"`{code}`" if code else "")
        elif piece.strip():
            edge_space = (" " if piece[:1].isspace() else "", " " if piece[-1:].isspace() else "")
            shown = plain_line(piece, limit)
            if " ".join(drop_links(piece).split()) != " ".join(piece.split()):
                shown += LINK_REMOVED  # "see <link>" would otherwise end in the air
            out.append(edge_space[0] + shown + edge_space[1])
    line = " ".join("".join(out).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
