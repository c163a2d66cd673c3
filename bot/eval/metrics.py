"""Pure metric functions: verdicts per question, and aggregates over a group of questions.

Every aggregate is None when no question in the group carries what it needs (no `expected_repos`,
no `lang`...), so a missing field never reads as a score of 0 or 1.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Action = Literal["answered", "clarified", "oos", "other"]
FactGrade = Literal["full", "partial", "missing"]

METRIC_KEYS: tuple[str, ...] = (
    "routing_accuracy",
    "clarify_precision",
    "clarify_recall",
    "clarify_f1",
    "oos_precision",
    "oos_recall",
    "language_accuracy",
    "evidence_recall_at_k",
    "answer_evidence_rate",
    "citation_validity",
    "facts_full",
    "facts_partial",
    "facts_missing",
    "wrong_statements",
    "latency_p50_ms",
    "latency_p95_ms",
    "n",
)


def routing_correct(expected: Sequence[str], action: Action, answered_repos: Sequence[str]) -> bool:
    """Answered with exactly the expected repositories, or a superset when several are expected
    (a comparison question may reasonably pull in a third repository; a single-repo question may not)."""
    if action != "answered":
        return False
    want = {r.lower() for r in expected}
    got = {r.lower() for r in answered_repos}
    return got == want if len(want) == 1 else want <= got


def ratio(hits: int, total: int) -> float | None:
    return None if total == 0 else hits / total


@dataclass(frozen=True)
class PrecisionRecall:
    precision: float | None
    recall: float | None

    @property
    def f1(self) -> float | None:
        if self.precision is None or self.recall is None:
            return None
        if self.precision + self.recall == 0:
            return 0.0
        return 2 * self.precision * self.recall / (self.precision + self.recall)


def precision_recall(pairs: Iterable[tuple[bool, bool]]) -> PrecisionRecall:
    """pairs of (expected, predicted)."""
    tp = fp = fn = 0
    for expected, predicted in pairs:
        tp += expected and predicted
        fp += predicted and not expected
        fn += expected and not predicted
    return PrecisionRecall(ratio(tp, tp + fp), ratio(tp, tp + fn))


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100): a value that was really observed."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass(frozen=True)
class JudgeVerdict:
    facts: tuple[FactGrade, ...]
    wrong: tuple[dict[str, str], ...] = ()
    usefulness: str = ""
    why: str = ""


@dataclass
class QuestionResult:
    """What one question produced; the metric verdicts are derived from it (see `verdicts`)."""

    id: str
    category: str
    question: str
    lang: str | None
    expected_repos: tuple[str, ...] | None
    needs_clarification: bool | None
    out_of_scope: bool | None
    evidence: tuple[str, ...] | None
    answer_facts: tuple[str, ...] | None
    action: Action = "other"
    reply_kind: str = ""
    reply_language: str = ""
    confidence: str = ""  # "high" | "medium" | "low" on an answer (core/confidence.py), else ""
    confidence_reason: str = ""  # what the level rests on ("resolution", "passages", "nothing"...)
    repos: tuple[str, ...] = ()
    text: str = ""
    sources: tuple[str, ...] = ()
    latency_ms: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    tool_calls: int = 0
    evidence_hit_at_k: bool | None = None  # None: no evidence or no index
    evidence_in_sources: bool | None = None
    links: list[dict[str, str]] = field(default_factory=list)
    judge: JudgeVerdict | None = None
    judge_error: str = ""
    error: str = ""

    # --- verdicts ---------------------------------------------------------------------------

    @property
    def expects_answer(self) -> bool:
        return not self.needs_clarification and not self.out_of_scope

    @property
    def routing_ok(self) -> bool | None:
        if not self.expected_repos or not self.expects_answer:
            return None
        return routing_correct(self.expected_repos, self.action, self.repos)

    @property
    def language_ok(self) -> bool | None:
        return None if self.lang is None or not self.reply_language else self.reply_language == self.lang

    def verdicts(self) -> dict[str, Any]:
        counts = {s: sum(1 for link in self.links if link["status"] == s) for s in ("valid", "failed", "unchecked")}
        return {
            "routing": self.routing_ok,
            "clarified": self.action == "clarified",
            "clarification_expected": self.needs_clarification,
            "oos": self.action == "oos",
            "oos_expected": self.out_of_scope,
            "language": self.language_ok,
            "evidence_hit_at_k": self.evidence_hit_at_k,
            "evidence_in_sources": self.evidence_in_sources,
            "links": counts,
            "facts": list(self.judge.facts) if self.judge else None,
            "wrong_statements": len(self.judge.wrong) if self.judge else None,
            "judge_error": self.judge_error or None,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "asked": {
                "question": self.question,
                "lang": self.lang,
                "expected_repos": list(self.expected_repos) if self.expected_repos is not None else None,
                "needs_clarification": self.needs_clarification,
                "out_of_scope": self.out_of_scope,
                "evidence": list(self.evidence) if self.evidence is not None else None,
                "answer_facts": list(self.answer_facts) if self.answer_facts is not None else None,
            },
            "bot": {
                "action": self.action,
                "kind": self.reply_kind,
                "language": self.reply_language,
                "confidence": self.confidence or None,
                "confidence_reason": self.confidence_reason or None,
                "repos": list(self.repos),
                "text": self.text,
                "sources": list(self.sources),
                "latency_ms": round(self.latency_ms, 1),
                "tokens": {"input": self.tokens_in, "output": self.tokens_out, "cached": self.tokens_cached},
                "tool_calls": self.tool_calls,
                "error": self.error or None,
            },
            "verdicts": self.verdicts(),
            "links": self.links,
            "judge": None
            if self.judge is None
            else {"facts": list(self.judge.facts), "wrong": list(self.judge.wrong), "usefulness": self.judge.usefulness, "why": self.judge.why},
        }


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def aggregate(results: Sequence[QuestionResult], *, judged: bool) -> dict[str, Any]:
    """The metric object of report.json for one group (overall or a category): exactly METRIC_KEYS."""
    routing = [r.routing_ok for r in results if r.routing_ok is not None]
    clarify = precision_recall(
        (bool(r.needs_clarification), r.action == "clarified") for r in results if r.needs_clarification is not None
    )
    oos = precision_recall((bool(r.out_of_scope), r.action == "oos") for r in results if r.out_of_scope is not None)
    language = [r.language_ok for r in results if r.language_ok is not None]
    recall = [r.evidence_hit_at_k for r in results if r.evidence_hit_at_k is not None]
    in_sources = [r.evidence_in_sources for r in results if r.evidence_in_sources is not None]
    valid = sum(1 for r in results for link in r.links if link["status"] == "valid")
    failed = sum(1 for r in results for link in r.links if link["status"] == "failed")
    grades = [g for r in results if r.judge is not None for g in r.judge.facts]
    latencies = [r.latency_ms for r in results]
    return {
        "routing_accuracy": ratio(sum(routing), len(routing)),
        "clarify_precision": clarify.precision,
        "clarify_recall": clarify.recall,
        "clarify_f1": clarify.f1,
        "oos_precision": oos.precision,
        "oos_recall": oos.recall,
        "language_accuracy": ratio(sum(language), len(language)),
        "evidence_recall_at_k": ratio(sum(recall), len(recall)),
        "answer_evidence_rate": ratio(sum(in_sources), len(in_sources)),
        "citation_validity": ratio(valid, valid + failed),
        "facts_full": ratio(grades.count("full"), len(grades)) if judged else None,
        "facts_partial": ratio(grades.count("partial"), len(grades)) if judged else None,
        "facts_missing": ratio(grades.count("missing"), len(grades)) if judged else None,
        "wrong_statements": sum(len(r.judge.wrong) for r in results if r.judge is not None) if judged else None,
        "latency_p50_ms": _round(percentile(latencies, 50)),
        "latency_p95_ms": _round(percentile(latencies, 95)),
        "n": len(results),
    }


def cost(results: Sequence[QuestionResult]) -> dict[str, Any]:
    """Model cost per answer (questions the bot answered) and tool calls per answer."""
    answered = [r for r in results if r.action == "answered"]
    return {
        "answers": len(answered),
        "tokens_in_per_answer": _round(_mean([r.tokens_in for r in answered])),
        "tokens_out_per_answer": _round(_mean([r.tokens_out for r in answered])),
        "tokens_cached_per_answer": _round(_mean([r.tokens_cached for r in answered])),
        "tool_calls_per_answer": _round(_mean([r.tool_calls for r in answered])),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
