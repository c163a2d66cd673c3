"""Markdown pipe tables with where they stand: the headings above them and the tab they sit in
(mkdocs-material `=== "A2/A3"` blocks indent their tables by four spaces).

Cells are reduced to their words: a link keeps its text, HTML tags (<abbr>, <sup>, <br>) are dropped.
Columns are found by header words (`column`), so an added column does not shift the others.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_HEADING = re.compile(r"^(#{1,6})[ \t]{1,4}(\S.{0,200})$")
_TAB = re.compile(r"""^===[ \t]{1,4}["']([^"']{1,80})["'][ \t]*$""")
_RULE_CELL = re.compile(r"^:?-{1,200}:?$")
_LINK = re.compile(r"\[([^\]\[]{0,300})\]\([^()\s]{0,500}\)|\[([^\]\[]{0,300})\]\[[^\]\[]{0,100}\]")
_LINK_TARGET = re.compile(r"\]\(([^()\s]{1,500})\)")
_TAG = re.compile(r"<[^<>]{0,300}>")
_SUP = re.compile(r"<sup>[^<>]{0,20}</sup>", re.IGNORECASE)
_BR = re.compile(r"<br[ \t]{0,2}/?>", re.IGNORECASE)
_SPACE = re.compile(r"[ \t]{2,}")


@dataclass(frozen=True)
class Table:
    headings: tuple[str, ...]  # the headings above it, outermost first (the page title included)
    tab: str  # the `=== "…"` tab it sits in, "" outside tabs
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]  # raw cells (see `text`, `link_target`)
    line: int  # 1-based line of the header


def split_cells(line: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in line.strip().strip("|").split("|"))


def _is_rule(line: str) -> bool:
    """|---|:--:| under a header."""
    return line.strip().startswith("|") and all(_RULE_CELL.match(c) for c in split_cells(line))


def text(cell: str) -> str:
    """A cell's words: link text kept, footnote marks and tags dropped, <br> as ' / '."""
    cell = _SUP.sub("", cell)
    cell = _BR.sub(" / ", cell)
    cell = _LINK.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), cell)
    cell = _TAG.sub("", cell)
    return _SPACE.sub(" ", cell).strip()


def link_target(cell: str) -> str:
    m = _LINK_TARGET.search(cell)
    return m.group(1) if m else ""


def column(header: tuple[str, ...], *words: str, exclude: tuple[str, ...] = ()) -> int | None:
    """The first column whose header (in words) holds all `words` and none of `exclude`."""
    for i, name in enumerate(header):
        low = text(name).lower()
        if all(w in low for w in words) and not any(x in low for x in exclude):
            return i
    return None


def tables(markdown: str) -> Iterator[Table]:
    headings: list[tuple[int, str]] = []
    tab = ""
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        heading = _HEADING.match(raw)
        if heading:
            level = len(heading.group(1))
            title = text(heading.group(2).rstrip(" \t#"))  # "## Title ##" closes with hashes
            headings = [h for h in headings if h[0] < level] + [(level, title)]
            tab = ""
        elif _TAB.match(stripped):
            tab = _TAB.match(stripped).group(1).strip()  # type: ignore[union-attr]
        elif stripped.startswith("|") and i + 1 < len(lines) and _is_rule(lines[i + 1]):
            header = split_cells(stripped)
            rows = []
            j = i + 2
            while j < len(lines) and lines[j].strip().startswith("|"):
                rows.append(split_cells(lines[j]))
                j += 1
            yield Table(tuple(h for _, h in headings), tab, header, tuple(rows), i + 1)
            i = j
            continue
        elif stripped and not raw.startswith((" ", "\t")):
            tab = ""  # text back at the margin closes a tab block
        i += 1
