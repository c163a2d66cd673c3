"""Split rendered Telegram HTML into messages of at most 4,096 characters.

Telegram counts the limit after entity parsing (the visible text, in UTF-16 code units), so tags
cost nothing and `&amp;` costs one; long link URLs do not push an answer into a second message.
No chunk ends inside a tag or an entity: a chunk that has to break inside `<b>` or
`<pre><code>` closes the open tags and the next chunk re-opens them, so a code block split over
two messages is still two valid code blocks.
"""
from __future__ import annotations

import html
import re
from collections.abc import Iterator, Sequence

MAX_MESSAGE = 4096

_TOKEN = re.compile(r"<[^<>]*>|[^<]+")
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)[^>]*>")
_ANY_TAG = re.compile(r"<[^<>]*>")
_LINES = re.compile(r"[^\n]*\n|[^\n]+")
_WORDS = re.compile(r"\S+\s*|\s+")
_CHARS = re.compile(r"&(?:#\d+|#x[0-9a-fA-F]+|[a-zA-Z]+);|.", re.DOTALL)
# An element with nothing inside, followed only by closing tags up to the end of the chunk.
_EMPTY_PAIR = re.compile(r"<([a-zA-Z][a-zA-Z0-9-]*)[^>]*></\1>(?=(?:</[^<>]+>)*$)")


def tg_len(text: str) -> int:
    """Length as Telegram counts it: UTF-16 code units."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def visible_len(fragment: str) -> int:
    """What Telegram counts against the limit: the text after tags and entities are parsed."""
    text = _ANY_TAG.sub("", fragment) if "<" in fragment else fragment
    if "&" not in text:
        return tg_len(text)  # most units are plain text: skip the parse
    # The entities our renderer writes, counted instead of unescaped: html.unescape calls back
    # into Python once per entity, which made a 200 KB line of `<` take seconds (issue 16).
    angle, amp, quote = text.count("&lt;") + text.count("&gt;"), text.count("&amp;"), text.count("&quot;")
    if text.count("&") == angle + amp + quote:
        return tg_len(text) - 3 * angle - 4 * amp - 5 * quote
    return tg_len(html.unescape(text))


def split_html(units: Sequence[str], limit: int = MAX_MESSAGE) -> list[str]:
    """Pack balanced HTML units (joined by newlines) into as few chunks ≤ `limit` as fits."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for unit in units:
        unit_size = visible_len(unit)
        extra = unit_size + (1 if current else 0)
        if size + extra <= limit:
            current.append(unit)
            size += extra
            continue
        _emit(chunks, current)
        current, size = [], 0
        if unit_size <= limit:
            current, size = [unit], unit_size
            continue
        pieces = split_oversized(unit, limit)
        chunks.extend(p for p in pieces[:-1] if p.strip())
        current, size = [pieces[-1]], visible_len(pieces[-1])
    _emit(chunks, current)
    return chunks


def _emit(chunks: list[str], units: list[str]) -> None:
    text = "\n".join(units).strip("\n")
    if text.strip():
        chunks.append(text)


