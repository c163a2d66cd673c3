"""Text written by strangers (issue titles and bodies, quoted passages), made safe to show and to prompt with.

Anyone can open an issue, and after `sync --issues` and `index` its title and body are quoted in
offline answers, in tool output and in source lists. Two rules keep that text inert:

- `drop_links`: a quoted excerpt keeps a Markdown link's words but loses every link target, whatever
  the case of the scheme (`HTTPS://`), and loses the scheme-less forms chat apps link by themselves
  (`www.evil.example`, `evil.example/x`, `evil.com`). The permalink of the passage is the citation,
  never a link inside it.
- `plain_line`: a title becomes one line of plain text: no link, no emphasis, no code span, no tag or
  Slack special (`<!here>`), no mention (`@channel`), whatever renderer it reaches.
- `defang_links`: text not yet verified (a streamed draft, core/research/draft_guard.py) keeps its
  links readable but visibly broken (`https[:]//evil[.]example/x`), so no chat app links them.

`issue_label` says who wrote an issue passage ("from issue #12, written by a user"), so neither the
model nor the reader mistakes it for the knowledge base.

Every pattern is linear on hostile input: bounded quantifiers, character classes that exclude their own
delimiters, and a lookbehind that lets a scheme-less host start only at the start of a word.
"""
from __future__ import annotations

import re
from typing import Literal

from core.messages import Language

MAX_TITLE_CHARS = 200

# [label](target "title") and ![alt](target): the label stays, the target goes. Neither part may hold
# its own delimiters, so a scan from one '[' stops at the next one: linear on "[[[[…".
_MD_LINK = re.compile(r"!?\[([^\[\]\n]{0,300})\]\([^()\s]{0,1000}(?:[ \t]{1,20}\"[^\"\n]{0,300}\")?\)")
# Any `scheme://…` (case-insensitive: "hTtP://" links as well as "http://"), and the schemes that
# need no '//' but still open something when a chat app links them.
_URL_TAIL = r"[^\s<>()\[\]{}\"'`]"
_SCHEME_URL = re.compile(
    rf"(?<![A-Za-z0-9+.-])(?:[A-Za-z][A-Za-z0-9+.-]{{0,30}}://{_URL_TAIL}{{0,2000}}"
    rf"|(?:javascript|vbscript|mailto|tg|intent):{_URL_TAIL}{{1,2000}})",  # "Our intent: …" is prose
    re.IGNORECASE,
)
# Scheme-less links chat apps make clickable: `www.` hosts, a dotted host followed by a path
# (`evil.example/x`, `1.2.3.4:8000/x`), and a bare host under a common public suffix (`evil.com`).
# File-like suffixes (.py, .sh, .md, .cc, .info as in logger.info, .app as in self.app) are left out:
# excerpts quote code and paths, and a host that looks like a file name is not worth mangling them.
_LABEL = r"[A-Za-z0-9-]{1,63}"
_COMMON_TLDS = "com|net|org|io|xyz|top|ru|cn|ly|gg|tk|co|me|ai|site|online|club|vip|icu|buzz|shop"
_HOST_LINK = re.compile(
    rf"(?<![A-Za-z0-9_.@/\\-])(?://)?(?:"  # ASCII: after CJK ("访问evil.com/x") a host is still linked
    rf"www\.{_LABEL}(?:\.{_LABEL}){{0,8}}"
    rf"|(?:{_LABEL}\.){{1,8}}[A-Za-z]{{2,24}}(?::\d{{1,5}})?(?=/)"
    rf"|\d{{1,3}}(?:\.\d{{1,3}}){{3}}(?::\d{{1,5}})?(?=/)"
    rf"|(?:{_LABEL}\.){{1,8}}(?:{_COMMON_TLDS})(?![\w(\[-]|\.\w)"  # evil.com. yes, self.net.forward no
    rf"){_URL_TAIL}{{0,2000}}",
    re.IGNORECASE,
)

