"""Verified citations: an answer may cite only what a tool returned during this turn.

`Evidence` records every URL and repository path that appeared in a tool
result the model saw (after truncation), plus the canonical URLs of the
knowledge base. `verify_answer` then keeps the citations it can trace, drops
or marks the rest, and ends the answer with a Sources list of the verified
links.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from core.messages import Language, Source

_URL_CHARS = r"[^\s<>()\[\]{}\"'`，。；：！？、）】」』]"
URL = re.compile(rf"https?://{_URL_CHARS}+")
_TRAILING = ".,;:!?*_~"

_EXTENSIONS = (
    "py|pyi|pyx|md|rst|txt|json|jsonl|yaml|yml|toml|cfg|ini|conf|sh|bash|c|cc|cpp|cxx|h|hh|hpp|cu|cuh|"
    "go|rs|java|js|ts|proto|cmake|sql|ipynb|patch|diff|in|j2|jinja|html|css|xml|csv|mk|bzl|bazel|lock"
)
# A repository path: relative, at least one '/', a known extension (or a Dockerfile/Makefile), optional :line.
PATH = re.compile(
    rf"(?<![\w./:@~\\-])((?:[\w.-]+/)+(?:[\w.-]*\w\.(?:{_EXTENSIONS})|Dockerfile(?:\.[\w-]+)?|Makefile|CMakeLists\.txt))"
    r"(?::\d+(?:-\d+)?|#L\d+(?:-L?\d+)?)?(?![\w/])"
)
_BLOB_PATH = re.compile(r"/(?:blob|tree|raw)/[^/]+/(.+)$")

_MD_LINK = re.compile(
    rf"\[(?P<label>[^\]\n]*)\]\((?P<mdurl>https?://[^)\s]+)\)|<(?P<auto>https?://[^>\s]+)>|(?P<bare>https?://{_URL_CHARS}+)"
)
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_FENCE = re.compile(r"^(```|~~~)[^\n]*\n.*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_SOURCES_HEADING = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*|\*\*)?(?:sources|references|citations|参考资料|参考|来源|引用|出处)(?:\*\*)?[ \t]*[:：]?(?:\*\*)?[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)

_TEXTS = {
    "en": {
        "unverified": "*(unverified)*",
        "removed": "*(unverified link removed)*",
        "removed_code": "<unverified link removed>",
        "code_paths": "*(unverified paths in the block above: {paths})*",
        "sources": "**Sources**",
        "no_sources": "_No tool-verified sources: treat this answer as unverified._",
    },
    "zh": {
        "unverified": "*（未经验证）*",
        "removed": "*（未经验证的链接已移除）*",
        "removed_code": "<未经验证的链接已移除>",
        "code_paths": "*（上面代码块中未经验证的路径：{paths}）*",
        "sources": "**来源**",
        "no_sources": "_没有经工具验证的来源：请把本回答视为未经验证。_",
    },
}


def clean_url(url: str) -> str:
    """A URL as found in text, without trailing punctuation or an unbalanced ')'."""
    url = url.rstrip(_TRAILING)
    while url.endswith(")") and url.count(")") > url.count("("):
        url = url[:-1].rstrip(_TRAILING)
    return url


def normalize_url(url: str) -> str:
    """Comparison form: no fragment (line anchors may differ), no trailing '/' or '.git', lower-case host."""
    parts = urlsplit(clean_url(url))
    host = parts.netloc.lower().removeprefix("www.")
    path = parts.path.rstrip("/").removesuffix(".git")
    return urlunsplit((parts.scheme.lower(), host, path, parts.query, ""))


def _bare_path(token: str) -> str:
    return re.sub(r"(?::\d+(?:-\d+)?|#L\d+(?:-L?\d+)?)$", "", token)


def find_urls(text: str) -> list[str]:
    return [clean_url(m.group(0)) for m in URL.finditer(text)]


def find_paths(text: str) -> list[str]:
    masked = URL.sub(lambda m: " " * len(m.group(0)), text)
    return [_bare_path(m.group(0)) for m in PATH.finditer(masked)]


class Evidence:
    """What tools returned during one answer. Not shared between answers."""

    def __init__(self, allowed_urls: Iterable[str] = ()) -> None:
        self._urls: dict[str, Source] = {}
        self._allowed = {normalize_url(u) for u in allowed_urls}
        self._paths: dict[str, Source | None] = {}

    def allow(self, urls: Iterable[str]) -> None:
        self._allowed.update(normalize_url(u) for u in urls)

    def record(self, text: str, sources: Sequence[Source] = ()) -> None:
        titles = {normalize_url(s.url): s for s in sources}
        for url in find_urls(text):
            key = normalize_url(url)
            source = titles.get(key) or self._urls.get(key) or Source(url, url)
            self._urls[key] = source
            blob = _BLOB_PATH.search(urlsplit(url).path)
            if blob:
                self._paths[blob.group(1)] = source
        for path in find_paths(text):
            self._paths.setdefault(path, None)

    @property
    def urls(self) -> tuple[Source, ...]:
        return tuple(self._urls.values())

    def url_source(self, url: str) -> Source | None:
        key = normalize_url(url)
        if key in self._urls:
            return self._urls[key]
        if key in self._allowed:
            cleaned = clean_url(url)
            return Source(cleaned, cleaned)
        return None

    def path_source(self, path: str) -> tuple[bool, Source | None]:
        """Whether a path was seen (exact, or one is a suffix of the other at a '/'), and its permalink."""
        path = _bare_path(path)
        if path in self._paths:
            return True, self._paths[path]
        for known, source in self._paths.items():
            if known.endswith("/" + path) or path.endswith("/" + known):
                return True, source
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

    def prose(segment: str) -> str:
        def link(match: re.Match[str]) -> str:
            raw = match.group("mdurl") or match.group("auto") or match.group("bare")
            url = clean_url(raw)
            tail = raw[len(url):] if match.group("bare") else ""
            source = evidence.url_source(url)
            if source is not None:
                cite(Source(source.title, url))  # the link as written: its line anchor may be narrower
                return match.group(0)
            counts["removed"] += 1
            if match.group("mdurl"):
                label = match.group("label").strip()
                return f"{label} {texts['removed']}" if label else texts["removed"]
            return texts["removed"] + tail

        segment = _MD_LINK.sub(link, segment)
        return _mark_paths(segment, evidence, texts["unverified"], cite, counts)

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

    out: list[str] = []
    position = 0
    for fence in _FENCE.finditer(body):
        out.append(prose(body[position : fence.start()]))
        out.append(code_block(fence.group(0)))
        position = fence.end()
    out.append(prose(body[position:]))
    text = "".join(out).rstrip()

    sources = tuple(cited.values())
    lines = [texts["sources"], ""]
    lines += [f"- [{_label(s.title)}]({s.url})" for s in sources] or [texts["no_sources"]]
    return VerifiedAnswer(f"{text}\n\n" + "\n".join(lines), sources, counts["removed"], counts["paths"])


def _label(title: str) -> str:
    return title.replace("[", "(").replace("]", ")").replace("\n", " ")


def _strip_sources_section(answer: str, evidence: Evidence, cite: Callable[[Source | None], None]) -> str:
    """Drop a Sources section the model wrote at the end; its verified links are kept in ours."""
    headings = list(_SOURCES_HEADING.finditer(answer))
    if not headings:
        return answer
    start = headings[-1].start()
    section = answer[start:]
    # Only a trailing list of references is removed, never prose that follows such a heading.
    rest = [line.strip() for line in section.splitlines()[1:] if line.strip()]
    if not all(line.startswith(("-", "*", "+", "[", "<", "http")) or re.match(r"^\d+[.)]", line) for line in rest):
        return answer
    for url in find_urls(section):
        source = evidence.url_source(url)
        if source is not None:
            cite(source)
    return answer[:start]


def _mark_paths(
    segment: str, evidence: Evidence, marker: str, cite: Callable[[Source | None], None], counts: dict[str, int]
) -> str:
    """Mark repository paths no tool returned; a path inside `code` gets the mark after the span."""

    def check(token: str) -> bool:
        seen, source = evidence.path_source(token)
        if seen:
            cite(source)
        else:
            counts["paths"] += 1
        return seen

    pieces: list[str] = []
    position = 0
    for span in _CODE_SPAN.finditer(segment):
        pieces.append(_mark_bare(segment[position : span.start()], check, marker))
        code = span.group(0)
        masked = URL.sub(lambda m: " " * len(m.group(0)), code)
        unseen = [m for m in PATH.finditer(masked) if not check(m.group(0))]
        pieces.append(code + (f" {marker}" if unseen else ""))
        position = span.end()
    pieces.append(_mark_bare(segment[position:], check, marker))
    return "".join(pieces)


def _mark_bare(text: str, check: Callable[[str], bool], marker: str) -> str:
    masked = URL.sub(lambda m: " " * len(m.group(0)), text)
    out: list[str] = []
    position = 0
    for match in PATH.finditer(masked):
        if check(match.group(0)):
            continue
        out.append(text[position : match.end()] + f" {marker}")
        position = match.end()
    out.append(text[position:])
    return "".join(out)
