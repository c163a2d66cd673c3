"""Verified citations: an answer may cite only what a tool itself produced during this turn.

`Evidence` keeps two kinds of links and repository paths:

- *verified*: the sources a tool declared (`ToolOutput.sources` / `paths`): a permalink it built from
  repo + path + commit, an issue's own `html_url`, the DeepWiki page it asked, a docs passage's
  permalink, plus the knowledge base's canonical URLs. A declared source counts only if the model saw
  it (it survived truncation).
- *mentioned*: URLs and paths that only appear inside third-party text a tool passed on (issue bodies,
  comments, wiki prose, file contents). They are never sources: anyone can write a link into an issue.

Nothing found in text is ever verified: not a link in an issue, nor one in the offline diagnostic the
agent passes on (its knowledge-base links are verified because the allow-list holds the knowledge base's
own Source URLs, core/research/repos.py `canonical_urls`).

`verify_answer` keeps verified citations, replaces mentioned links by a note naming where they were
mentioned, removes other links (and every non-http link), marks unverified paths, and returns the
body and the verified sources apart (any Sources section the model wrote is taken out of the body);
each platform renders the sources list once, from that data.

Every pattern here runs on model output and tool output, so each is linear: character classes that
exclude their own delimiters, bounded repeats, and a line scanner instead of a regex for code fences.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from core.messages import Language, Source
from core.untrusted_text import plain_line

# Longer URLs are cut at this length: no real citation is that long, and the bound keeps scans short.
MAX_URL_CHARS = 2048
_URL_CHARS = r"[^\s<>()\[\]{}\"'`，。；：！？、）】」』]"
# Scheme case-insensitively: "HTTPS://evil" is as clickable as "https://evil".
URL = re.compile(rf"(?i:https?)://{_URL_CHARS}{{1,{MAX_URL_CHARS}}}")
_TRAILING = ".,;:!?*_~"

_EXTENSIONS = (
    "py|pyi|pyx|md|rst|txt|json|jsonl|yaml|yml|toml|cfg|ini|conf|sh|bash|c|cc|cpp|cxx|h|hh|hpp|cu|cuh|"
    "go|rs|java|js|ts|proto|cmake|sql|ipynb|patch|diff|in|j2|jinja|html|css|xml|csv|mk|bzl|bazel|lock"
)
# A repository path: relative, at least one '/', a known extension (or a Dockerfile/Makefile), optional :line.
# Bounded segment count and length: a match can only start after a character outside [\w./:@~\\-] and
# only consumes characters inside it, so scans from different starts never overlap.
PATH = re.compile(
    rf"(?<![\w./:@~\\-])((?:[\w.-]{{1,200}}/){{1,40}}(?:[\w.-]{{0,200}}\w\.(?:{_EXTENSIONS})|Dockerfile(?:\.[\w-]{{1,40}})?|Makefile|CMakeLists\.txt))"
    r"(?::\d{1,9}(?:-\d{1,9})?|#L\d{1,9}(?:-L?\d{1,9})?)?(?![\w/])"
)
_LINE_SUFFIX = re.compile(r"(?::\d{1,9}(?:-\d{1,9})?|#L\d{1,9}(?:-L?\d{1,9})?)$")
_BLOB_PATH = re.compile(r"/(?:blob|tree|raw)/[^/]{1,200}/(.+)$")

# Links in prose. A label may not contain brackets and a target may not contain brackets, '<', '>' or
# whitespace, so a scan from one '[' or '<' always stops before the next one: linear on `[[[[…`.
# The target takes any scheme (tg:, javascript:, //host …): the verifier decides what survives.
_TARGET_CHAR = r"[^()\s\[\]<>]"
_LINKS = re.compile(
    rf"\[(?P<label>[^\[\]\n]{{0,500}})\]\((?P<target>(?:{_TARGET_CHAR}|\({_TARGET_CHAR}{{0,200}}\)){{1,{MAX_URL_CHARS}}})"
    r"(?:[ \t]{1,20}\"[^\"\n]{0,300}\")?\)"
    rf"|<(?P<auto>(?:[a-zA-Z][a-zA-Z0-9+.-]{{0,30}}:|//)[^<>\s]{{1,{MAX_URL_CHARS}}})>"
    rf"|(?P<bare>(?i:https?)://{_URL_CHARS}{{1,{MAX_URL_CHARS}}})"
)
# Feishu card markdown (JSON 2.0) also links with tags: <a href='…'>label</a> and
# <link url='…' pc_url='…' ios_url='…' android_url='…'>label</link>. They are checked like Markdown links:
# a tag whose every target is verified becomes the Markdown link all platforms share, any other keeps
# its label as text. No part may hold '<' or '>', so a scan from one '<' stops at the next: linear.
_TAG_LINK = re.compile(
    r"<(?P<tag>a|link)(?![\w-])(?P<attrs>[^<>]{0,3000})>(?:(?P<label>[^<>]{0,500})</(?P=tag)[ \t]{0,20}>)?",
    re.IGNORECASE,
)
_TAG_TARGET = re.compile(
    r"(?<![\w-])(?:href|url|pc_url|ios_url|android_url)[ \t]{0,20}=[ \t]{0,20}"
    r"(?:\"(?P<dq>[^\"]{0,2048})\"|'(?P<sq>[^']{0,2048})'|(?P<bare>[^\s\"'<>]{1,2048}))",
    re.IGNORECASE,
)
# Clickable non-web links written as plain text: any other `scheme://`, and the schemes that need no '//'.
# Something must follow the colon: "Our intent: …" or "the config file: …" is prose, not a link.
_OTHER_SCHEME = re.compile(
    r"(?<![\w.+-])(?:(?!https?://)[a-zA-Z][a-zA-Z0-9+.-]{0,30}://|(?:javascript|vbscript|mailto|tg|intent|file):"
    r"|data:[\w.+-]{1,60}[/,;])[^\s<>()\[\]{}\"'`]{1,2048}",
    re.IGNORECASE,
)
_CODE_SPAN = re.compile(r"`[^`\n]{1,4000}`")
_SOURCES_HEADING = re.compile(
    r"^[ \t]{0,20}(?:#{1,6}[ \t]{0,20}|\*\*)?(?:sources|references|citations|参考资料|参考|来源|引用|出处)(?:\*\*)?"
    r"[ \t]{0,20}[:：]?(?:\*\*)?[ \t]{0,20}$",
    re.IGNORECASE | re.MULTILINE,
)
_NUMBERED = re.compile(r"^\d{1,6}[.)]")

_TEXTS = {
    "en": {
        "unverified": "*(unverified)*",
        "removed": "*(unverified link removed)*",
        "removed_code": "<unverified link removed>",
        "mentioned": "*(mentioned in {origin}, unverified)*",
        "mentioned_link": "*(link mentioned in {origin}, unverified, removed)*",
        "code_paths": "*(unverified paths in the block above: {paths})*",
        "no_sources": "_No tool-verified sources: treat this answer as unverified._",
    },
    "zh": {
        "unverified": "*（未经验证）*",
        "removed": "*（未经验证的链接已移除）*",
        "removed_code": "<未经验证的链接已移除>",
        "mentioned": "*（在 {origin} 中提及，未经验证）*",
        "mentioned_link": "*（{origin} 中提及的链接，未经验证，已移除）*",
        "code_paths": "*（上面代码块中未经验证的路径：{paths}）*",
        "no_sources": "_没有经工具验证的来源：请把本回答视为未经验证。_",
    },
}


def clean_url(url: str) -> str:
    """A URL as found in text, without trailing punctuation or an unbalanced ')'."""
    url = url.rstrip(_TRAILING)
    opened, closed = url.count("("), url.count(")")
    while url.endswith(")") and closed > opened:
        url = url[:-1].rstrip(_TRAILING)
        closed = url.count(")")
    return url


@lru_cache(maxsize=4096)  # the same link is compared many times per answer
def normalize_url(url: str) -> str:
    """Comparison form: no fragment (line anchors may differ), no trailing '/' or '.git', lower-case host."""
    parts = urlsplit(clean_url(url))
    host = parts.netloc.lower().removeprefix("www.")
    path = parts.path.rstrip("/").removesuffix(".git")
    return urlunsplit((parts.scheme.lower(), host, path, parts.query, ""))


def is_web_url(url: str) -> bool:
    return url[:8].lower().startswith(("http://", "https://"))


def _bare_path(token: str) -> str:
    return _LINE_SUFFIX.sub("", token)


def find_urls(text: str) -> list[str]:
    return [clean_url(m.group(0)) for m in URL.finditer(text)]


def find_paths(text: str) -> list[str]:
    masked = URL.sub(lambda m: " " * len(m.group(0)), text)
    return [_bare_path(m.group(0)) for m in PATH.finditer(masked)]


def blob_path(url: str) -> str | None:
    """The repository path of a blob/tree/raw permalink, if it is one."""
    match = _BLOB_PATH.search(urlsplit(url).path)
    return match.group(1) if match else None


class Evidence:
    """What tools produced during one answer. Not shared between answers."""

    def __init__(self, allowed_urls: Iterable[str] = ()) -> None:
        self._urls: dict[str, Source] = {}
        self._allowed = {normalize_url(u) for u in allowed_urls}
        self._paths = _PathIndex()  # path -> its permalink Source, or None (listed, no permalink)
        # Third-party mentions: normalized URL / path -> where it was written ("" when unknown).
        self._mentioned_urls: dict[str, str] = {}
        self._mentioned_paths = _PathIndex()

    def allow(self, urls: Iterable[str]) -> None:
        self._allowed.update(normalize_url(u) for u in urls)

    def record(self, text: str, sources: Sequence[Source] = (), paths: Sequence[str] = (), origin: str = "") -> None:
        """Record one tool result: `sources`/`paths` are what the tool produced, `text` what the model read.

        A declared source counts only when its URL is in `text` (truncation may have cut it). Every
        other URL or path in `text` came from third-party content and is only a mention, with `origin`
        naming that content when the tool knows it (an issue, a DeepWiki answer, a file).
        """
        in_text = find_urls(text)
        visible = {normalize_url(u) for u in in_text}
        for source in sources:
            key = normalize_url(source.url)
            if not is_web_url(source.url) or (key not in visible and source.url not in text):
                continue
            self._urls.setdefault(key, source)
            path = blob_path(source.url)
            if path and not self._paths.get(path):
                self._paths.set(path, source)
        for path in paths:
            path = _bare_path(path).strip("/")
            if path not in self._paths:
                self._paths.set(path, None)
        for url in in_text:
            key = normalize_url(url)
            if key not in self._urls and not self._mentioned_urls.get(key):
                self._mentioned_urls[key] = origin
        for path in find_paths(text):
            if not self._paths.find(path)[0] and not self._mentioned_paths.get(path):
                self._mentioned_paths.set(path, origin)

    @property
    def urls(self) -> tuple[Source, ...]:
        return tuple(self._urls.values())

    def url_source(self, url: str) -> Source | None:
        if not is_web_url(url):
            return None
        key = normalize_url(url)
        if key in self._urls:
            return self._urls[key]
        if key in self._allowed:
            cleaned = clean_url(url)
            return Source(cleaned, cleaned)
        return None

    def url_mention(self, url: str) -> str:
        """Where an unverified URL was mentioned (e.g. '#1234'), or '' when unknown or never seen."""
        return self._mentioned_urls.get(normalize_url(url), "")

    def path_source(self, path: str) -> tuple[bool, Source | None]:
        """Whether a tool produced a path (exact, or one is a suffix of the other at a '/'), and its permalink."""
        return self._paths.find(_bare_path(path))

    def path_mention(self, path: str) -> str:
        """Where an unverified path was mentioned, or ''."""
        found, origin = self._mentioned_paths.find(_bare_path(path))
        return str(origin) if found and origin else ""


class _PathIndex:
    """Known repository paths, matched exactly or when one is a suffix of the other at a '/'.

    `docs/x.md` matches a known `repo/docs/x.md`, and `a/docs/x.md` matches a known `docs/x.md`. Every
    '/'-suffix of a known path is indexed, so a lookup costs the number of segments, not the number of
    known paths: an answer naming 30,000 paths against a 300-entry listing stays linear.
    """

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._by_suffix: dict[str, str] = {}  # a proper '/'-suffix -> the first known path ending in it

    def __contains__(self, path: str) -> bool:
        return path in self._values

    def get(self, path: str) -> Any:
        return self._values.get(path)

    def set(self, path: str, value: Any) -> None:
        if path not in self._values:
            parts = path.split("/")
            for i in range(1, len(parts)):
                self._by_suffix.setdefault("/".join(parts[i:]), path)
        self._values[path] = value

    def find(self, path: str) -> tuple[bool, Any]:
        if path in self._values:
            return True, self._values[path]
        longer = self._by_suffix.get(path)
        if longer is not None:
            return True, self._values[longer]
        parts = path.split("/")
        for i in range(1, len(parts) - 1):
            # A one-segment known path ("README.md") would match any directory's file of that name.
            shorter = "/".join(parts[i:])
            if shorter in self._values:
                return True, self._values[shorter]
        return False, None


@dataclass(frozen=True)
class VerifiedAnswer:
    text: str
    sources: tuple[Source, ...]
    removed_urls: int
    unverified_paths: int


def verify_answer(answer: str, evidence: Evidence, language: Language) -> VerifiedAnswer:
    texts = _TEXTS[language]
    cited: dict[str, Source] = {}
    counts = {"removed": 0, "paths": 0}

    def cite(source: Source | None) -> None:
        if source is not None:
            cited.setdefault(normalize_url(source.url), source)

    body = _strip_sources_section(answer, evidence, cite)

    def unverified_link(url: str) -> str:
        counts["removed"] += 1
        origin = evidence.url_mention(url) if is_web_url(url) else ""
        return texts["mentioned_link"].format(origin=origin) if origin else texts["removed"]

    def web_links(text: str) -> str:
        """Bare web URLs in `text`: verified ones stay (and are cited), the rest become a note."""

        def one(match: re.Match[str]) -> str:
            url = clean_url(match.group(0))
            source = evidence.url_source(url)
            if source is not None:
                cite(Source(source.title, url))
                return match.group(0)
            return unverified_link(url) + match.group(0)[len(url):]

        return URL.sub(one, text)

    def tag_link(match: re.Match[str]) -> str:
        targets = [t.group("dq") or t.group("sq") or t.group("bare") or "" for t in _TAG_TARGET.finditer(match.group("attrs"))]
        urls = [clean_url(t.strip()) for t in targets if t.strip()]
        label = web_links(" ".join((match.group("label") or "").split())).replace("[", "(").replace("]", ")")
        if not urls:
            return label  # a tag that links nowhere: its words only
        if all(evidence.url_source(url) is not None for url in urls):
            # One Markdown link (the first target): `link` below cites it like any other.
            return f"[{label or urls[0]}]({urls[0]})" if match.group("label") is not None else urls[0]
        note = unverified_link(urls[0])
        return f"{label} {note}" if label else note

    def prose(segment: str) -> str:
        if "<" in segment:
            segment = _TAG_LINK.sub(tag_link, segment)

        def link(match: re.Match[str]) -> str:
            target, auto, bare = match.group("target"), match.group("auto"), match.group("bare")
            raw = target or auto or bare
            url = clean_url(raw)
            tail = raw[len(url):] if bare else ""
            source = evidence.url_source(url)
            if source is not None:
                cite(Source(source.title, url))  # the link as written: its line anchor may be narrower
                return match.group(0)
            if target is not None:
                # The label stays as plain text; a URL written as the label is checked like any other.
                label = web_links(match.group("label").strip())
                if not is_web_url(url):  # tg:, javascript:, //host, a relative path: keep the words only
                    counts["removed"] += 1
                    return label or texts["removed"]
                note = unverified_link(url)
                return f"{label} {note}" if label else note
            return unverified_link(url) + tail

        segment = _LINKS.sub(link, segment)
        return _mark_paths(segment, evidence, texts, cite, counts)

    def code_block(block: str) -> str:
        def link(match: re.Match[str]) -> str:
            url = clean_url(match.group(0))
            source = evidence.url_source(url)
            if source is not None:
                cite(source)
                return match.group(0)
            counts["removed"] += 1
            return texts["removed_code"] + match.group(0)[len(url):]

        block = URL.sub(link, block)
        unseen = []
        for path in find_paths(block):
            seen, source = evidence.path_source(path)
            if seen:
                cite(source)
            elif path not in unseen:
                unseen.append(path)
        counts["paths"] += len(unseen)
        if unseen:
            block += "\n" + texts["code_paths"].format(paths=", ".join(f"`{p}`" for p in unseen))
        return block

    out = [code_block(part) if fenced else prose(part) for fenced, part in split_fences(body)]
    text = "".join(out).rstrip()

    # A title may be an issue's, written by anyone: plain text on every platform (a URL title stays a URL).
    sources = tuple(Source(plain_line(s.title) or clean_url(s.url), s.url) for s in cited.values())
    # The body and its sources stay apart until rendering: each platform lists `sources` once, from
    # data. Only the warning that nothing was verified belongs to the body, since it qualifies it.
    if not sources:
        text = f"{text}\n\n{texts['no_sources']}"
    return VerifiedAnswer(text, sources, counts["removed"], counts["paths"])


def split_fences(text: str) -> list[tuple[bool, str]]:
    """Text cut into (is_fenced_code, part) pieces, in order; joined they give `text` back.

    A fence opens on a line starting with ``` or ~~~ and closes on a line holding only the same marker
    (trailing blanks allowed). An unclosed fence is prose, as in the old regex. One pass over the lines:
    a regex with a lazy body would rescan to the end of the text from every unclosed opener.
    """
    lines = text.splitlines(keepends=True)
    parts: list[tuple[bool, str]] = []
    prose_start = 0  # index of the first line of the current prose run
    opener: int | None = None
    marker = ""
    for index, line in enumerate(lines):
        bare = line.rstrip("\r\n")
        if opener is None:
            if bare.startswith(("```", "~~~")):
                opener, marker = index, bare[:3]
        elif bare.rstrip(" \t") == marker:
            if prose_start < opener:
                parts.append((False, "".join(lines[prose_start:opener])))
            block = "".join(lines[opener:index + 1])
            newline = len(line) - len(bare)
            # The block ends at its closing marker; the line break after it belongs to the prose.
            parts.append((True, block[: len(block) - newline] if newline else block))
            if newline:
                parts.append((False, line[len(bare):]))
            prose_start, opener = index + 1, None
    if prose_start < len(lines):
        parts.append((False, "".join(lines[prose_start:])))
    return _merge_prose(parts)


