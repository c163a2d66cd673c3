"""Matching product facts to a question: which facts' triggers a text names, and how strongly.

Facts (core/knowledge/products/<product>.json, see docs/knowledge.md) carry what a maintainer of
*each* product would say to a frequent question (a setting and its default, a limit, the fix for
an error), so triage can answer a MindIE-Motor or msModelSlim question with that product's own
advice instead of vllm-ascend's. They are loaded and validated by core/knowledge/loader.py.

Matching is plain substring search with word-boundary checks done by hand, so
its cost is linear in the text for each trigger and no regex can backtrack.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Sequence

from core.knowledge.loader import load_product_facts
from core.knowledge.schema import ProductFact
from core.signals import find_chips


# ----------------------------------------------------------------- matching


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _occurs(trigger: str, text: str) -> bool:
    """`trigger` (lowercase) occurs in `text` (lowercase); ASCII triggers on word boundaries.

    A boundary is only required on a side where the trigger itself starts or ends
    with a word character, so `--enforce-eager` and `npu-smi` still match after a
    space or inside a longer command line. Each find() is linear; no regex is used.
    """
    if not trigger.isascii():
        return trigger in text
    need_left, need_right = _is_word(trigger[0]), _is_word(trigger[-1])
    start = text.find(trigger)
    while start != -1:
        end = start + len(trigger)
        left_ok = not need_left or start == 0 or not _is_word(text[start - 1])
        right_ok = not need_right or end == len(text) or not _is_word(text[end])
        if left_ok and right_ok:
            return True
        start = text.find(trigger, start + 1)
    return False


def trigger_weight(trigger: str) -> int:
    """How specific a trigger is: an identifier, env var or error string beats a plain phrase.

    3: looks like an identifier (UPPER_CASE, snake_case, CamelCase, dotted, a
       flag, digits mixed with letters, a path), an error sentence of four or
       more words, or a CJK phrase of 6+ chars;
    2: a shorter multi-word phrase or a CJK phrase of 3-5 chars;
    1: a single plain word or a two-character CJK word (安装, 日志).
    """
    t = trigger.strip()
    if not t.isascii():
        n = sum(1 for ch in t if not ch.isspace())
        if any(ch.isascii() and (ch == "_" or ch.isdigit()) for ch in t):
            return 3
        return 3 if n >= 6 else 2 if n >= 3 else 1
    has_upper_inside = any(ch.isupper() for ch in t[1:])
    identifier = (
        "_" in t
        or t.startswith("-")
        or any(ch in t for ch in "./=:")
        or (any(ch.isdigit() for ch in t) and any(ch.isalpha() for ch in t))
        or (has_upper_inside and " " not in t)
        or t.isdigit()
    )
    if identifier or len(t.split()) >= 4:
        return 3
    return 2 if " " in t or "-" in t else 1


@dataclass(frozen=True)
class TriggerHit:
    """How a fact's triggers met a text (what `trigger_hits` ranks by)."""

    strong: int  # distinct hits of weight 3: identifiers, env vars, error strings
    score: int
    hits: int
    order: int
    fact: ProductFact


def match_product_facts(
    text: str,
    repos: Sequence[str],
    limit: int = 4,
    facts: Iterable[ProductFact] | None = None,
) -> list[ProductFact]:
    """Facts of `repos` (all products when empty) whose triggers occur in `text`, best first.

    Ranked first by how many specific triggers hit (weight 3 in `trigger_weight`:
    identifiers, env vars, error strings), so one exact name beats any number of
    plain phrases; then by the summed weight, the number of hits, and file order.
    See `trigger_hits` for what counts. Offline answers select facts by meaning
    (core/facts_index.py), with these hits as a boost.
    """
    if limit <= 0:
        return []
    return [s.fact for s in trigger_hits(text, repos, facts)[:limit]]


def trigger_hits(text: str, repos: Sequence[str], facts: Iterable[ProductFact] | None = None) -> list[TriggerHit]:
    """Every fact of `repos` (all products when empty) with a trigger in `text`, best first.

    A trigger that occurs only inside a longer trigger that also hit ("out of memory"
    inside "out of memory, need block") is not separate evidence and counts for nothing,
    so a generic phrase never drags in facts the specific error string rules out.
    With no repository given, a fact whose only hits are single plain words
    ("install", "安装") is left out: across all nine products one common word does
    not say which product's advice applies.
    """
    if not isinstance(text, str) or not text.strip():
        return []
    pool = load_product_facts() if facts is None else tuple(facts)
    wanted = {r.lower() for r in repos}
    lowered = text.lower()
    hits_by_fact: list[tuple[int, ProductFact, list[tuple[str, int]]]] = []
    matched: set[str] = set()
    for order, fact in enumerate(pool):
        if wanted and not any(p.lower() in wanted for p in fact.products):
            continue
        hit = [(t, w) for t, w in _prepared(fact.triggers) if _occurs(t, lowered)]
        if hit:
            hits_by_fact.append((order, fact, hit))
            matched.update(t for t, _ in hit)
    subsumed = _subsumed(matched, lowered)
    scored: list[TriggerHit] = []
    for order, fact, hit in hits_by_fact:
        counted = [w for t, w in hit if t not in subsumed]
        if counted and (wanted or max(counted) > 1):
            strong = sum(1 for w in counted if w >= 3)
            scored.append(TriggerHit(strong, sum(counted), len(counted), order, fact))
    scored.sort(key=lambda s: (-s.strong, -s.score, -s.hits, s.order))
    return scored


