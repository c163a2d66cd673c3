"""Evidence recall@k of the knowledge index, through the same retriever the bot's answers use."""
from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from bot.eval.links import RepoBases, evidence_keys, passage_keys
from core.index.passage import Passage, Retriever

log = logging.getLogger(__name__)


def open_retriever(settings: Any) -> tuple[Retriever | None, str]:
    """(retriever, "") when an index can be searched, else (None, one line saying why)."""
    try:
        from bot import wiring  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - bot.wiring is part of this package
        return None, f"wiring unavailable ({exc})"
    build = getattr(wiring, "build_retriever", None)
    if build is None:
        return None, "no knowledge index in this build (bot.wiring has no build_retriever)"
    try:
        retriever = build(settings)
    except Exception as exc:  # noqa: BLE001 - a broken index must not stop the other metrics
        log.warning("could not open the knowledge index: %s", exc)
        return None, f"knowledge index could not be opened: {type(exc).__name__}: {exc}"
    if retriever is None:
        return None, "no knowledge index built (run `python -m bot index`)"
    return retriever, ""


def evidence_hit(passages: Sequence[Passage], evidence: Sequence[str], bases: RepoBases) -> bool:
    """True when a passage is one of the evidence items (file by repo + path, or URL)."""
    wanted = evidence_keys(evidence, bases)
    return any(passage_keys(p.repo, p.path, p.url, bases) & wanted for p in passages)


def search_evidence(
    retriever: Retriever, question: str, repos: Sequence[str], evidence: Sequence[str], k: int, bases: RepoBases
) -> bool:
    return evidence_hit(retriever.search(question, tuple(repos), k), evidence, bases)