# Characters a renderer reads as markup, each swapped for a look-alike that is only text: link and
# image brackets, code spans, tags and Slack specials (<!here>, <@U1>), HTML entities (&lt;at …&gt;),
# emphasis and strike-through. `_` only at a word's edge: snake_case inside a word is no markup.
# Narrow look-alikes where one exists, so `__init__.py` reads as ˍˍinitˍˍ.py rather than as bold "init".
_MARKUP = str.maketrans({
    "[": "(", "]": ")", "`": "'", "<": "‹", ">": "›", "&": "＆", "*": "∗", "~": "∼", "|": "¦",
})
_EDGE_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
# `@name`, `@channel`, `@所有人`: a word joiner after '@' reads the same and notifies nobody.
_MENTION = re.compile(r"@(?=[\w\u4e00-\u9fff])")
# The rest of a link past a pattern's bound: `_SCHEME_URL` stops after 2,000 characters, the link does not.
_LINK_REST = re.compile(rf"{_URL_TAIL}*+")
_LINK_TRAILING = ".,;:!?"
# Controls, and the bidirectional overrides that make text read in another order than it is stored.
_INVISIBLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")

Role = Literal["a user", "a maintainer"]
# The unit text of an issue marks each comment's author by role ("maintainer @login:"); the index
# builder writes those lines. Bounded and anchored at a line start: linear.
_MAINTAINER_LINE = re.compile(r"^maintainer @[^\s:]{1,100}:", re.MULTILINE)
_ISSUE_PATH = re.compile(r"(?:issues|pulls)/(\d{1,12})$")  # pull requests are indexed as threads too
_ISSUE_TITLE = re.compile(r"#(\d{1,12})\b")

_LABELS: dict[Language, dict[Role, str]] = {
    "en": {"a user": "from issue #{n}, written by a user", "a maintainer": "from issue #{n}, written by a maintainer"},
    "zh": {"a user": "来自 issue #{n}，由用户撰写", "a maintainer": "来自 issue #{n}，由维护者撰写"},
}


def drop_links(text: str) -> str:
    """`text` with Markdown links reduced to their words and every URL or linkable host removed."""
    if "[" in text:
        text = _MD_LINK.sub(r"\1", text)
    return _HOST_LINK.sub("", _SCHEME_URL.sub("", text))


def defang_links(text: str) -> str:
    """`text` with Markdown links reduced to their words and every URL or linkable host left as plain,
    visibly broken text: `https://evil.example/x` → `https[:]//evil[.]example/x`, `evil.com` → `evil[.]com`.

    Every dot of a link is bracketed (a host hidden in its path or query is broken too) and its first
    colon, so no scheme survives. Trailing punctuation stays as it was, so a bracket is always followed
    by a link character, never by `(`: the result holds no Markdown link either.
    """
    if "[" in text:
        text = _MD_LINK.sub(r"\1", text)
    return _defang_matches(_HOST_LINK, _defang_matches(_SCHEME_URL, text))


def _defang_matches(pattern: re.Pattern[str], text: str) -> str:
    out: list[str] = []
    position = 0
    for match in pattern.finditer(text):
        if match.start() < position:
            continue  # inside a link already extended past the pattern's bound
        end = _LINK_REST.match(text, match.end()).end()  # type: ignore[union-attr] # `*+` always matches
        link = text[match.start() : end]
        core = link.rstrip(_LINK_TRAILING)
        out += [text[position : match.start()], core.replace(".", "[.]").replace(":", "[:]", 1), link[len(core) :]]
        position = end
    if not out:
        return text
    out.append(text[position:])
    return "".join(out)


def plain_line(text: str, limit: int = MAX_TITLE_CHARS) -> str:
    """One line of plain text that no renderer turns into a link, emphasis, code, tag or mention."""
    line = _INVISIBLE.sub("", " ".join(text.split()))  # every kind of line break becomes a space first
    line = drop_links(line).translate(_MARKUP)
    line = _EDGE_UNDERSCORE.sub("ˍ", line)
    line = _MENTION.sub("@\u2060", line)
    line = " ".join(line.split())  # removed links leave double blanks
    return line if len(line) <= limit else line[: limit - 1] + "…"


def issue_role(passage_text: str) -> Role:
    """Who an issue passage speaks for: a maintainer when one of its comments is a maintainer's."""
    return "a maintainer" if _MAINTAINER_LINE.search(passage_text) else "a user"


def issue_number(path: str, title: str = "") -> str:
    """The number of an issue passage ("issues/12" or "pulls/12" → "12"), from its title as a fallback."""
    match = _ISSUE_PATH.search(path) or _ISSUE_TITLE.search(title)
    return match.group(1) if match else "?"


def issue_label(path: str, title: str, passage_text: str, language: Language = "en") -> str:
    """The label of an issue passage, "from issue #12, written by a user" (or a maintainer), in `language`."""
    return _LABELS[language][issue_role(passage_text)].format(n=issue_number(path, title))
