"""Thread text made safe to quote in a resolution: core/untrusted_text's rules, code spans kept.

A maintainer's command is the point of quoting them, so text inside `code spans` stays code (its
links still go); everything else becomes plain text (no link, markup or mention).

A link is often the fact itself ("the fix is described in OpenRLHF#741", "follow the single-NPU
tutorial"), so a code-host link to an issue, a pull request or a file, and a docs-site page, are
named in plain words first ("OpenRLHF/OpenRLHF#741", "`docs/…/tutorial.md`"): the reader learns where
to look, and nothing clickable from a stranger's text reaches the answer.
"""
from __future__ import annotations

import re

from core.untrusted_text import drop_links, plain_line

# Bounded classes that exclude their own delimiters: linear on hostile input.
_URL_END = r"[^\s()\[\]<>\"'`]"
_CODE_HOST = re.compile(
    r"(?i)https?://(?:www\.)?(?:github\.com|gitcode\.com)/([A-Za-z0-9_.\-]{1,100})/([A-Za-z0-9_.\-]{1,100})"
    rf"/(issues|pulls?|blob|tree)/([^\s()\[\]<>\"'`#?]{{1,400}}){_URL_END}{{0,400}}"
)
_DOCS_SITE = re.compile(
    r"(?i)https?://([a-z0-9\-]{1,60})\.readthedocs\.io/[a-z_\-]{1,10}/[^\s()\[\]<>\"'`/#?]{1,40}/"
    rf"([^\s()\[\]<>\"'`#?]{{1,300}}){_URL_END}{{0,300}}"
    r"|(?i:https?://docs\.vllm\.ai/(?:projects/([a-z0-9\-]{1,40})/)?[a-z_\-]{1,10}/[^\s()\[\]<>\"'`/#?]{1,40}/)"
    rf"([^\s()\[\]<>\"'`#?]{{1,300}}){_URL_END}{{0,300}}"
)
_MD_LINK_TO = re.compile(r"\[([^\[\]\n]{0,200})\]\((https?://[^()\s]{1,1000})\)")


def _name_of(url: str) -> str:
    """A code-host or docs link in plain words, or "" for any other link."""
    host = _CODE_HOST.fullmatch(url)
    if host:
        owner, name, kind, rest = host.groups()
        if kind.lower() in ("issues", "pull", "pulls"):
            number = rest.split("/", 1)[0]
            return f"{owner}/{name}#{number}" if number.isdigit() else ""
        path = rest.split("/", 1)[1] if "/" in rest else ""
        return f"`{path}`" if path else ""
    docs = _DOCS_SITE.fullmatch(url)
    if docs:
        # docs.vllm.ai hosts vLLM's own docs and, under projects/<name>/, its plugins' (vllm-ascend).
        plugin = docs.group(3)
        project, page = (docs.group(1), docs.group(2)) if docs.group(1) else (f"vllm-{plugin}" if plugin else "vLLM", docs.group(4))
        page = page.removesuffix(".html").rstrip("/")
        return f"{project} docs: {page}" if page else ""
    return ""


def named_links(text: str) -> str:
    """`text` with each code-host or docs link replaced by its plain name; other links left for
    drop_links. "[the guide](url)" becomes "the guide (name)"."""
    if "://" not in text:
        return text

    def markdown(match: re.Match[str]) -> str:
        name = _name_of(match.group(2))
        return f"{match.group(1)} ({name})" if name else match.group(0)

    def bare(match: re.Match[str]) -> str:
        return _name_of(match.group(0)) or match.group(0)

    text = _MD_LINK_TO.sub(markdown, text)
    return _DOCS_SITE.sub(bare, _CODE_HOST.sub(bare, text))


LINK_REMOVED = " (link in the thread)"
# "(<url>)" with its link dropped: the empty brackets stand where the link was.
_EMPTY_BRACKETS = re.compile(r"[ \t]?[(（][ \t]*[)）]")


def plain_sentence(text: str, limit: int = 400) -> str:
    pieces = named_links(text).split("`")
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
                # "see <link>" would otherwise end in the air; "(<link>)" would leave "()" behind.
                if _EMPTY_BRACKETS.search(shown):
                    shown = _EMPTY_BRACKETS.sub("", _EMPTY_BRACKETS.sub(LINK_REMOVED, shown, count=1))
                else:
                    shown += LINK_REMOVED
            out.append(edge_space[0] + shown + edge_space[1])
    line = " ".join("".join(out).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