def _merge_prose(parts: list[tuple[bool, str]]) -> list[tuple[bool, str]]:
    merged: list[tuple[bool, str]] = []
    for fenced, part in parts:
        if merged and not fenced and not merged[-1][0]:
            merged[-1] = (False, merged[-1][1] + part)
        else:
            merged.append((fenced, part))
    return merged



def _strip_sources_section(answer: str, evidence: Evidence, cite: Callable[[Source | None], None]) -> str:
    """Drop a Sources section the model wrote at the end; its verified links are kept in ours."""
    start = -1
    for heading in _SOURCES_HEADING.finditer(answer):
        start = heading.start()
    if start < 0:
        return answer
    section = answer[start:]
    # Only a trailing list of references is removed, never prose that follows such a heading.
    rest = [line.strip() for line in section.splitlines()[1:] if line.strip()]
    if not all(line.startswith(("-", "*", "+", "[", "<", "http")) or _NUMBERED.match(line) for line in rest):
        return answer
    for url in find_urls(section):
        source = evidence.url_source(url)
        if source is not None:
            cite(source)
    return answer[:start]


def _mark_paths(
    segment: str, evidence: Evidence, texts: dict[str, str], cite: Callable[[Source | None], None], counts: dict[str, int]
) -> str:
    """Mark repository paths no tool produced; a path inside `code` gets the mark after the span.

    Text outside code spans also loses clickable non-web links (tg://, javascript:, mailto: …).
    """

    def mark(token: str) -> str:
        """'' for a verified path, else the note to put after it."""
        seen, source = evidence.path_source(token)
        if seen:
            cite(source)
            return ""
        counts["paths"] += 1
        origin = evidence.path_mention(token)
        return texts["mentioned"].format(origin=origin) if origin else texts["unverified"]

    def plain(text: str) -> str:
        def drop(match: re.Match[str]) -> str:
            counts["removed"] += 1
            return texts["removed"]

        return _mark_bare(_OTHER_SCHEME.sub(drop, text), mark)

    pieces: list[str] = []
    position = 0
    for span in _CODE_SPAN.finditer(segment):
        pieces.append(plain(segment[position : span.start()]))
        code = span.group(0)
        masked = URL.sub(lambda m: " " * len(m.group(0)), code)
        notes = [note for m in PATH.finditer(masked) if (note := mark(m.group(0)))]
        pieces.append(code + (f" {notes[0]}" if notes else ""))
        position = span.end()
    pieces.append(plain(segment[position:]))
    return "".join(pieces)


def _mark_bare(text: str, mark: Callable[[str], str]) -> str:
    masked = URL.sub(lambda m: " " * len(m.group(0)), text)
    out: list[str] = []
    position = 0
    for match in PATH.finditer(masked):
        note = mark(match.group(0))
        if not note:
            continue
        out.append(text[position : match.end()] + f" {note}")
        position = match.end()
    out.append(text[position:])
    return "".join(out)
