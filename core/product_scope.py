"""Which advice belongs to which product: the one place the per-product markers are derived.

Every command, env var and product-specific rule in the knowledge base names the
products it applies to. A *marker* is a short string that identifies such advice
in an answer: a command's program and sub-command (`vllm serve`), its flags
(`--enforce-eager`, `--quantization ascend`), an exported variable (`VLLM_VERSION=`),
an env var name, or a phrase an entry declares in `markers`.

`forbidden_markers(repos)` is what must never appear in an answer about `repos`:
the markers of entries that apply to none of them, minus any marker that an entry
for one of them also uses (a command shared by two products is fine for both).
Tests and bench/triage_facts.py use it; triage itself filters entries by product
and never needs it.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from core.knowledge.base import KnowledgeBase
from core.knowledge.loader import load_knowledge_base
from core.knowledge.schema import Command, Note

# Programs whose first two words name product-specific tooling (shell built-ins and
# generic tools such as pip, export or source carry no product on their own).
_PROGRAMS = frozenset({"vllm", "npu-smi", "hccn_tool", "msmodelslim", "sglang"})
_TEXT_INVOCATIONS = ("vllm serve", "npu-smi info", "collect_env.py")
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]{1,40}(?:[ =](?![<'\"{-])[a-z0-9_.]{1,20}(?![\w<]))?")
_ASSIGN = re.compile(r"(?<![\w])([A-Z][A-Z0-9_]{2,60})=")


@dataclass(frozen=True)
class Scoped:
    """One piece of advice's markers and the products it applies to."""

    products: frozenset[str]
    markers: frozenset[str]


def command_markers(run: str) -> frozenset[str]:
    out: set[str] = set()
    words = run.split()
    if len(words) >= 2 and words[0] in _PROGRAMS:
        out.add(f"{words[0]} {words[1]}")
    if "collect_env.py" in run:
        out.add("collect_env.py")
    for m in _FLAG.finditer(run):
        out.add(m.group(0).replace("=", " "))
    for m in _ASSIGN.finditer(run):
        out.add(f"{m.group(1)}=")
    return frozenset(out)


def text_markers(text: str) -> frozenset[str]:
    """Markers that prose can carry: flags, `NAME=` settings and product CLI invocations."""
    out: set[str] = set()
    low = text.lower()
    # Prose names many programs in passing ("vLLM and ..."); only real sub-command invocations count.
    for invocation in _TEXT_INVOCATIONS:
        if _contains(low, invocation):
            out.add(invocation)
    for m in _FLAG.finditer(text):
        out.add(m.group(0).split(" ")[0].split("=")[0])
    for m in _ASSIGN.finditer(text):
        out.add(f"{m.group(1)}=")
    return frozenset(out)


def _scoped_commands(commands: Iterable[Command]) -> list[Scoped]:
    return [Scoped(frozenset(c.products), command_markers(c.run)) for c in commands]


def _scoped_notes(notes: Iterable[Note]) -> list[Scoped]:
    return [Scoped(frozenset(n.products), text_markers(n.text.en) | text_markers(n.text.zh)) for n in notes]


def scoped_advice(kb: KnowledgeBase, extra: Sequence[Scoped] = ()) -> tuple[Scoped, ...]:
    """Every product-scoped marker source in the knowledge base (plus `extra`, e.g. product facts)."""
    out: list[Scoped] = []
    for p in kb.patterns:
        out += _scoped_commands(p.commands) + _scoped_notes(p.steps) + _scoped_notes(p.causes)
        if p.markers:
            out.append(Scoped(frozenset(p.products), frozenset(p.markers)))
    for c in kb.error_codes:
        out += _scoped_commands(c.commands) + _scoped_notes(c.steps)
    for item in kb.checklist:
        texts = text_markers(item.body.en) | text_markers(item.body.zh)
        out += _scoped_commands(item.commands) + [Scoped(frozenset(item.products), texts | frozenset(item.markers))]
    for i in kb.incompatibilities:
        texts = text_markers(i.workaround.en) | text_markers(i.explanation.en)
        out.append(Scoped(frozenset(i.products), texts))
    for v in kb.env_vars:
        out.append(Scoped(frozenset(v.products), frozenset({v.name})))
    out.append(Scoped(frozenset(kb.collect_env.products), frozenset({"collect_env.py"})))
    out += list(extra)
    return tuple(s for s in out if s.markers)


def product_fact_advice() -> tuple[Scoped, ...]:
    """Markers of the per-product facts (core/knowledge/products/*.json), when they load."""
    try:
        from core.knowledge.loader import load_product_facts  # noqa: PLC0415 - optional knowledge
    except ImportError:
        return ()
    try:
        facts = load_product_facts()
    except Exception:  # noqa: BLE001 - a broken fact file must not break scoping
        return ()
    out = []
    for f in facts:
        markers: set[str] = set(text_markers(f.text.en) | text_markers(f.text.zh))
        for run in f.commands:
            markers |= command_markers(run)
        if markers:
            out.append(Scoped(frozenset(f.products), frozenset(markers)))
    return tuple(out)


@lru_cache(maxsize=64)
def _forbidden(kb: KnowledgeBase, repos: frozenset[str]) -> frozenset[str]:
    advice = scoped_advice(kb, product_fact_advice())
    allowed: set[str] = set()
    others: set[str] = set()
    for s in advice:
        (allowed if s.products & repos else others).update(s.markers)
    return frozenset(others - allowed)


def forbidden_markers(repos: Sequence[str], kb: KnowledgeBase | None = None) -> frozenset[str]:
    """Markers of advice for products outside `repos` that no advice for `repos` shares."""
    return _forbidden(kb or load_knowledge_base(), frozenset(repos))


def leaked_markers(answer: str, repos: Sequence[str], kb: KnowledgeBase | None = None) -> list[str]:
    """The forbidden markers an answer contains (case-insensitive), sorted."""
    low = answer.lower()
    return sorted(m for m in forbidden_markers(repos, kb) if _contains(low, m.lower()))


def _contains(low: str, marker: str) -> bool:
    # `--dtype float16` must not be found inside `--dtype float16x`; flags and names end at a
    # non-identifier character.
    start = low.find(marker)
    while start != -1:
        end = start + len(marker)
        before = low[start - 1] if start else " "
        after = low[end] if end < len(low) else " "
        left_ok = not (marker[0].isalnum() or marker[0] == "_") or not (before.isalnum() or before == "_")
        right_ok = marker[-1] in "= " or not (after.isalnum() or after in "_-")
        if left_ok and right_ok:
            return True
        start = low.find(marker, start + 1)
    return False
