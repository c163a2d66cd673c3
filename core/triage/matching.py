"""Which knowledge-base entries a message names: problem patterns, checklist items, code-map
entries, the steps behind a flag, and product facts; only entries of the routed repositories count."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Iterable

from core.knowledge.base import KnowledgeBase
from core.knowledge.schema import ChecklistItem, CodeMapEntry, Note, ProblemPattern
from core.signals import Signals, find_flags

MAX_PATTERNS = 2
MAX_PRODUCT_FACTS = 3  # at most the top three that clear the relevance bar (core/facts_index.py)
_ASCII_EDGE = re.compile(r"[A-Za-z0-9]")


@dataclass(frozen=True)
class _Keyword:
    word: str  # lowercase
    left_edge: bool  # must not be preceded by an ASCII letter/digit
    right_edge: bool  # must not be followed by one

    def found_in(self, low: str) -> bool:
        # str.find is a fast substring search; checking the edges by hand avoids
        # regexes that start with a lookbehind, which `re` cannot skip through.
        start = low.find(self.word)
        while start != -1:
            end = start + len(self.word)
            if (not self.left_edge or start == 0 or not _ascii_alnum(low[start - 1])) and (
                not self.right_edge or end == len(low) or not _ascii_alnum(low[end])
            ):
                return True
            start = low.find(self.word, start + 1)
        return False


def _ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def _keywords(words: Iterable[str]) -> tuple[_Keyword, ...]:
    clean = sorted({w.strip().lower() for w in words if w.strip()})
    return tuple(_Keyword(w, bool(_ASCII_EDGE.match(w[0])), bool(_ASCII_EDGE.match(w[-1]))) for w in clean)


_PATTERN_CACHE: dict[int, tuple[KnowledgeBase, tuple[tuple[ProblemPattern, tuple[_Keyword, ...], frozenset[str]], ...]]] = {}


def _compiled_patterns(kb: KnowledgeBase) -> tuple[tuple[ProblemPattern, tuple[_Keyword, ...], frozenset[str]], ...]:
    cached = _PATTERN_CACHE.get(id(kb))
    if cached is not None and cached[0] is kb:
        return cached[1]
    compiled = []
    for p in kb.patterns:
        flags = frozenset(f for c in p.commands for f in find_flags(c.run))
        compiled.append((p, _keywords(p.keywords_en + p.keywords_zh), flags))
    result = tuple(compiled)
    _PATTERN_CACHE[id(kb)] = (kb, result)
    return result


def _in_scope(products: Sequence[str], repos: tuple[str, ...]) -> bool:
    """An entry applies when it names one of the routed repositories (any entry when none was routed)."""
    return not repos or any(p in repos for p in products)


def _match_patterns(
    text: str, low: str, signals: Signals, kb: KnowledgeBase, repos: tuple[str, ...]
) -> tuple[tuple[ProblemPattern, ...], tuple[ProblemPattern, ...]]:
    tokens = signals.tokens
    flags = set(find_flags(text))
    scored = []
    for index, (pattern, keywords, pattern_flags) in enumerate(_compiled_patterns(kb)):
        if not _in_scope(pattern.products, repos):
            continue
        strong = sum(2 for c in pattern.error_codes if c in signals.error_codes)
        strong += sum(1 for k in keywords if k.found_in(low))
        strong += len(flags & pattern_flags)
        score = strong + sum(1 for f in pattern.features if f in tokens)
        if score:
            scored.append((-score, index, pattern, strong > 0))
    scored.sort(key=lambda item: (item[0], item[1]))
    top = scored[:MAX_PATTERNS]
    return tuple(p for _, _, p, _ in top), tuple(p for _, _, p, strong in top if strong)


def _match_checklist(signals: Signals, kb: KnowledgeBase, repos: tuple[str, ...]) -> tuple[ChecklistItem, ...]:
    tokens = signals.tokens
    return tuple(item for item in kb.checklist if _in_scope(item.products, repos) and any(t in tokens for t in item.triggers))


def _code_entries(low: str, kb: KnowledgeBase, repos: tuple[str, ...]) -> tuple[CodeMapEntry, ...]:
    scored = []
    for index, entry in enumerate(kb.code_map):
        if not _in_scope(entry.products, repos):
            continue
        hits = sum(len(k.word) for k in _keywords(entry.keywords_en + entry.keywords_zh) if k.found_in(low))
        if hits:
            scored.append((-hits, index, entry))
    scored.sort(key=lambda item: (item[0], item[1]))
    return tuple(e for _, _, e in scored[:3])


def _flag_notes(
    text: str, kb: KnowledgeBase, repos: tuple[str, ...], facts: tuple[Any, ...], *, problem: bool,
) -> tuple[tuple[str, Note, tuple[str, ...]], ...]:
    """For each flag the user names (--enforce-eager...), the first knowledge-base step of a routed
    product that uses it. Not for a flag the user sets to a value in a question that reports no
    failure: that flag is their plan ("can I use --max-model-len 131072?"), and a troubleshooting
    step on it ("reduce --max-model-len") answers a failure they do not have."""
    if not repos:
        return ()
    covered = " ".join(f.text.en for f in facts)  # a product fact that explains the flag says it better
    out = []
    for flag in find_flags(text)[:3]:
        if flag in covered or (not problem and _given_a_value(flag, text)):
            continue
        entries = [*((p.steps, p.sources) for p in kb.patterns), *((c.steps, c.sources) for c in kb.error_codes)]
        for notes, sources in entries:
            note = next((n for n in notes if flag in n.text.en and any(p in repos for p in n.products) and not n.when), None)
            if note is not None:
                out.append((flag, note, sources))
                break
    return tuple(out)


def _given_a_value(flag: str, text: str) -> bool:
    """`flag` is followed by a value somewhere in `text`: "--x=anything", or a number, quoted or JSON
    value or path after a space ("--max-model-len 131072"); a word after a space may be prose ("--x do")."""
    start = text.find(flag)
    while start != -1:
        after = text[start + len(flag): start + len(flag) + 4]
        rest = after.lstrip(" ")
        if after.startswith("=") or (rest[:1].isdigit() or rest[:1] in "'\"{[/~."):
            return True
        start = text.find(flag, start + 1)
    return False


def _product_facts(
    text: str, repos: tuple[str, ...], indexed: tuple[str, ...] = (), by_meaning: int = 2
) -> tuple[tuple[Any, ...], frozenset[str]]:
    """Per-product facts of the routed repositories, found by meaning (core/facts_index.py) with the
    trigger rules as a boost, and the ids of those a trigger named (only they may be a conclusion:
    a fact found by meaning is related, not proof that this is that failure).

    `indexed` are fact ids the knowledge index returned as passages. `by_meaning` caps the facts no
    trigger named: none when something already explains the message. None if that module is absent
    or broken."""
    if not repos:
        return (), frozenset()
    try:
        from core.facts_index import select_product_facts  # noqa: PLC0415 - optional knowledge
        from core.knowledge.product_facts import trigger_hits  # noqa: PLC0415
    except ImportError:
        return (), frozenset()
    try:
        facts = tuple(select_product_facts(text, repos, limit=MAX_PRODUCT_FACTS, boosted=indexed, by_meaning=by_meaning))
        named = frozenset(h.fact.id for h in trigger_hits(text, repos)) & {f.id for f in facts}
        return facts, named
    except Exception:  # noqa: BLE001 - a broken fact file must not take the offline answer down
        return (), frozenset()