def _subsumed(matched: set[str], text: str) -> set[str]:
    """Matched triggers that never occur in `text` outside a longer matched trigger."""
    out: set[str] = set()
    for short in matched:
        for long in matched:
            if len(long) <= len(short) or short not in long:
                continue
            # Occurrences of `short` not accounted for by occurrences of `long`.
            if text.count(short) - text.count(long) * long.count(short) <= 0:
                out.add(short)
                break
    return out


@lru_cache(maxsize=4096)
def _prepared(triggers: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    # Weight from the original spelling (CamelCase, UPPER_CASE), match on the lowercase form.
    out: dict[str, int] = {}
    for t in triggers:
        low = t.strip().lower()
        if low:
            out[low] = max(out.get(low, 0), trigger_weight(t))
    return tuple(out.items())


def products_of_identifiers(
    text: str,
    facts: Iterable[ProductFact] | None = None,
    shared: Callable[[str], bool] = lambda _trigger: False,
) -> tuple[str, ...]:
    """Products whose facts name an exact identifier found in `text`, most hits first.

    Only ASCII triggers of weight 3 count (env vars, config keys, CLI names, error
    sentences): a plain phrase says nothing about which product a question is about.
    A trigger spelled with capitals must appear with the same capitals (`maxSeqLen` is a
    MindIE key; "maxseqlen" in prose is not). An identifier that facts of three or more
    products share settles nothing, nor does one the caller knows every product meets
    (`shared`: the Ascend runtime's own errors).
    """
    if not text or not text.strip():
        return ()
    owners = _identifier_owners(load_product_facts() if facts is None else tuple(facts))
    lowered = text.lower()
    counts: dict[str, int] = {}
    for trigger, products in owners:
        found = _occurs(trigger, text) if trigger != trigger.lower() else _occurs(trigger, lowered)
        # `shared` is asked only about identifiers the text holds: it may be costly.
        if found and not shared(trigger):
            for product in products:
                counts[product] = counts.get(product, 0) + 1
    return tuple(sorted(counts, key=lambda p: (-counts[p], p)))


_OWNERS: dict[int, tuple[tuple[ProductFact, ...], tuple[tuple[str, frozenset[str]], ...]]] = {}


def _identifier_owners(pool: tuple[ProductFact, ...]) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each identifier trigger and the products whose facts name it (at most two), computed once per
    fact pool: the router asks for every message that names no product."""
    cached = _OWNERS.get(id(pool))
    if cached is not None and cached[0] is pool:
        return cached[1]
    owners: dict[str, set[str]] = {}
    for fact in pool:
        for trigger in fact.triggers:
            trigger = trigger.strip()
            if _settles_a_product(trigger):
                owners.setdefault(trigger, set()).update(fact.products)
    result = tuple((t, frozenset(p)) for t, p in owners.items() if len(p) <= 2)
    _OWNERS[id(pool)] = (pool, result)
    return result


# Names every stack uses: quantization and number formats (W8A8, FP8, bfloat16), model and release
# names (Wan2.1, DeepSeek-V2-Lite, Python 3.13, v0.7.3), sizes and addresses (64G, 4MB, 0.0.0.0).
_EVERY_STACK = re.compile(
    r"(?:[wW]\d{1,2}[aA]\d{1,2}(?:[a-zA-Z]\d{0,2})?(?:_[A-Z0-9]{1,10}){0,2}|(?:MX)?FP\d{1,2}|b?float\d{2}|NaN|KV C8"
    r"|[A-Za-z]{2}[A-Za-z ]{0,12}[\-. ]?[vV]?\d{1,3}(?:[.\-][\w.\-]{0,30})?|[vV]\d{1,3}(?:\.\d{1,4}){1,3}(?:-\w{1,10})?"
    r"|\d[\d.]{0,20}\s?[KMGT]?B?)"
)
# Names of the APIs every serving stack shares (the OpenAI chat API, Hugging Face configs, PyTorch,
# Python itself): a fact may quote them, but they never say which product a question is about.
_SHARED_API = frozenset({
    "response_format", "json_schema", "json_object", "image_url", "video_url", "audio_url", "input_audio",
    "chat_template", "tool_call_parser", "trust_remote_code", "torch_dtype", "max_model_len", "max_num_seqs",
    "gpu_memory_utilization", "enforce_eager", "max_position_embeddings", "generation_config.json",
    "huggingface_hub", "base64", "if __name__", "freeze_support", "torch.compile", "torch.distributed",
    "scaled_dot_product_attention", "set_device", "--gpu-memory-utilization", "--max-num-seqs",
    "--enforce-eager", "--generation-config", "--kv-cache-dtype", "--shm-size", "--privileged",
    "--privileged=true", "--network=host", "0.0.0.0",
})


def _settles_a_product(trigger: str) -> bool:
    # Hardware names (Atlas 300I Duo, 910B) run every product: they never say which one is meant;
    # neither do number formats, model names, versions or sizes.
    return (trigger.isascii() and trigger_weight(trigger) >= 3 and not find_chips(trigger)
            and _EVERY_STACK.fullmatch(trigger.strip()) is None and trigger.strip() not in _SHARED_API)
