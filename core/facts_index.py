"""Knowledge-base facts found by meaning: every fact is a small document, searched like a passage.

A fact used to fire only when one of its trigger phrases occurred in the question, so the same
question in other words ("8-bit weights and activations" for W8A8, "bring up a server" for a
launch) got nothing. Here each product fact and each problem pattern becomes a document (titles,
texts and keywords in both languages, its products, its citation) that

- `python -m bot index` writes into the knowledge index (core/index/builder.py), one unit per
  product under the pseudo path `kb/<product-key>/<id>`, so `search` and the research agent find
  facts like any other passage;
- this module searches in memory with BM25 over the same tokens as the index
  (core/index/tokenizer.py, the bilingual bridge of core/index/terms.py), so a fresh clone with no
  index still finds facts by meaning.

`select_product_facts` is what the offline answer uses: relevance to the question, with the
existing trigger rules as a strong boost, only for the routed products, and only the few facts
that clear a relevance bar (a fact that does not fit must not be shown).
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from core.index.ranking import plan_query
from core.index.tokenizer import tokenize
from core.knowledge.base import KnowledgeBase
from core.knowledge.loader import load_knowledge_base
from core.messages import Source
from core.knowledge.loader import load_product_facts
from core.knowledge.product_facts import trigger_hits
from core.knowledge.schema import ProductFact

DocumentKind = Literal["fact", "pattern"]
PATH_PREFIX = "kb/"

# BM25 over a few hundred short documents; fields weighted like the index's BM25F (title repeated).
_K1 = 1.2
_B = 0.75
_TITLE_REPEAT = 2
_KEYWORD_REPEAT = 2
# A product's name chose the product; among its facts it only matters where a fact joins two products
# ("serve msModelSlim weights with vllm-ascend"), so it counts a little.
_NAME_WEIGHT = 0.25
_FLOOR_TERMS = 2.0  # the share's denominator is at least this many of the rarest terms

# The bar a fact must clear, as the share of the question's own weight the fact covers (see
# `_Relevance.share`). Measured on eval/real_issues_dev.jsonl, eval/index_dev.jsonl and the
# paraphrases in tests/core/test_facts_index.py (docs/knowledge-base.md has the figures).
MIN_TOPIC_SHARE = 0.1  # the fact's title and keywords must hold this much of the question's weight
MIN_RELEVANCE = 0.55  # share + topic share, with no trigger hit
MIN_RELEVANCE_WEAK_TRIGGER = 0.3  # a plain-word trigger hit ("install", "OOM") needs some meaning too
MIN_MATCHED = 2  # distinct question terms a fact must share (one shared word is a coincidence)
KEEP_RATIO = 0.7  # a fact scoring under this share of the best one is not shown beside it
MAX_FACTS = 3
MAX_BY_MEANING = 2  # of those, facts no trigger named: related facts must not crowd the answer


@dataclass(frozen=True)
class FactDocument:
    """One knowledge-base entry as a searchable document."""

    id: str
    kind: DocumentKind
    products: tuple[str, ...]  # canonical owner/name
    title_en: str
    title_zh: str
    text_en: str
    text_zh: str
    keywords: tuple[str, ...]
    citation: Source  # the fact's own source: its URL or owner/name:path resolved, never the fact text

    @property
    def title(self) -> str:
        return self.title_en if self.title_en == self.title_zh else f"{self.title_en} / {self.title_zh}"

    @property
    def text(self) -> str:
        """Both languages and the keywords, as the index stores and quotes it."""
        lines = [self.text_en, self.text_zh]
        if self.keywords:
            lines.append("keywords: " + ", ".join(self.keywords))
        return "\n".join(lines)

    def path(self, product: str, kb: KnowledgeBase | None = None) -> str:
        repo = (kb or load_knowledge_base()).repository(product)
        key = repo.key if repo is not None else product.rsplit("/", 1)[-1].lower()
        return f"{PATH_PREFIX}{key}/{self.id}"


def is_fact_path(path: str) -> bool:
    return path.startswith(PATH_PREFIX)


def fact_id_of(path: str) -> str:
    """`kb/<product>/<id>` -> `<id>` (empty for any other path)."""
    return path.rsplit("/", 1)[-1] if is_fact_path(path) else ""


def _from_fact(fact: ProductFact) -> FactDocument:
    return FactDocument(
        fact.id, "fact", tuple(fact.products), fact.title.en, fact.title.zh,
        fact.text.en + (" " + " ".join(fact.commands) if fact.commands else ""),
        fact.text.zh, fact.triggers, fact.citation(),
    )


def _from_patterns(kb: KnowledgeBase) -> list[FactDocument]:
    out = []
    for p in kb.patterns:
        en = " ".join(n.text.en for n in (*p.causes, *p.steps))
        zh = " ".join(n.text.zh for n in (*p.causes, *p.steps))
        citation = kb.source(p.sources[0]) if p.sources else Source("", "")
        out.append(FactDocument(p.id, "pattern", tuple(p.products), p.title.en, p.title.zh, en, zh,
                                (*p.keywords_en, *p.keywords_zh, *p.error_codes), citation))
    return out


def fact_documents(kb: KnowledgeBase | None = None, facts: Iterable[ProductFact] | None = None) -> tuple[FactDocument, ...]:
    """Every product fact and problem pattern as a document (what `bot index` writes)."""
    kb = kb or load_knowledge_base()
    pool = load_product_facts() if facts is None else tuple(facts)
    return (*(_from_fact(f) for f in pool), *_from_patterns(kb))


# ------------------------------------------------------------------ in-memory search


@lru_cache(maxsize=1)
def _routing_tokens() -> frozenset[str]:
    """Tokens that name a product (or the platform): they chose the product and say little about
    which of its facts applies (every fact of a product repeats its name)."""
    kb = load_knowledge_base()
    words: list[str] = ["npu", "ascend", "昇腾", "华为", "huawei"]
    for r in kb.repositories:
        words += [r.key, r.repo, r.display_name, *r.aliases]
    out: set[str] = set()
    for w in words:
        out.update(tokenize(w.replace("/", " ")))
    return frozenset(out)


# How people write a bit width in prose: "8-bit weights and 8-bit activations", "权重8bit激活8bit",
# "int8 weights, int8 activations". Facts name the scheme (W8A8); the query gets that name too.
# Linear: single character classes with bounded gaps, no nesting.
_WEIGHT_BITS = re.compile(r"(?:int|(?<![\w.])(?=\d{1,2}[\s-]?(?:bit|比特|位)))(\d{1,2})[\s-]?(?:bits?|比特|位)?[\s-]{0,2}(?:weights?|权重)"
                          r"|(?:weights?|权重)[^\d\n]{0,12}?(?:int)?(\d{1,2})[\s-]?(?:bits?|比特|位)?", re.IGNORECASE)
_ACT_BITS = re.compile(r"(?:int|(?<![\w.])(?=\d{1,2}[\s-]?(?:bit|比特|位)))(\d{1,2})[\s-]?(?:bits?|比特|位)?[\s-]{0,2}(?:activations?|激活)"
                       r"|(?:activations?|激活)[^\d\n]{0,12}?(?:int)?(\d{1,2})[\s-]?(?:bits?|比特|位)?", re.IGNORECASE)
# English ways of saying "launch" that the bilingual bridge does not know (it maps 启动/拉起 to it).
_LAUNCH = re.compile(r"\b(?:bring|spin|stand|boot|fire|start)(?:s|ing|ed)?\s+(?:\w+\s+){0,2}?up\b|\bup and running\b", re.IGNORECASE)


def _expanded(question: str) -> str:
    """The question plus the names facts use for what it says in other words."""
    extra: list[str] = []
    weights = [a or b for a, b in _WEIGHT_BITS.findall(question)]
    acts = [a or b for a, b in _ACT_BITS.findall(question)]
    if weights and acts:
        extra.append(f"W{weights[0]}A{acts[0]}")
    if _LAUNCH.search(question):
        extra.append("launch start")
    return question + ("\n" + " ".join(extra) if extra else "")


_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ed", "es", "e", "s")


def _conflate(token: str) -> str:
    """A word's stem for fact matching: the index tokenizer's light stemmer leaves "serve" and
    "serving" (serv), "quantize" and "quantization" apart; facts are few and short, so every form
    of a word must meet. Identifiers, flags and CJK words stay as they are."""
    if not token.isascii() or not token.isalpha() or len(token) <= 4:
        return token
    for suffix in _SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) >= 4:
            return token[: -len(suffix)]
    return token


def _terms(text: str) -> list[str]:
    return [_conflate(t) for t in tokenize(text)]


_IDENTIFIER_JOINT = re.compile(r"[A-Za-z0-9][_\-](?=[A-Za-z0-9])")
_LONG_IDENTIFIER_JOINTS = 2  # three parts or more


def _keyword_terms(keywords: Iterable[str]) -> list[str]:
    """The terms a fact's keywords make it about. A long identifier keyword counts whole, not by its
    parts: `enable_transpose_kv_cache_by_block` is not about "enable", "kv" or "block", and a
    question whose own flag splits into those words (`--enable-prefix-caching`, "KV block size")
    must not meet it there. A two-part name keeps its parts: `w_bit` is about weight bits."""
    terms: list[str] = []
    for keyword in keywords:
        whole = _terms(keyword)
        if " " not in keyword.strip() and len(_IDENTIFIER_JOINT.findall(keyword)) >= _LONG_IDENTIFIER_JOINTS:
            whole = whole[:1] + [t for t in whole[1:] if _IDENTIFIER_JOINT.search(t)]
        terms.extend(whole)
    return terms


@dataclass(frozen=True)
class _Relevance:
    score: float  # BM25
    share: float  # BM25 over the best the question could score on these documents (0..1)
    matched: int  # distinct question terms the document holds
    topic_share: float  # the question's weight (idf) held by terms of the fact's title or keywords (0..1)


class FactIndex:
    """BM25 over fact documents, with the knowledge index's tokenizer and query reading."""

    def __init__(self, documents: Sequence[FactDocument]) -> None:
        self.documents = tuple(documents)
        self._tf: list[Counter[str]] = []
        self._topic: list[frozenset[str]] = []
        for doc in self.documents:
            topic = _terms(doc.title_en + "\n" + doc.title_zh) * _TITLE_REPEAT
            topic += _keyword_terms(doc.keywords) * _KEYWORD_REPEAT
            self._tf.append(Counter(_terms(doc.text_en + "\n" + doc.text_zh) + topic))
            self._topic.append(frozenset(topic))
        self._length = [sum(tf.values()) for tf in self._tf]
        self._avg = (sum(self._length) / len(self._length)) if self._length else 1.0
        df: Counter[str] = Counter()
        for tf in self._tf:
            df.update(tf.keys())
        n = max(len(self.documents), 1)
        self._idf = {t: math.log1p((n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self._floor = _FLOOR_TERMS * max(self._idf.values(), default=1.0) * (_K1 + 1) / 2

    def relevance(self, question: str, wanted: Iterable[int]) -> dict[int, _Relevance]:
        """Relevance of the documents at positions `wanted` to `question` (only those sharing a term)."""
        plan = plan_query(_expanded(question))
        skip = _routing_tokens()
        weights: dict[str, float] = {}
        names: set[str] = set()
        for token, weight in plan.weights.items():
            term = _conflate(token)
            if term not in self._idf or (token.isdigit() and len(token) <= 2):  # "8 cards", "Qwen3": counts, not topics
                continue
            if token in skip:
                weight *= _NAME_WEIGHT
                names.add(term)
            weights[term] = max(weights.get(term, 0.0), weight)
        if not weights:
            return {}
        # The best a document could score: each term once at a typical strength, as search.py's ceiling;
        # never less than a few rare terms' worth, so two common words cannot make a "full" match.
        ceiling = max(sum(w * self._idf[t] * (_K1 + 1) / 2 for t, w in weights.items()), self._floor)
        question_weight = max(sum(w * self._idf[t] for t, w in weights.items() if t not in names), 1e-9)
        out: dict[int, _Relevance] = {}
        for i in wanted:
            tf = self._tf[i]
            norm = _K1 * (1 - _B + _B * self._length[i] / self._avg)
            score, matched, topic_weight = 0.0, 0, 0.0
            for term, weight in weights.items():
                f = tf.get(term)
                if f:
                    score += weight * self._idf[term] * f * (_K1 + 1) / (f + norm)
                    if term not in names:  # a product's name is not evidence of what the fact is about
                        matched += 1
                        if term in self._topic[i]:  # what the fact is about, not a word it uses
                            topic_weight += weight * self._idf[term]
            if matched:
                out[i] = _Relevance(score, min(1.0, score / ceiling), matched, min(1.0, topic_weight / question_weight))
        return out


@lru_cache(maxsize=4)
def _index_for(facts: tuple[ProductFact, ...]) -> FactIndex:
    # Only product facts: patterns are matched by their keywords in triage (their bar stays high).
    return FactIndex([_from_fact(f) for f in facts])


def select_product_facts(
    text: str,
    repos: Sequence[str],
    limit: int = MAX_FACTS,
    facts: Iterable[ProductFact] | None = None,
    boosted: Iterable[str] = (),
    by_meaning: int = MAX_BY_MEANING,
) -> list[ProductFact]:
    """The few product facts of `repos` that answer `text`, best first.

    A fact is shown when the question names one of its exact identifiers or error strings (a
    trigger of weight 3, as before), or when it is relevant by meaning: it shares at least two of
    the question's terms, its title or keywords hold part of the question's weight, and it covers
    enough of the question (`MIN_RELEVANCE`; less when a plain trigger word also hit). `boosted` holds fact ids the knowledge index ranked among the question's
    passages: they count as a plain trigger hit. `by_meaning` caps the facts no trigger named (0 when
    the answer already has its conclusion, e.g. a version mismatch). Facts well below the best one are dropped, so a
    strong answer is not diluted by loosely related ones. With no repository every product's facts
    compete, but only an exact identifier (or a strong meaning match) admits one.
    """
    if limit <= 0 or not isinstance(text, str) or not text.strip():
        return []
    pool = load_product_facts() if facts is None else tuple(facts)
    wanted = {r.lower() for r in repos}
    positions = [i for i, f in enumerate(pool) if not wanted or any(p.lower() in wanted for p in f.products)]
    if not positions:
        return []
    index = _index_for(pool)
    relevance = index.relevance(text[:4000], positions)
    triggers = {s.fact.id: s for s in trigger_hits(text, repos, facts=pool)}
    boost = set(boosted)
    ranked: list[tuple[int, float, float, int, ProductFact]] = []  # strong hits, rank value, relevance, order
    for i in positions:
        fact = pool[i]
        rel = relevance.get(i)
        hit = triggers.get(fact.id)
        strong = hit.strong if hit else 0
        weak = hit is not None or fact.id in boost
        relevance_value = (rel.share + rel.topic_share) if rel else 0.0
        if strong:
            admitted = True
        elif by_meaning <= 0 and not weak:
            admitted = False
        elif rel is None or rel.matched < MIN_MATCHED or rel.topic_share < MIN_TOPIC_SHARE:
            admitted = False  # sharing words is not enough: what the fact is about must be asked
        else:
            admitted = relevance_value >= (MIN_RELEVANCE_WEAK_TRIGGER if weak else MIN_RELEVANCE)
        if admitted:
            # Exact identifiers first (the old rule's strongest signal), then meaning plus trigger weight.
            bonus = (0.1 * hit.score if hit else 0.0) + (0.1 if fact.id in boost else 0.0)
            ranked.append((strong, relevance_value + bonus, relevance_value, i, fact))
    if not ranked:
        return []
    ranked.sort(key=lambda r: (-r[0], -r[1], r[3]))
    # Loosely related facts are not shown beside a much better one (an exact identifier always is).
    best = max(r[2] for r in ranked)
    kept, unnamed = [], 0
    for strong, _, value, _, fact in ranked:
        if strong > 0:
            kept.append(fact)
        elif value >= KEEP_RATIO * best and (fact.id in triggers or unnamed < by_meaning):
            kept.append(fact)
            unnamed += fact.id not in triggers
    return kept[:limit]
