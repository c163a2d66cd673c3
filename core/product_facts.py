"""Per-product facts: short, sourced answers for each of the nine products.

`core/knowledge/*.json` describes vllm-ascend in depth; this module adds what a
maintainer of *each* product would say to a frequent question (a setting and its
default, a limit, the fix for an error), so triage can answer a MindIE-Motor or
msModelSlim question with that product's own advice instead of vllm-ascend's.

Facts live in `core/knowledge/products/<product>.json` (one file per product,
see docs/knowledge.md). They are validated once at load: every product must be
a canonical repository of `repositories.json`, both languages present, texts
short, ids unique, and every `source` either an https URL or `owner/name:path`
of a known repository. When a directory of clones is given, a source path that
does not exist in its clone is rejected too (tests run that check against the
real clones; the bot itself must load without them).

Matching is plain substring search with word-boundary checks done by hand, so
its cost is linear in the text for each trigger and no regex can backtrack.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from core.signals import find_chips
from core.knowledge_base import KNOWLEDGE_DIR, Repository, _load_json, _parse_repositories, _resolve_source
from core.messages import Language, Source
from core.releases.ranges import NO_RANGE, Releases

PRODUCTS_DIR = KNOWLEDGE_DIR / "products"

KINDS = frozenset({"faq", "env_var", "error", "config", "howto", "feature", "limitation", "version"})
MAX_TEXT = 350
MAX_TITLE = 120

_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,63}$")
_HTTPS = re.compile(r"^https://[^\s]+$")
_REPO_PATH = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+):(?P<path>[^\s:]+)$")
# A literal example version in a command would be advice for someone else's
# setup (issue 12); commands carry placeholders like <vllm-version> instead.
_LITERAL_VERSION = re.compile(
    r"(?<![\w.<-])v?\d+\.\d+(?:\.\d+|\.rc\d+)(?:rc\d+)?(?:\.post\d+)?(?![\w.>])", re.IGNORECASE
)
_RELEASE = re.compile(r"^\d{1,3}\.\d{1,3}\.\d{1,4}(?:rc\d{1,3})?(?:\.post\d{1,3})?$")
# A lower bound ("pydantic>=2.10.1") is a requirement, not somebody's example version.
_LOWER_BOUND = re.compile(r"(?:>=|~=|>)\s*v?\d[\w.]*")


class ProductFactError(ValueError):
    """A product-fact file is missing, malformed or breaks the schema."""


@dataclass(frozen=True)
class ProductFact:
    id: str
    products: tuple[str, ...]  # canonical repo names from repositories.json
    kind: str
    triggers: tuple[str, ...]
    title_en: str
    title_zh: str
    text_en: str
    text_zh: str
    commands: tuple[str, ...]
    source: str  # https URL or owner/name:path
    releases: Releases = NO_RANGE  # vllm-ascend releases it holds on (core/releases/ranges.py writes them)

    def title(self, language: Language) -> str:
        return self.title_zh if language == "zh" else self.title_en

    def text(self, language: Language) -> str:
        return self.text_zh if language == "zh" else self.text_en

    def citation(self) -> Source:
        """The source as a citable link, resolved like every other knowledge-base fact."""
        return _resolve_source(self.source, _repositories())

    @property
    def source_url(self) -> str:
        return self.citation().url


# ------------------------------------------------------------------ loading


@lru_cache(maxsize=1)
def _repositories() -> dict[str, Repository]:
    # Only repositories.json is needed (names and doc branches), parsed and
    # validated by the knowledge base's own code; the other knowledge files are
    # not loaded so a problem there cannot take product facts down with it.
    return {r.repo: r for r in _parse_repositories(_load_json(KNOWLEDGE_DIR, "repositories.json"))}


def _fail(file: str, where: str, message: str) -> ProductFactError:
    return ProductFactError(f"{file}: {where}: {message}")


def _str(file: str, where: str, obj: dict[str, Any], key: str, limit: int) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _fail(file, where, f"field '{key}' must be a non-empty string")
    if len(value) > limit:
        raise _fail(file, where, f"field '{key}' has {len(value)} characters (at most {limit})")
    return value.strip()


def _strs(file: str, where: str, obj: dict[str, Any], key: str, *, required: bool) -> tuple[str, ...]:
    value = obj.get(key, None if required else [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(file, where, f"field '{key}' must be a list of non-empty strings")
    if required and not value:
        raise _fail(file, where, f"field '{key}' must not be empty")
    return tuple(v.strip() for v in value)


def _has_cjk(text: str) -> bool:
    return any("\u3400" <= ch <= "\u9fff" for ch in text)


def _check_source(file: str, where: str, ref: str, known: set[str], repos_dir: Path | None) -> None:
    if _HTTPS.match(ref):
        return
    m = _REPO_PATH.match(ref)
    if not m:
        raise _fail(file, where, f"source {ref!r} is neither an https URL nor 'owner/name:path'")
    repo, path = m.group("repo"), m.group("path")
    if repo not in known:
        raise _fail(file, where, f"source {ref!r} names a repository that is not in repositories.json")
    if path.startswith("/") or ".." in Path(path).parts:
        raise _fail(file, where, f"source {ref!r} leaves its repository")
    if repos_dir is not None:
        clone = repos_dir / repo
        if clone.is_dir() and not (clone / path).exists():
            raise _fail(file, where, f"source path {path!r} does not exist in the clone of {repo}")


def _name_key(text: str) -> str:
    # Spaces, '-' and '_' are interchangeable in names, as in repositories.json aliases.
    return " ".join(text.lower().replace("-", " ").replace("_", " ").split())


def _check_trigger(file: str, where: str, trigger: str, names: frozenset[str]) -> None:
    # Too short to mean anything on its own, or a product's name: the router uses
    # names to pick the product; a trigger must point at one fact of it.
    if len(trigger) < (3 if trigger.isascii() else 2):
        raise _fail(file, where, f"trigger {trigger!r} is too short")
    if _name_key(trigger) in names:
        raise _fail(file, where, f"trigger {trigger!r} is a product name; name what the fact is about")


@lru_cache(maxsize=1)
def _product_names() -> frozenset[str]:
    # The names themselves (key, owner/name, the repository's short name), not every
    # alias: aliases also hold CLI and module names, which are fine triggers.
    out: set[str] = set()
    for r in _repositories().values():
        out.update(_name_key(n) for n in (r.key, r.repo, r.repo.split("/", 1)[1], r.display_name))
    return frozenset(out)


def _parse_fact(file: str, index: int, entry: Any, known: set[str], repos_dir: Path | None) -> ProductFact:
    if not isinstance(entry, dict):
        raise _fail(file, f"entry #{index}", "expected an object")
    where = f"id={entry['id']!r}" if isinstance(entry.get("id"), str) else f"entry #{index}"
    fact_id = _str(file, where, entry, "id", 64)
    if not _ID.match(fact_id):
        raise _fail(file, where, "id must be lowercase ASCII letters, digits and '-'")
    names = _product_names()
    products = _strs(file, where, entry, "products", required=True)
    for p in products:
        if p not in known:
            raise _fail(file, where, f"unknown product {p!r} (use the repo name from repositories.json)")
    kind = _str(file, where, entry, "kind", 20)
    if kind not in KINDS:
        raise _fail(file, where, f"kind {kind!r} is not one of {sorted(KINDS)}")
    triggers = _strs(file, where, entry, "triggers", required=True)
    for t in triggers:
        _check_trigger(file, where, t, names)
    title_en = _str(file, where, entry, "title_en", MAX_TITLE)
    title_zh = _str(file, where, entry, "title_zh", MAX_TITLE)
    text_en = _str(file, where, entry, "text_en", MAX_TEXT)
    text_zh = _str(file, where, entry, "text_zh", MAX_TEXT)
    if not _has_cjk(text_zh):
        raise _fail(file, where, "text_zh must be written in Chinese")
    commands = _strs(file, where, entry, "commands", required=False)
    for c in commands:
        if _LITERAL_VERSION.search(_LOWER_BOUND.sub("", c)):
            raise _fail(file, where, f"command {c!r} holds a literal version; use a placeholder like <vllm-version>")
    source = _str(file, where, entry, "source", 300)
    _check_source(file, where, source, known, repos_dir)
    bounds = {k: entry[k] for k in ("since", "until") if k in entry}
    not_in = _strs(file, where, entry, "not_in", required=False)
    for value in (*bounds.values(), *not_in):
        if not isinstance(value, str) or not _RELEASE.match(value):
            raise _fail(file, where, f"release {value!r} is not like X.Y.Z[rcN][.postN] (no leading 'v')")
    return ProductFact(
        id=fact_id,
        products=products,
        kind=kind,
        triggers=triggers,
        title_en=title_en,
        title_zh=title_zh,
        text_en=text_en,
        text_zh=text_zh,
        commands=commands,
        source=source,
        releases=Releases(bounds.get("since"), bounds.get("until"), not_in),
    )


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ProductFactError(f"{path.name}: not valid JSON: {exc}") from None


def _build(directory: Path, repos_dir: Path | None) -> tuple[ProductFact, ...]:
    if not directory.is_dir():
        raise ProductFactError(f"product facts directory not found: {directory}")
    known = set(_repositories())
    files = sorted(directory.glob("*.json"))
    if not files:
        raise ProductFactError(f"no product fact files in {directory}")
    facts: list[ProductFact] = []
    seen: dict[str, str] = {}
    for path in files:
        data = _read(path)
        if not isinstance(data, dict) or not isinstance(data.get("facts"), list) or not data["facts"]:
            raise ProductFactError(f"{path.name}: top level must be an object with a non-empty 'facts' list")
        for i, entry in enumerate(data["facts"]):
            fact = _parse_fact(path.name, i, entry, known, repos_dir)
            if fact.id in seen:
                raise ProductFactError(f"{path.name}: duplicate id {fact.id!r} (first in {seen[fact.id]})")
            seen[fact.id] = path.name
            facts.append(fact)
    return tuple(facts)


@lru_cache(maxsize=8)
def _cached(directory: str, repos_dir: str | None) -> tuple[ProductFact, ...]:
    return _build(Path(directory), Path(repos_dir) if repos_dir else None)


def load_product_facts(directory: Path | str | None = None, repos_dir: Path | str | None = None) -> tuple[ProductFact, ...]:
    """Load and validate every product fact once per (directory, repos_dir); cached.

    `repos_dir` (a REPOS_DIR with clones at <owner>/<name>) makes a source path
    missing from its clone an error; repositories without a clone are not checked.
    Raises ProductFactError naming the file and the fact at fault.
    """
    target = Path(directory) if directory is not None else PRODUCTS_DIR
    clones = str(Path(repos_dir).resolve()) if repos_dir is not None else None
    return _cached(str(target.resolve()), clones)


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