class _Packer:
    """Greedy packing of one long balanced HTML unit, closing and re-opening tags at each cut."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.pieces: list[str] = []
        self.stack: list[tuple[str, str]] = []  # (name, opening tag as written)
        # the chunk being built, as parts: `str +=` on an attribute copies the whole chunk on
        # every append, which made a 200 KB line of `&lt;` take seconds (issue 16)
        self.current: list[str] = []
        self.size = 0  # visible length of `current`
        self.has_text = False

    def closing(self) -> str:
        return "".join(f"</{name}>" for name, _ in reversed(self.stack))

    def flush(self) -> None:
        if self.has_text:
            piece = "".join(self.current) + self.closing()
            while m := _EMPTY_PAIR.search(piece):
                piece = piece[: m.start()] + piece[m.end() :]  # no empty <b></b> left at a cut
            self.pieces.append(piece)
        self.current = [opening for _, opening in self.stack]
        self.size = 0
        self.has_text = False

    def open_tag(self, name: str, tag: str) -> None:
        self.current.append(tag)
        self.stack.append((name, tag))

    def close_tag(self, name: str, tag: str) -> None:
        if self.stack and self.stack[-1][0] == name:
            self.stack.pop()
        self.current.append(tag)

    def _append(self, run: str, size: int) -> None:
        self.current.append(run)
        self.size += size
        self.has_text = self.has_text or bool(run.strip())

    def text(self, run: str) -> None:
        size = visible_len(run)
        if self.size + size <= self.limit:
            self._append(run, size)
            return
        for line in _LINES.findall(run):
            self._line(line)

    def _line(self, line: str) -> None:
        size = visible_len(line)
        if self.size + size <= self.limit:
            self._append(line, size)
            return
        if self.size:
            self.flush()  # a chunk of whitespace only is dropped at the cut, not sent
            if size <= self.limit:
                self._append(line, size)
                return
        # Too long even for an empty chunk: split finer (words, then characters/entities).
        self._pack(_WORDS.findall(line), finer=True)

    def _pack(self, parts: list[str], finer: bool) -> None:
        """Greedy: as many parts as fit, measured in batches (halved until one fits) rather than
        one call per part, so a 200 KB word of `&lt;` costs a few hundred calls, not 200,000."""
        k = 0
        while k < len(parts):
            room = self.limit - self.size
            n, piece, size = min(room, len(parts) - k), "", 0
            while n > 0:
                piece = "".join(parts[k : k + n])
                size = visible_len(piece)
                if size <= room:
                    break
                n //= 2
            if n > 0:
                self._append(piece, size)
                k += n
            elif self.size:
                self.flush()  # not even the next part fits in what is left
            elif finer:
                self._pack(_CHARS.findall(parts[k]), finer=False)  # one word longer than a message
                k += 1
            else:
                raise ValueError("limit too small")


def split_oversized(unit: str, limit: int = MAX_MESSAGE) -> list[str]:
    packer = _Packer(limit)
    for token in _TOKEN.findall(unit):
        tag = _TAG.fullmatch(token)
        if tag is None:
            packer.text(token)
        elif tag.group(1):
            packer.close_tag(tag.group(2).lower(), token)
        else:
            packer.open_tag(tag.group(2).lower(), token)
    packer.flush()
    return packer.pieces or [""]


_ANCHOR = re.compile(r'<a href="([^"]*)">(.*?)</a>', re.DOTALL)


def html_to_plain(chunk: str) -> str:
    """What a chunk says without formatting: for the plain-text fallback when Telegram rejects HTML."""

    def anchor(m: re.Match[str]) -> str:
        url = html.unescape(m.group(1))
        label = _ANY_TAG.sub("", m.group(2))
        return m.group(2) if html.unescape(label) == url else f"{m.group(2)} ({html.escape(url, quote=False)})"

    without_links = _ANCHOR.sub(anchor, chunk)
    return html.unescape(_ANY_TAG.sub("", without_links))


def split_plain(text: str, limit: int = MAX_MESSAGE) -> list[str]:
    """Split plain text at line, then word, then character boundaries."""
    chunks: list[str] = []
    current = ""
    for part in _plain_parts(text, limit):
        if tg_len(current) + tg_len(part) > limit:
            if current.strip():
                chunks.append(current.rstrip("\n"))
            current = ""
        current += part
    if current.strip():
        chunks.append(current.rstrip("\n"))
    return chunks


def _plain_parts(text: str, limit: int) -> Iterator[str]:
    for line in _LINES.findall(text):
        if tg_len(line) <= limit:
            yield line
            continue
        for word in _WORDS.findall(line):
            if tg_len(word) <= limit:
                yield word
            else:
                yield from word  # single characters
