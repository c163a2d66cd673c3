"""The knowledge index's passages in an answer: the lines that share the question's terms, within
what is left of the answer's budget, with who wrote an issue and the release a doc was read at."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from core.index.passage import Passage
from core.messages import Source
from core.triage.texts import Text
from core.untrusted_text import drop_links, issue_label, plain_line

MAX_PASSAGES = 3
PASSAGE_CHARS = 320
MIN_PASSAGE_CHARS = 160
ANSWER_BUDGET = 1600  # characters before the sources: about one chat screen


_TERM = re.compile(r"[A-Za-z][A-Za-z0-9_\-.]{2,40}|[\u4e00-\u9fff]{2,8}")
_STOP = frozenset(
    "the and for with how what does this that from are can not use using when why which where into there have has you your "
    "是否 怎么 如何 什么 为什么 可以 哪个 问题".split()
)


def _question_terms(text: str) -> set[str]:
    terms = set()
    for m in _TERM.finditer(text[:4000]):
        word = m.group(0).lower()
        if word in _STOP:
            continue
        if word.isascii():
            terms.add(word)
        else:  # Chinese runs: their 2-character pieces, so 量化配置 meets 量化
            terms.update(word[i : i + 2] for i in range(len(word) - 1))
    return terms


_ROLE_HEADING = re.compile(r"^(maintainer|reporter|user) @([^\s:]{1,100}):$")  # core/index/issues.py writes these


def passage_excerpt(passage: Passage, terms: set[str], limit: int = PASSAGE_CHARS) -> str:
    """The passage lines that share the question's terms (the first lines when none do), within `limit`."""
    lines = [_unlinked(ln) for ln in passage.text.splitlines() if ln.strip() and not ln.strip().startswith("```")]
    lines = [ln for ln in lines if ln]
    scored = [(sum(1 for term in terms if term in ln.lower()), i, ln) for i, ln in enumerate(lines)]
    answer_at = next((i for i, ln in enumerate(lines) if _ROLE_HEADING.match(ln)), None) if passage.kind == "issue" else None
    if answer_at is not None:
        # A thread's answer rarely repeats the question's words: after the report's best line, the
        # comments in order (who said what is the point of quoting a thread).
        report = sorted(scored[:answer_at], key=lambda s: (-s[0], s[1]))[:1]
        chosen = report + [(0, i, _ROLE_HEADING.sub(r"\1 \2:", ln)) for i, ln in enumerate(lines) if i >= answer_at]
    else:
        hits = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
        chosen = sorted(hits, key=lambda s: s[1]) if hits else scored[:2]
    out, size = [], 0
    for _, _, ln in chosen:
        if size + len(ln) > limit:
            if not out:
                out.append(ln[: limit - 1] + "…")
            break
        out.append(ln)
        size += len(ln) + 3
    return " … ".join(out)


# Links inside quoted repository text are not our citations (the passage's permalink is), and a
# cut excerpt would show half a URL that leads nowhere: keep a link's words, drop every URL, in any
# letter case, and the scheme-less hosts chat apps link by themselves (core/untrusted_text.py).
def _unlinked(line: str) -> str:
    return drop_links(line).strip()


def _passages_block(passages: Sequence[Passage], text: str, t: Text, used: int = 0,
                    outcomes: Mapping[str, str] | None = None) -> tuple[str, list[Source]]:
    """Up to three passages; their excerpts share what is left of the answer's budget (never under 160 chars).
    `outcomes`: for a resolved thread (by its url), how it was resolved, shown instead of an excerpt."""
    chosen = [p for p in passages if isinstance(p, Passage)][:MAX_PASSAGES]
    if not chosen:
        return "", []
    terms = _question_terms(text)
    limit = max(MIN_PASSAGE_CHARS, min(PASSAGE_CHARS, (ANSWER_BUDGET - used) // len(chosen) - 80))
    lines, sources = [], []
    for p in chosen:
        outcome = (outcomes or {}).get(p.url, "")
        excerpt = outcome[:limit] if outcome else passage_excerpt(p, terms, limit).replace("`", "'")
        # Titles are written by whoever wrote the doc or opened the issue: plain text, never markup.
        path = p.path.replace("`", "'")
        where = f"{p.repo}: `{path}`"
        if p.kind == "issue":  # a reader (and the research model) must see who wrote it
            where += ", " + issue_label(p.path, p.title, p.text, t.language)
        if p.release:  # read at the user's release (core/releases), not at the indexed branch
            where += ", " + t("as_of", tag=p.release)
        lines.append(f"- **{plain_line(p.title)}** ({where})\n  > {excerpt}")
        sources.append(Source(title=f"{p.repo}: {p.path}", url=p.url))
    return t("passages") + "\n" + "\n".join(lines), sources
