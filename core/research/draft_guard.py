"""What a streamed draft may show before verification: nothing to click and nothing to copy as a command.

A draft is the model's text as it is written; `verify_answer` (core/research/citations.py) only runs on
the finished answer. So the draft shows:

- links as plain, visibly broken text (`https[:]//evil[.]example/x`, `evil[.]com`; a Markdown link
  keeps its words), which no chat app turns into a link: an unverified link is never clickable;
- no code block: a fenced block (```` ``` ```` or `~~~`, opened with at most three spaces) is held back
  and a one-line note stands in its place until the verified answer replaces the draft. A code block is
  the "copyable command" of a chat answer: Slack, Feishu and Telegram put a copy button on it, and what
  is in it (a shell command, a config) is what a reader pastes. Which block holds a command cannot be
  told while it is being written, so every block waits;
- inline code as inert text: its backticks become `ˋ`, so it is neither monospace nor tap-to-copy
  (Telegram copies inline code on a tap), yet it reads the same;
- no tag and no mass mention: a word joiner after every `<` (Feishu `<at>`, `<a href>`, `<link>`, Slack's
  `<!here>` and `<url|label>` stop being tags), and `@channel`/`@所有人` defanged as in the final answer.

The check is incremental (issue 21, item 8): each update scans only the text that arrived since the
last one plus a short carried tail, never the whole answer again. The view is built from pieces that
end where nothing can straddle them: after a blank or a CJK punctuation mark (a link, a host, a
mention or a tag never holds one), or before a `[` (no link character); a line's start waits until
it shows whether it opens a fence, and a piece does not end inside an unclosed `[label](` unless that
has run for `LINK_WAIT` characters. The rule per piece never depends on its neighbours, so a
construct that straddles a cut anyway (a link label with spaces, an inline code span) comes out inert
all the same: its `](` is broken and each backtick is replaced on its own. The text after the last cut
is shown as far as it is letters and digits (a word being written); the rest waits for the next cut.
So every view extends the previous one, as Slack's append-only stream needs.
"""
from __future__ import annotations

import re

from core.messages import Language
from core.research.redact import defang_mentions
from core.untrusted_text import defang_links

# How long a `[` may wait for its `](target)` before the text before it is shown anyway.
LINK_WAIT = 2600
# Cut after a blank or a CJK punctuation mark. Greedy, then one backtrack to the last such mark: linear.
_LAST_CUT = re.compile(r"(?s:.*)[\s，。；：！？、（）【】「」『』]")
_OPEN_LINK_TARGET = "]("
_JOINER = "\u2060"
# Letters and digits (CJK included): a word of them shows before it is complete, since nothing the
# next characters bring can change it (defanging only inserts after it or replaces non-letters).
_PLAIN_RUN = re.compile(r"[^\W_]*+")

HELD_CODE = {
    "en": "*(code block held back until the answer is checked)*",
    "zh": "*（代码块在回答核对后显示）*",
}


def inert(piece: str) -> str:
    """One piece of draft prose with nothing clickable, copyable as code, or notifying."""
    piece = defang_links(piece)
    piece = piece.replace(_OPEN_LINK_TARGET, "] (").replace("`", "ˋ").replace("<", "<" + _JOINER)
    return defang_mentions(piece)


