"""Markdown and reStructuredText cut into the sections a person would quote.

Headings form a tree. A heading whose whole subtree is small stays one unit (so an FAQ entry with
its "symptom / cause / fix" sub-headings is one unit); a big one gives its own text as a unit and
its children are cut the same way. In FAQ pages, bold "**Q: …**" / "Q：" / "问题：" lines start an
entry too. Headings inside code fences are not headings (`# comment` in a shell block).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.index.chunks import Chunk, windows

MAX_SECTION_LINES = 80  # a subtree up to this size stays one unit
MAX_UNIT_LINES = 120  # a single section longer than this is cut into windows
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(\S.*)$")  # closing #s are stripped in Python (no backtracking)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_QUESTION = re.compile(r"^[ \t]*(?:\*\*)?[ \t]*(?:Q\d*|问题\d*|问)[ \t]*[:：][ \t]*(\S.*)$")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+<>])\1{2,}\s*$")
_MD_MARKUP = re.compile(r"[*`]|\\(?=[_*\\])")


@dataclass
class _Node:
    level: int
    title: str
    start: int  # 0-based line of the heading (or 0 for the preamble)
    end: int = 0  # exclusive: where the next heading of any level starts
    children: list["_Node"] = field(default_factory=list)
    subtree_end: int = 0


def clean_heading(text: str) -> str:
    return " ".join(_MD_MARKUP.sub("", text).split())


def _headings(lines: list[str], faq: bool, rst: bool) -> list[tuple[int, int, str]]:
    """(line index, level, title) of every heading outside code fences."""
    found: list[tuple[int, int, str]] = []
    fence: str | None = None
    rst_levels: list[str] = []
    deepest = 1
    for i, line in enumerate(lines):
        opener = _FENCE.match(line)
        if opener:
            mark = opener.group(1)
            if fence is None:
                fence = mark[0] * 3
            elif mark.startswith(fence) and not line.strip()[len(mark):].strip():
                fence = None
            continue
        if fence is not None:
            continue
        if rst:
            under = _RST_UNDERLINE.match(line)
            if under and i > 0 and lines[i - 1].strip() and not _RST_UNDERLINE.match(lines[i - 1]):
                char = under.group(1)
                if char not in rst_levels:
                    rst_levels.append(char)
                level = rst_levels.index(char) + 1
                found.append((i - 1, level, clean_heading(lines[i - 1])))
                deepest = max(deepest, level)
            continue
        atx = _ATX.match(line)
        if atx:
            level = len(atx.group(1))
            found.append((i, level, clean_heading(atx.group(2).rstrip(" \t#"))))
            deepest = max(deepest, level)
        elif faq:
            question = _QUESTION.match(line)
            if question:
                found.append((i, 7, clean_heading(question.group(1).rstrip(" \t*"))))  # below any heading: an entry
    return found


def _tree(lines: list[str], heads: list[tuple[int, int, str]]) -> _Node:
    root = _Node(0, "", 0, end=heads[0][0] if heads else len(lines))
    stack = [root]
    for n, (line, level, title) in enumerate(heads):
        own_end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        node = _Node(level, title, line, end=own_end)
        while len(stack) > 1 and stack[-1].level >= level:
            stack.pop()
        stack[-1].children.append(node)
        stack.append(node)

    def close(node: _Node) -> int:
        node.subtree_end = max([node.end, *(close(child) for child in node.children)])
        return node.subtree_end

    close(root)
    return root


def chunk_markdown(text: str, path: str, *, rst: bool = False) -> list[Chunk]:
    lines = text.splitlines()
    if not lines:
        return []
    faq = is_faq_path(path)
    heads = _headings(lines, faq, rst)
    root = _tree(lines, heads)
    entry_level = _entry_level(heads) if faq else None
    out: list[Chunk] = []
    heading_lines = {h[0] for h in heads}
    pending: list[tuple[int, str]] = []

    def emit(first: int, last: int, trail: tuple[str, ...]) -> None:
        """Lines [first, last) as one unit, or windows when too long."""
        while first < last and not lines[first].strip():
            first += 1
        while last > first and not lines[last - 1].strip():
            last -= 1
        if last <= first:
            return
        title = " > ".join(t for t in trail if t)
        if last - first == 1 and first in heading_lines:
            pending.append((first, title))  # a bare heading is glued to the unit that follows
            return
        if pending:
            parts = [part for _, t in pending for part in t.split(" > ")] + title.split(" > ")
            first, title = pending[0][0], " > ".join(dict.fromkeys(p for p in parts if p))
            pending.clear()
        if last - first <= MAX_UNIT_LINES:
            out.append(Chunk(title, first + 1, last, "doc", "\n".join(lines[first:last])))
            return
        for a, b in windows(lines, first, last):
            out.append(Chunk(title, a + 1, b, "doc", "\n".join(lines[a:b])))

    def visit(node: _Node, trail: tuple[str, ...]) -> None:
        here = (*trail, node.title) if node.title else trail
        size = node.subtree_end - node.start
        if entry_level is not None and node is not root:
            whole = node.level >= entry_level or not node.children  # an FAQ entry, however long
        else:
            whole = size <= MAX_SECTION_LINES or not node.children
        if node is not root and whole:
            emit(node.start, node.subtree_end, here)
            return
        # too big (or the root): own text first, then each child
        own_end = node.children[0].start if node.children else node.subtree_end
        if node is root:
            if own_end > 0:
                emit(0, own_end, here)
        elif any(line.strip() for line in lines[node.start + 1 : own_end]):
            emit(node.start, own_end, here)  # a bare parent heading lives on in its children's titles
        for child in node.children:
            visit(child, here)

    visit(root, ())
    if pending:
        first, title = pending[0]
        out.append(Chunk(title, first + 1, first + 1, "doc", lines[first]))
    return out


def _entry_level(heads: list[tuple[int, int, str]]) -> int | None:
    """The heading level of an FAQ page's questions: many distinct titles, few repeats
    (sub-headings such as "cause" / "fix" / 解决措施 repeat under every question)."""
    titles: dict[int, list[str]] = {}
    for _, level, title in heads:
        titles.setdefault(level, []).append(title)
    best, best_score = None, 1
    for level in sorted(titles):
        distinct = len(set(titles[level]))
        score = distinct - (len(titles[level]) - distinct)
        if score > best_score:
            best, best_score = level, score
    return best


_FAQ_PATH = re.compile(r"faq|trouble|常见问题|问题", re.IGNORECASE)


def is_faq_path(path: str) -> bool:
    return bool(_FAQ_PATH.search(path))