class DraftGuard:
    """The safe view of one growing text. Feed it the whole text so far; a rewrite starts over."""

    def __init__(self, language: Language) -> None:
        self._note = HELD_CODE[language]
        self._reset()

    def _reset(self) -> None:
        self._raw = ""  # the text consumed so far: a prefix of every later text unless it was rewritten
        self._view = ""  # the safe view of `_raw`
        self._at_line_start = True
        self._fence = ""  # the run that opened the fence being held ("```", "~~~~"), "" outside one
        self._in_opener = False  # the fence's opening line is still being read
        self._opener_at = 0  # where that line starts
        self._newline_from = 0  # no '\n' in the text between `len(_raw)` and this index
        self._cut_from = 0  # no cut mark in the text between `len(_raw)` and this index
        self._last_cut = 0  # the end of the latest cut mark found (an index into the text)
        self._word_start = self._word_end = 0  # the unfinished word shown as it is: text[start:end]

    def view(self, text: str) -> str:
        if not text.startswith(self._raw):  # a memcmp, not a scan: the text was rewritten (a think tag)
            self._reset()
        position = len(self._raw)
        pieces: list[str] = []
        while position < len(text):
            newline = text.find("\n", max(position, self._newline_from))
            line_end = newline if newline >= 0 else len(text)
            if self._at_line_start and not self._fence:
                opened = _opens_fence(text, position, line_end, complete=newline >= 0)
                if opened is None:
                    break  # "``" or blanks so far: wait to see whether a fence opens here
                self._at_line_start = False
                if opened:
                    self._fence, self._in_opener, self._opener_at = opened, True, position
                    pieces.append(self._note + "\n")
            if self._fence:
                if self._in_opener:  # the opening line (its info string) is held as it arrives
                    if newline < 0:
                        position = len(text)
                        break
                    self._fence, self._in_opener = _opener_run(text, self._opener_at, newline), False
                elif newline < 0:
                    break  # a held line: only the whole line tells whether it closes the fence
                elif _closes_fence(text[position:newline], self._fence):
                    self._fence = ""
                position = self._end_line(newline)
                continue
            if newline >= 0:
                pieces.append(inert(text[position : newline + 1]))
                position = self._end_line(newline)
                continue
            cut = self._cut(text, position)
            if cut > position:
                pieces.append(inert(text[position:cut]))
                position = cut
            break
        self._newline_from = len(text)  # every early stop above is on a line without its '\n' yet
        if pieces:
            self._view += "".join(pieces)
        if position != len(self._raw):
            self._raw = text[:position]
        return self._view + self._unfinished_word(text, position)

    def _unfinished_word(self, text: str, position: int) -> str:
        """The letters the prose line goes on with after its last cut: shown now, and kept as they are later."""
        if self._fence or self._at_line_start:
            return ""
        if self._word_start != position:
            self._word_start = self._word_end = position
        self._word_end = _PLAIN_RUN.match(text, self._word_end).end()  # type: ignore[union-attr] # `*+` always matches
        return text[position : self._word_end]

    def _end_line(self, newline: int) -> int:
        self._at_line_start = True
        return newline + 1

    def _cut(self, text: str, position: int) -> int:
        """Where the shown part of an unfinished prose line ends: after its last cut mark, before an open link."""
        match = _LAST_CUT.match(text, max(position, self._cut_from))
        self._cut_from = len(text)
        if match is not None:
            self._last_cut = match.end()
        cut = max(self._last_cut, position)
        bracket = text.rfind("[", max(position, cut - LINK_WAIT), cut)
        if bracket >= 0 and _link_open(text[bracket:cut]):
            return bracket
        return cut


def _fence_mark_at(text: str, start: int, end: int) -> int:
    """Where a fence's mark would start on the line at `start`: after at most three blanks, or -1 after four.

    Any Unicode blank counts (tabs, U+3000): renderers match fences with `\\s{0,3}`, and a fence they
    see and this guard does not would put the prose after it in a code block.
    """
    at = start
    while at < end and at - start < 4 and text[at].isspace():
        at += 1
    return -1 if at - start > 3 else at


def _opens_fence(text: str, start: int, end: int, *, complete: bool) -> str | None:
    """The opening run if the line at `start` opens a fence, "" if it does not, None while undecided."""
    at = _fence_mark_at(text, start, end)
    if at < 0:
        return ""  # indented four blanks: not a fence
    if at >= end:
        return "" if complete else None
    mark = text[at]
    if mark not in "`~":
        return ""
    run = at
    while run < end and run - at < 3 and text[run] == mark:
        run += 1
    if run - at >= 3:
        return mark * 3  # its full length ("````") is read once the line ends: `_opener_run`
    return None if run == end and not complete else ""


def _opener_run(text: str, start: int, end: int) -> str:
    """The fence's opening run ("```", "~~~~~"), read once from the complete opening line."""
    at = _fence_mark_at(text, start, end)
    run = at
    while run < end and text[run] == text[at]:
        run += 1
    return text[at:run]


def _closes_fence(line: str, opener: str) -> bool:
    """A line of only the opener's mark, at least as long, indented at most three blanks (CommonMark)."""
    at = _fence_mark_at(line, 0, len(line))
    bare = line[at:].rstrip() if at >= 0 else ""
    return len(bare) >= len(opener) and bare == opener[0] * len(bare)


def _link_open(tail: str) -> bool:
    """`tail` starts with '[': is it a link still being written ("[label" or "[label](target")?"""
    close = tail.find("]")
    if close < 0:
        return True
    return tail.startswith(_OPEN_LINK_TARGET, close) and ")" not in tail[close:]
